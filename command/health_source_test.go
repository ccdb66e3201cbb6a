package command

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/clock"
	ms "github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// subjectHealth is a health source whose snapshots the test sends.
type subjectHealth struct {
	subject *observable.Subject[ms.HealthCounts]
	resets  int
}

func (s *subjectHealth) HealthStream() observable.Observable[ms.HealthCounts] {
	return s.subject.Observable()
}

func (s *subjectHealth) ResetStream() { s.resets++ }

func TestWithHealthSourceFeedsTheBreakersOfTheKeysItChooses(t *testing.T) {
	clk := clock.NewManual(harnessStart)
	chosen := &subjectHealth{subject: observable.NewBehaviorSubject(ms.HealthCounts{})}
	var seen []KeyHealth
	reg := NewRegistry(WithClock(clk), WithHealthSource(func(k KeyHealth) breaker.HealthSource {
		seen = append(seen, k)
		if k.Key == "Fleet" {
			return chosen
		}
		return nil
	}))
	defer reg.Close()
	ok := func(context.Context, int) (int, error) { return 1, nil }
	cfg := Config{Isolation: SemaphoreIsolation, Breaker: breaker.Config{RequestVolumeThreshold: 5}}
	fleet := New("Fleet", ok, WithRegistry(reg), WithConfig(cfg))
	local := New("Local", ok, WithRegistry(reg), WithConfig(cfg))
	_, err := fleet.Execute(context.Background(), 1)
	require.NoError(t, err)
	_, err = local.Execute(context.Background(), 1)
	require.NoError(t, err)

	require.Len(t, seen, 2, "asked once per key")
	assert.Same(t, reg.metrics.Command("Fleet", ms.Config{}), seen[0].Metrics, "given the key's own metrics")
	assert.Same(t, clk, seen[0].Clock, "given the registry's clock")
	assert.Equal(t, 5, seen[0].Breaker().RequestVolumeThreshold)
	require.NoError(t, reg.Configure("Fleet", Config{Isolation: SemaphoreIsolation, Breaker: breaker.Config{RequestVolumeThreshold: 7}}))
	assert.Equal(t, 7, seen[0].Breaker().RequestVolumeThreshold, "Breaker reads the live configuration")

	chosen.subject.OnNext(ms.HealthCounts{Total: 10, Errors: 10, ErrorPercentage: 100})
	assert.True(t, fleet.Breaker().IsOpen(), "the chosen source trips the key whose own health is clean")
	assert.False(t, local.Breaker().IsOpen(), "a key given nil keeps its own metrics")
	_, err = fleet.Execute(context.Background(), 1)
	assert.ErrorIs(t, err, ErrShortCircuited)
}
