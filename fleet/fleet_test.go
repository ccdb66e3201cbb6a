package fleet

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

func TestHealthSourceOnlyForTheKeysThatOptIn(t *testing.T) {
	clk := clock.NewManual(epoch)
	f := newFleet(Config{Instance: "a", Keys: []string{key}}.withDefaults(), newMemStore(clk))
	defer f.Close()
	metrics := metricsstream.NewRegistry(clk)
	k := func(name string) command.KeyHealth {
		return command.KeyHealth{Key: name, Metrics: metrics.Command(name, metricsstream.Config{}), Clock: clk}
	}
	assert.Nil(t, f.HealthSource(k("Other")), "a key not among Keys keeps its own metrics")
	assert.Nil(t, f.Source("Other"))
	s := f.HealthSource(k(key))
	assert.Same(t, f.Source(key), s)
	assert.PanicsWithValue(t, `fleet: HealthSource for "GetUser" twice`, func() { f.HealthSource(k(key)) })
	f.Close()
	assert.PanicsWithValue(t, `fleet: HealthSource for "GetUser" after Close`, func() { f.HealthSource(k(key)) })
}
