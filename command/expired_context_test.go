package command

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// expiringContext is a caller's context whose deadline passes when the
// test says, with no wait on the real clock.
type expiringContext struct {
	context.Context
	done    chan struct{}
	expired atomic.Bool
	once    sync.Once
}

func newExpiringContext() *expiringContext {
	return &expiringContext{Context: context.Background(), done: make(chan struct{})}
}

func (c *expiringContext) Done() <-chan struct{} { return c.done }

func (c *expiringContext) Err() error {
	if c.expired.Load() {
		return context.DeadlineExceeded
	}
	return nil
}

// expire makes the deadline pass.
func (c *expiringContext) expire() {
	c.once.Do(func() {
		c.expired.Store(true)
		close(c.done)
	})
}

// A caller whose context's deadline passes while the run is in progress
// gets that context's error, context.DeadlineExceeded and not
// context.Canceled, in every mode and isolation, and the execution is
// CANCELLED. A caller whose deadline has passed before it calls gets the
// same error, and nothing runs.
func TestCallerPastItsDeadlineGetsDeadlineExceeded(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		started := make(chan struct{}, 1)
		c := New("PastDeadline", func(ctx context.Context, id int) (string, error) {
			started <- struct{}{}
			<-ctx.Done()
			return "", ctx.Err()
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso}))

		ctx := newExpiringContext()
		errc := make(chan error, 1)
		go func() {
			_, err := m.exec(ctx, c, 1)
			errc <- err
		}()
		recv(t, started, "the run to start")
		ctx.expire()
		err := recv(t, errc, "the call to return")
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.NotErrorIs(t, err, context.Canceled)
		assert.Equal(t, evs("CANCELLED"), eventNames(h.completion().Events))

		_, err = m.exec(ctx, c, 2)
		assert.ErrorIs(t, err, context.DeadlineExceeded, "called past the deadline")
		assert.NotErrorIs(t, err, context.Canceled)
		select {
		case <-started:
			t.Error("a call past its deadline ran")
		default:
		}
	})
}

// tardyContext is a caller's context with a deadline that it is slow to
// tell: its Deadline reports it, and its Err and Done never do, as a
// context whose timer has not fired when the registry's clock, which a
// run's deadline follows, has passed it.
type tardyContext struct {
	context.Context
	deadline time.Time
}

func (c tardyContext) Deadline() (time.Time, bool) { return c.deadline, true }

// A caller's deadline that comes before the timeout ends the execution
// CANCELLED with context.DeadlineExceeded, as the caller's context ending
// does, even when the run's context, on the registry's clock, tells the
// deadline before the caller's context does: it is not a TIMEOUT, which
// the breaker would count against a healthy dependency.
func TestCallersDeadlineBeforeTheTimeoutIsNoTimeout(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			started := make(chan struct{}, 1)
			c := New("Tardy", func(ctx context.Context, id int) (string, error) {
				started <- struct{}{}
				<-ctx.Done()
				return "", ctx.Err()
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: time.Second})).WithFallback(fallbackName)
			ctx := tardyContext{Context: context.Background(), deadline: harnessStart.Add(100 * time.Millisecond)}
			call := goCall(func() (string, error) { return c.Execute(ctx, 1) })
			recv(t, started, "the run to start")
			h.clock.Advance(100 * time.Millisecond)
			res := awaitCall(t, call)
			assert.ErrorIs(t, res.err, context.DeadlineExceeded, "no fallback: the caller has left")
			assert.Equal(t, evs("CANCELLED"), h.events())
		})
	}
}
