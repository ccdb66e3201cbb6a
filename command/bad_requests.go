package command

import (
	"context"

	"github.com/rxhystrix/rxhystrix/observable"
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
// decided before it is asked. It panics if isBad is nil.
func (c *Command[In, Out]) WithBadRequests(isBad func(err error) bool) *Command[In, Out] {
	mustFunc(c.k.key, "WithBadRequests", isBad == nil)
	d := c.derive()
	d.isBad = eitherBad(d.isBad, isBad)
	run := d.run
	d.run = func(ctx context.Context, in In) (Out, error) {
		v, err := run(ctx, in)
		return v, badRequestIf(isBad, err)
	}
	return d
}

// WithBadRequests returns a copy of c for which every error of its
// Observable that isBad reports true for is a bad request, as
// [Command.WithBadRequests] says.
func (c *ObservableCommand[In, Out]) WithBadRequests(isBad func(err error) bool) *ObservableCommand[In, Out] {
	mustFunc(c.k.key, "WithBadRequests", isBad == nil)
	d := c.derive()
	d.isBad = eitherBad(d.isBad, isBad)
	construct := d.construct
	d.construct = func(ctx context.Context, in In) observable.Observable[Out] {
		return construct(ctx, in).OnErrorResumeNext(func(err error) observable.Observable[Out] {
			return observable.Error[Out](badRequestIf(isBad, err))
		})
	}
	return d
}

// badRequestIf returns err as a bad request when isBad, if not nil, says
// it is one.
func badRequestIf(isBad func(error) bool, err error) error {
	if err == nil || isBad == nil || IsBadRequest(err) || !isBad(err) {
		return err
	}
	return BadRequest(err)
}

// eitherBad picks the errors that either picks; before may be nil.
func eitherBad(before, isBad func(error) bool) func(error) bool {
	if before == nil {
		return isBad
	}
	return func(err error) bool { return before(err) || isBad(err) }
}
