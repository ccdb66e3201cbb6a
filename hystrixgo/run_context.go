package hystrix

import (
	"context"
	"time"
)

// runContext is the context GoC's and DoC's run is given. hystrix-go
// gives run the caller's context, which lives on after run returns: a run
// that returns an *http.Response made with it leaves the body to be read
// after DoC returns. rxhystrix ends run's context at the timeout and when
// the caller leaves, which this package keeps, but also once run has
// returned, which would break that body. So a runContext ends with run's
// context only while run runs.
type runContext struct {
	context.Context                 // ended when run's ends before run returns
	run             context.Context // run's context: its deadline and its error
}

// Deadline is run's context's: the timeout's or the caller's, the
// earlier.
func (c runContext) Deadline() (time.Time, bool) { return c.run.Deadline() }

// Err is run's context's error once c has ended (context.DeadlineExceeded
// at the caller's deadline, say), and nil before.
func (c runContext) Err() error {
	if c.Context.Err() == nil {
		return nil
	}
	return c.run.Err()
}

// runContextOf returns the context to give run for run's context ctx, and
// the function to call as run returns, after which the context no longer
// ends with ctx. Its values are ctx's.
func runContextOf(ctx context.Context) (context.Context, func() bool) {
	c, cancel := context.WithCancel(context.WithoutCancel(ctx))
	return runContext{c, ctx}, context.AfterFunc(ctx, cancel)
}
