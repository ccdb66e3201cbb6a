package command

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// A command called once a minute never has the volume threshold's
// executions in Hystrix's 10-second window; with a window of its latest
// calls its breaker judges them, and trips.
func TestQuietCommandTripsOnAWindowOfCalls(t *testing.T) {
	for _, tc := range []struct {
		name  string
		calls int
		trips bool
	}{
		{"time window", 0, false},
		{"window of 10 calls", 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			c := New("Nightly", func(ctx context.Context, id int) (string, error) { return "", errBoom },
				WithRegistry(h.reg), WithConfig(Config{Isolation: SemaphoreIsolation, Timeout: -1,
					Metrics: metricsstream.Config{HealthWindowCalls: tc.calls},
					Breaker: breaker.Config{RequestVolumeThreshold: 10}}))
			for range 10 {
				_, _ = c.Execute(context.Background(), 1)
				h.completion()
				h.clock.Advance(time.Minute)
			}
			assert.Equal(t, tc.trips, h.reg.Breaker("Nightly").IsOpen())
		})
	}
}
