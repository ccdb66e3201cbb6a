package breaker_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/internal/clock"
)

func TestRegistryGetOrCreateMakesOneBreakerPerKey(t *testing.T) {
	r := breaker.NewRegistry(breaker.WithClock(clock.NewManual(epoch)))
	defer r.Reset()
	h := newFakeHealth()

	got := make([]*breaker.Breaker, 64)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range got {
		wg.Go(func() {
			<-start
			got[i] = r.GetOrCreate("GetUser", hystrixTestConfig, h)
		})
	}
	close(start)
	wg.Wait()
	for i := range got {
		require.Same(t, got[0], got[i], "caller %d", i)
	}
	assert.Equal(t, 1, h.subscribeCount(), "only one breaker was made and subscribed")
	assert.Equal(t, "GetUser", got[0].Name())

	other := r.GetOrCreate("GetOrder", hystrixTestConfig, newFakeHealth())
	assert.NotSame(t, got[0], other)
	assert.Equal(t, []string{"GetOrder", "GetUser"}, r.Keys())
}

func TestRegistryFirstConfigHolds(t *testing.T) {
	var r breaker.Registry // the zero Registry is ready to use
	defer r.Reset()
	h := newFakeHealth()
	b := r.GetOrCreate("k", breaker.Config{SleepWindow: 3e9}, h)
	again := r.GetOrCreate("k", breaker.Config{SleepWindow: 7e9}, newFakeHealth())
	assert.Same(t, b, again)
	assert.EqualValues(t, 3e9, again.Config().SleepWindow)

	got, ok := r.Get("k")
	assert.True(t, ok)
	assert.Same(t, b, got)
	_, ok = r.Get("missing")
	assert.False(t, ok)
}

func TestRegistryRemoveAndReset(t *testing.T) {
	r := breaker.NewRegistry()
	h1, h2 := newFakeHealth(), newFakeHealth()
	b1 := r.GetOrCreate("a", breaker.Config{}, h1)
	r.GetOrCreate("b", breaker.Config{}, h2)

	assert.True(t, r.Remove("a"))
	assert.False(t, r.Remove("a"))
	assert.Equal(t, 0, h1.live(), "a removed breaker is closed")
	assert.Equal(t, []string{"b"}, r.Keys())
	assert.NotSame(t, b1, r.GetOrCreate("a", breaker.Config{}, h1), "a new breaker after Remove")

	r.Reset()
	assert.Empty(t, r.Keys())
	assert.Equal(t, 0, h1.live())
	assert.Equal(t, 0, h2.live())
}

func TestRegistryInvalidConfigPanics(t *testing.T) {
	var r breaker.Registry
	assert.Panics(t, func() { r.GetOrCreate("k", breaker.Config{RequestVolumeThreshold: -1}, newFakeHealth()) })
	assert.Empty(t, r.Keys(), "nothing registered")
	assert.PanicsWithValue(t, "breaker: NewRegistry with nil Option", func() { breaker.NewRegistry(nil) })
}
