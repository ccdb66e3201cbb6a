package command

import (
	"context"
	"errors"
)

// WithBadRequests returns a copy of c for which every error of run that
// isBad reports true for is a bad request, as if run had returned
// BadRequest(err): it gets no fallback, does not count against the
// breaker or its health, and is recorded BAD_REQUEST. It is for the
// errors that the functions run calls return as they are, and that say
// the request was wrong rather than the dependency (sql.ErrNoRows, a
// validation error, a 404), as resilience4j's ignoreExceptions, gobreaker's
// IsSuccessful and failsafe-go's error handling choose which errors a
// breaker counts. An error run wraps with BadRequest itself stays one, and
// an error injected in run's place (Config.Faults) is picked as run's.
//
// isBad is called with each error run returns, on the goroutine that ran
// it, and must be safe for concurrent use. A timeout or a cancellation is
// decided before it is asked, and a panic of run's (*PanicError) is never
// a bad request; a panic of isBad's fails the execution as a panic of
// run's does. It panics if isBad is nil.
func (c *Command[In, Out]) WithBadRequests(isBad func(err error) bool) *Command[In, Out] {
	mustFunc(c.k.key, "WithBadRequests", isBad == nil)
	d := c.derive()
	d.isBad = eitherBad(d.isBad, isBad)
	return d
}

// WithBadRequests returns a copy of c for which every error of its
// Observable that isBad reports true for is a bad request, as
// [Command.WithBadRequests] says.
func (c *ObservableCommand[In, Out]) WithBadRequests(isBad func(err error) bool) *ObservableCommand[In, Out] {
	mustFunc(c.k.key, "WithBadRequests", isBad == nil)
	d := c.derive()
	d.isBad = eitherBad(d.isBad, isBad)
	return d
}

// judge returns err, an error of the user's code that ran under ctx or
// one injected in its place (Config.Faults), as a bad request when the
// command's WithBadRequests picks it. It is the one place the predicate
// is applied: callUser and body call it, so that run and construct are
// called as the user gave them. A panic is never a bad request; nor is
// ctx's own error once it has ended (or one wrapping it), a timeout's or
// a cancellation's, which classify decides without asking the predicate,
// as WithBadRequests says.
func (c *core[In, Out]) judge(ctx context.Context, err error) error {
	if err == nil || c.isBad == nil || IsBadRequest(err) {
		return err
	}
	if _, panicked := err.(*PanicError); panicked {
		return err
	}
	if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
		return err
	}
	bad, panicErr := c.picks(err)
	switch {
	case panicErr != nil:
		return panicErr
	case bad:
		return BadRequest(err)
	}
	return err
}

// picks reports whether the command's WithBadRequests predicate picks
// err. A panic of the predicate is the execution's failure, a
// *PanicError, as one of run's is: it must not escape the frame that
// holds the execution's permit, nor end a pool's worker.
func (c *core[In, Out]) picks(err error) (bad bool, panicErr error) {
	defer func() {
		if p := recover(); p != nil {
			panicErr = newPanicError(p)
		}
	}()
	return c.isBad(err), nil
}

// eitherBad picks the errors that either picks; before may be nil.
func eitherBad(before, isBad func(error) bool) func(error) bool {
	if before == nil {
		return isBad
	}
	return func(err error) bool { return before(err) || isBad(err) }
}
