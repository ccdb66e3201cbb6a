package command

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

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
