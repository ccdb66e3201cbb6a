package command

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
)

// A command with ConsecutiveFailures trips on a run of failures at once,
// in every way of executing it, without the clock moving: no health
// snapshot, and far under the volume threshold.
func TestCommandTripsOnARunOfFailures(t *testing.T) {
	forEachModeAndIsolation(t, func(t *testing.T, h *harness, m execMode, iso Isolation) {
		c := New("GetUser", func(ctx context.Context, id int) (string, error) {
			if id < 0 {
				return "", errBoom
			}
			return "user", nil
		}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: -1, Breaker: breaker.Config{ConsecutiveFailures: 3}}))
		ctx := context.Background()
		for _, id := range []int{-1, -1, 1, -1, -1} {
			_, _ = m.exec(ctx, c, id)
			h.completion()
		}
		require.Equal(t, breaker.Closed, h.reg.Breaker("GetUser").State(), "a success ended the first run")
		_, err := m.exec(ctx, c, -1)
		require.ErrorIs(t, err, errBoom)
		h.completion()
		assert.Equal(t, breaker.Open, h.reg.Breaker("GetUser").State(), "three in a row")
		_, err = m.exec(ctx, c, 1)
		assert.ErrorIs(t, err, ErrShortCircuited)
		h.completion()
		assert.Equal(t, 3, h.state("GetUser").CommandStatus().Properties.ConsecutiveFailures)
	})
}

// A caller that leaves while its execution runs ends it CANCELLED, which
// neither counts toward a run of failures nor ends one.
func TestCommandCancellationIsNoFailureOfARun(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			started := make(chan struct{})
			c := New("GetUser", func(ctx context.Context, id int) (string, error) {
				if id == 0 {
					started <- struct{}{}
					<-ctx.Done()
					return "", ctx.Err()
				}
				return "", errBoom
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: -1, Breaker: breaker.Config{ConsecutiveFailures: 3}}))
			fail := func() {
				_, err := c.Execute(context.Background(), 1)
				require.ErrorIs(t, err, errBoom)
				h.completion()
			}
			fail()
			fail()
			ctx, cancel := context.WithCancel(context.Background())
			res := goCall(func() (string, error) { return c.Execute(ctx, 0) })
			<-started
			cancel()
			<-res
			assert.Equal(t, []string{"CANCELLED"}, h.events())
			require.Equal(t, breaker.Closed, h.reg.Breaker("GetUser").State(), "the cancellation did not count")
			fail()
			assert.Equal(t, breaker.Open, h.reg.Breaker("GetUser").State(), "nor did it end the run")
		})
	}
}
