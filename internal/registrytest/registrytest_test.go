package registrytest

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRegistryTellsTimeoutsAndReadsEvents(t *testing.T) {
	r := New(t, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	assert.Equal(t, "no such key", r.Events("k"))
	c := command.New("k", func(ctx context.Context, _ int) (int, error) {
		<-ctx.Done()
		return 0, ctx.Err()
	}, command.WithRegistry(r.Registry), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation, Timeout: time.Second}))
	done := make(chan error)
	go func() {
		_, err := c.Execute(context.Background(), 1)
		done <- err
	}()
	require.Eventually(t, func() bool {
		m, ok := r.Metrics().LookupCommand("k")
		return ok && m.ConcurrentExecutions() == 1
	}, 5*time.Second, time.Millisecond)
	r.Clock.Advance(time.Second)
	<-r.TimedOut
	assert.ErrorIs(t, <-done, command.ErrTimeout)
	assert.Equal(t, "[TIMEOUT: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", r.Events("k"))
}

// Events reads a key's events once its rolling buckets have closed,
// whatever their width: a key whose Config makes them two seconds wide
// is read after its bucket has closed too, not a second into it.
func TestEventsWaitsOutAWideBucket(t *testing.T) {
	r := New(t, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	c := command.New("wide", func(context.Context, int) (int, error) { return 1, nil },
		command.WithRegistry(r.Registry), command.WithConfig(command.Config{
			Isolation: command.SemaphoreIsolation,
			Metrics:   metricsstream.Config{RollingWindow: 20 * time.Second, Buckets: 10},
		}))
	_, err := c.Execute(context.Background(), 0)
	require.NoError(t, err)
	assert.Equal(t, "[SUCCESS: 1]", r.Events("wide"))
}
