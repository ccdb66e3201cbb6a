package command

import "context"

// Batch is what the executions of a collapser's batch command carry in
// their context: the callers of the batch's requests, so that a Tracer
// can link the batch's trace to each caller's (package oteltrace does),
// and the batch function can read what their contexts hold. [BatchOf]
// finds it.
type Batch struct {
	// Collapser is the collapser's key, and Command its batch command's
	// (CollapserConfig.BatchCommandKey).
	Collapser, Command string
	// Callers are the callers that asked for the batch's requests
	// before it started, in the order of the batch's arguments; an
	// argument that several callers asked for has each of them. A
	// request whose every caller left before the batch started is not in
	// the batch, so neither are its callers; one that the request cache
	// served after the batch had started is not a caller of the batch.
	Callers []BatchCaller
}

// BatchCaller is a caller of a request in a collapser's batch.
type BatchCaller struct {
	// Arg is the index of the caller's argument in the batch.
	Arg int
	// Context is the context the caller gave Execute, Queue, Observe or
	// ToObservable.
	Context context.Context
}

type batchKey struct{}

// batchSource is what a batch command's context holds under batchKey: the
// batch, whose Batch is made when BatchOf first asks for it.
type batchSource interface{ batch() *Batch }

// BatchOf returns the Batch that ctx carries, and false if it carries
// none. The contexts of a batch command's execution carry its batch:
// the context its Tracer's Begin is given, and those of its run and its
// fallback, and so every context made from them, those of the commands
// the batch function executes too. A Tracer that links only the batch
// command's own trace compares the key it is given with Batch.Command.
func BatchOf(ctx context.Context) (*Batch, bool) {
	src, ok := ctx.Value(batchKey{}).(batchSource)
	if !ok {
		return nil, false
	}
	return src.batch(), true
}
