package command

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// batcher collects the requests of one scope of a collapser (one request
// context, or every caller) into batches, as Hystrix's RequestCollapser:
// one batch collects at a time; it starts when its window closes, when it
// is full, or never if every request left it.
type batcher[In, Out any] struct {
	c  *Collapser[In, Out]
	rc *requestContext // nil for GlobalScope

	mu      sync.Mutex
	pending *batch[In, Out] // the batch collecting requests, or nil
	closed  bool            // the request scope ended
}

// batch is one batch of requests, in arrival order.
type batch[In, Out any] struct {
	b        *batcher[In, Out]
	requests []*collapsedRequest[In, Out]
	joiners  []joiner[In, Out]                  // callers of a request after its first, for BatchOf
	byKey    map[any]*collapsedRequest[In, Out] // nil when arguments have no key
	timer    clock.Timer                        // closes the window
	unwatch  func() bool                        // stops watching the end of the request scope

	// Set when the batch starts.
	started bool
	live    int // requests some caller still waits for
	ctx     context.Context
	cancel  context.CancelFunc
	info    *Batch // made when BatchOf first asks for it
	// collapsed is the batch as the batch command's executions serve and
	// count it.
	collapsed collapsedBatch
}

// joiner is a caller of a request of a batch that joined it before the
// batch started: the request's first caller is the request's.
type joiner[In, Out any] struct {
	r   *collapsedRequest[In, Out]
	ctx context.Context
}

// collapsedRequest is one place in a batch: an argument and the result of
// every caller that asked for it.
type collapsedRequest[In, Out any] struct {
	b   *batcher[In, Out]
	arg In
	key any
	res *pendingResult[Out]

	// Guarded by b.mu.
	batch *batch[In, Out]
	// logs are the request logs of the callers that asked for the request
	// before its batch started, for a GlobalScope batch (the batch of a
	// RequestScope collapser logs into its scope's).
	logs      []*RequestLog
	caller    context.Context // of the first caller, for BatchOf
	waiters   int             // callers that have neither received the result nor left
	abandoned bool            // every caller left before the result: it serves nobody any more
	holders   int             // callers that received the result and did not give it back (release)
	discarded bool            // the result was handed to the collapser's discard
}

// submit adds in, of cache key ck (see argumentKey), to the collecting
// batch, opening one if none is, and starts the batch when it is full. rc
// is the caller's request context, if any, and ctx its context.
func (b *batcher[In, Out]) submit(ctx context.Context, in In, ck string, rc *requestContext) (*collapsedRequest[In, Out], error) {
	c := b.c
	key, keyed := c.argumentKey(in, ck)
	r := &collapsedRequest[In, Out]{b: b, arg: in, key: key, waiters: 1, res: newPendingResult[Out]()}
	r.caller = ctx
	b.mu.Lock()
	if b.closed || (b.rc != nil && b.rc.ended()) {
		b.mu.Unlock()
		return nil, c.scopeEnded()
	}
	bt := b.pending
	if bt == nil {
		bt = b.openLocked()
	}
	if keyed {
		if same, ok := bt.byKey[key]; ok {
			if c.cfg.RequestCacheDisabled {
				b.mu.Unlock()
				return nil, c.duplicate(in)
			}
			same.waiters++
			bt.joiners = append(bt.joiners, joiner[In, Out]{same, ctx})
			b.addLogLocked(same, rc)
			b.mu.Unlock()
			return same, nil
		}
	}
	r.batch = bt
	b.addLogLocked(r, rc)
	bt.requests = append(bt.requests, r)
	if keyed {
		bt.byKey[key] = r
	}
	full := c.cfg.MaxRequestsInBatch > 0 && len(bt.requests) >= c.cfg.MaxRequestsInBatch
	if full {
		b.startLocked(bt)
	}
	b.mu.Unlock()
	if full {
		go b.execute(bt)
	}
	return r, nil
}

// openLocked opens a new collecting batch: its window closes after the
// collapser's Delay, and for a request scope it ends with the scope.
func (b *batcher[In, Out]) openLocked() *batch[In, Out] {
	bt := &batch[In, Out]{b: b}
	if b.c.cacheKey != nil || b.c.comparable {
		bt.byKey = make(map[any]*collapsedRequest[In, Out])
	}
	bt.timer = b.c.clock.AfterFunc(b.c.cfg.Delay, func() { b.windowClosed(bt) })
	if b.rc != nil {
		bt.unwatch = context.AfterFunc(b.rc.ctx, b.scopeEnded)
	}
	b.pending = bt
	return bt
}

// startLocked starts bt: it stops collecting, and its context is made.
// The context of a request-scoped batch carries the request context and
// ends with it; a global batch's carries nothing.
func (b *batcher[In, Out]) startLocked(bt *batch[In, Out]) {
	bt.started = true
	if b.pending == bt {
		b.pending = nil
	}
	bt.timer.Stop()
	if bt.unwatch != nil {
		bt.unwatch()
	}
	bt.live = len(bt.requests)
	parent := context.Background()
	if b.rc != nil {
		parent = b.rc.ctx
	}
	bt.ctx, bt.cancel = context.WithCancel(parent)
}

// windowClosed starts bt when its window closes, on the timer's
// goroutine. A batch whose request scope has ended fails as scopeEnded
// fails it, whichever of the two gets here first: it does not run, and
// is not counted as a batch.
func (b *batcher[In, Out]) windowClosed(bt *batch[In, Out]) {
	b.mu.Lock()
	if bt.started {
		b.mu.Unlock()
		return
	}
	if b.rc != nil && b.rc.ended() {
		b.mu.Unlock()
		b.scopeEnded()
		return
	}
	b.startLocked(bt)
	b.mu.Unlock()
	b.execute(bt)
}

// scopeEnded fails the requests of the collecting batch when the request
// scope ends, and refuses later ones.
func (b *batcher[In, Out]) scopeEnded() {
	b.mu.Lock()
	b.closed = true
	bt := b.pending
	if bt == nil || bt.started {
		b.mu.Unlock()
		return
	}
	b.startLocked(bt)
	bt.cancel()
	b.failUnrunUnlock(bt.requests, b.c.scopeEnded())
}

// failUnrunUnlock releases b.mu, and fails with err the requests of a
// started batch that does not run; they are abandoned first, under b.mu,
// so that the request cache does not serve their entries.
func (b *batcher[In, Out]) failUnrunUnlock(requests []*collapsedRequest[In, Out], err error) {
	for _, r := range requests {
		r.abandoned = true
	}
	b.mu.Unlock()
	var zero Out
	for _, r := range requests {
		r.res.resolve(zero, err)
	}
}

// execute runs a started batch as the collapser's batch command and hands
// each request its result.
func (b *batcher[In, Out]) execute(bt *batch[In, Out]) {
	c := b.c
	defer bt.cancel()
	b.mu.Lock()
	requests := bt.requests
	if err := bt.ctx.Err(); err != nil {
		// A batch that started full runs on a goroutine of its own: its
		// request scope may have ended, or every caller left, before it
		// gets here. It then does not run, and is not counted, as
		// windowClosed and scopeEnded leave a batch whose scope ended.
		if b.rc != nil && b.rc.ended() {
			err = c.scopeEnded()
		}
		b.failUnrunUnlock(requests, err)
		return
	}
	b.mu.Unlock()
	if len(requests) == 0 {
		return
	}
	args := make([]In, len(requests))
	for i, r := range requests {
		args[i] = r.arg
	}
	// The batch is made for BatchOf only when asked: most batch functions
	// and registries without a tracer never do (BenchmarkCollapser1000Callers,
	// B/op and allocs/op).
	ctx := context.WithValue(bt.ctx, batchKey{}, batchSource(bt))
	bt.collapsed = collapsedBatch{requests: len(requests), metrics: c.metrics}
	outs, err := c.cmd.callBatch(ctx, args, &bt.collapsed, b.logger(requests))
	if err == nil && len(outs) != len(requests) {
		err = fmt.Errorf("%w: %d results for %d requests", ErrBatchResultCount, len(outs), len(requests))
		if c.discard != nil {
			for _, v := range outs { // none can be a request's: released before they fail
				c.discard(v)
			}
		}
	}
	if err != nil {
		if b.rc != nil && b.rc.ended() && bt.ctx.Err() != nil {
			err = c.scopeEnded()
		}
		err = &BatchError{Collapser: c.key, Size: len(requests), Err: err}
	}
	b.mu.Lock()
	if bt.live == 0 {
		for _, r := range requests {
			r.abandoned = true // cancelled for lack of callers: do not serve it from the cache
		}
	}
	b.mu.Unlock()
	var zero Out
	for i, r := range requests {
		if err != nil {
			r.res.resolve(zero, err)
		} else {
			r.res.resolve(outs[i], nil)
		}
	}
	if c.discard == nil || err != nil {
		return
	}
	// The results whose every caller left before they came.
	for _, r := range requests {
		b.mu.Lock()
		b.discardOrphanUnlock(r)
	}
}

// batch returns the Batch of bt, a started batch, for BatchOf: made the
// first time it is asked for.
func (bt *batch[In, Out]) batch() *Batch {
	b := bt.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if bt.info != nil {
		return bt.info
	}
	info := &Batch{Collapser: b.c.key, Command: b.c.cmd.k.key, Callers: make([]BatchCaller, 0, len(bt.requests)+len(bt.joiners))}
	arg := make(map[*collapsedRequest[In, Out]]int, len(bt.requests))
	for i, r := range bt.requests {
		info.Callers = append(info.Callers, BatchCaller{i, r.caller})
		arg[r] = i
	}
	for _, j := range bt.joiners {
		if i, ok := arg[j.r]; ok { // not a request that left
			info.Callers = append(info.Callers, BatchCaller{i, j.ctx})
		}
	}
	slices.SortStableFunc(info.Callers, func(x, y BatchCaller) int { return cmp.Compare(x.Arg, y.Arg) })
	bt.info = info
	return info
}

// take is a caller of r receiving its result, which is set.
func (b *batcher[In, Out]) take(r *collapsedRequest[In, Out]) (Out, error) {
	b.mu.Lock()
	r.waiters--
	r.holders++
	b.mu.Unlock()
	return r.res.result()
}

// release is a caller that received r's result giving it back unused:
// an operator between it and its subscriber dropped it. The result is
// discarded once nobody else holds it or waits for it.
func (b *batcher[In, Out]) release(r *collapsedRequest[In, Out]) {
	b.mu.Lock()
	r.holders--
	b.discardOrphanUnlock(r)
}

// discardOrphanUnlock releases b.mu, and hands r's result, which is set,
// to the collapser's discard if it has nowhere to go: no caller waits for
// it or holds it, it is not an error, and it was not discarded before.
// The result is then out of the request cache's reach.
func (b *batcher[In, Out]) discardOrphanUnlock(r *collapsedRequest[In, Out]) {
	orphan := r.waiters == 0 && r.holders == 0 && !r.discarded && b.c.discard != nil
	if orphan {
		r.abandoned, r.discarded = true, true
	}
	b.mu.Unlock()
	if !orphan {
		return
	}
	if v, err := r.res.result(); err == nil {
		b.c.discard(v)
	}
}

// logger returns what logs the batch command's execution: the request
// log of the scope, or those of every request context with a request in
// a global batch.
func (b *batcher[In, Out]) logger(requests []*collapsedRequest[In, Out]) executionRecorder {
	if b.rc != nil {
		if log := b.rc.logFor(b.c.cmd.k); log != nil {
			return batchRecorder{b.c.key, log}
		}
		return nil
	}
	var logs requestLogs
	for _, r := range requests {
		for _, log := range r.logs {
			if !slices.Contains(logs, log) {
				logs = append(logs, log)
			}
		}
	}
	if len(logs) == 0 {
		return nil
	}
	return batchRecorder{b.c.key, logs}
}

// batchRecorder logs a batch command's execution with its collapser key.
type batchRecorder struct {
	collapser string
	to        executionRecorder
}

func (r batchRecorder) recordExecution(e Execution) {
	e.Collapser = r.collapser
	r.to.recordExecution(e)
}

// join counts one more caller of r, whose context is ctx, unless r
// serves nobody any more.
func (b *batcher[In, Out]) join(ctx context.Context, r *collapsedRequest[In, Out]) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if r.abandoned {
		return false
	}
	r.waiters++
	if bt := r.batch; !bt.started {
		bt.joiners = append(bt.joiners, joiner[In, Out]{r, ctx})
		b.addLogLocked(r, requestContextOf(ctx))
	}
	return true
}

// addLogLocked adds the request log of rc, a caller's request context,
// to those of r, a request of a batch that has not started, when the
// batcher is GlobalScope's: the batch is logged in every request context
// with a request in it.
func (b *batcher[In, Out]) addLogLocked(r *collapsedRequest[In, Out], rc *requestContext) {
	if b.rc != nil {
		return
	}
	if log := rc.logFor(b.c.cmd.k); log != nil && !slices.Contains(r.logs, log) {
		r.logs = append(r.logs, log)
	}
}

// leave is a caller of r going away without its result. The last caller
// of a request takes it out of a batch that has not started; the last
// caller of a started batch cancels it; the last caller of a result that
// has come leaves it to the collapser's discard.
func (b *batcher[In, Out]) leave(r *collapsedRequest[In, Out]) {
	b.mu.Lock()
	r.waiters--
	if r.waiters > 0 {
		b.mu.Unlock()
		return
	}
	if r.res.isResolved() {
		// The last caller left as the result came: discarded here, or
		// by execute if it has not looked yet (it looks after resolving).
		b.discardOrphanUnlock(r)
		return
	}
	r.abandoned = true
	bt := r.batch
	var cancel context.CancelFunc
	if !bt.started {
		bt.requests = slices.DeleteFunc(bt.requests, func(x *collapsedRequest[In, Out]) bool { return x == r })
		if bt.byKey != nil && bt.byKey[r.key] == r {
			delete(bt.byKey, r.key)
		}
	} else if bt.live--; bt.live == 0 {
		cancel = bt.cancel
	}
	b.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// callBatch executes the batch command with the arguments of b's requests
// in, making the retries and hedges of its key's Config as any call of
// the Command does: each attempt is an execution of the whole batch,
// which records the requests it carries (COLLAPSED).
func (c *Command[In, Out]) callBatch(ctx context.Context, in In, b *collapsedBatch, rec executionRecorder) (Out, error) {
	cfg := c.k.config.Load()
	if !cfg.makesAttempts() {
		return c.call(ctx, in, b, rec, nil)
	}
	a := new(attempts[In, Out])
	s := a.compose(&single[In, Out]{c: &c.core, ctx: ctx, in: in, rec: rec}, cfg)
	a.collapsed = b
	return s.Call(ctx)
}
