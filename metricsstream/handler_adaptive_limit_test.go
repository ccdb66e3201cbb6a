package metricsstream

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A pool with an adaptive limit shows the limit as its core and maximum
// size, and says so with two properties; a command's adaptive permits
// are its MaxConcurrentRequests, named likewise. Fixed sizes add nothing.
func TestHandlerShowsAdaptiveLimits(t *testing.T) {
	reg, mc := newStreamRegistry()
	for _, p := range []struct {
		key string
		st  PoolStatus
	}{
		{"Adaptive", PoolStatus{CoreSize: 14, MaximumSize: 14, AdaptiveLimit: "vegas"}},
		{"Fixed", PoolStatus{CoreSize: 10, MaximumSize: 10}},
	} {
		pm := reg.Pool(p.key, Config{})
		pm.SetStatusProvider(poolStatus(p.st))
		pm.MarkStart()
	}
	m := reg.Command("Search", Config{})
	m.SetStatusProvider(commandStatus{Properties: CommandProperties{Isolation: "SEMAPHORE", MaxConcurrentRequests: 37, AdaptiveLimit: "aimd"}})
	recordEvents(m, time.Millisecond, time.Millisecond, Success)
	mc.Advance(time.Second)

	objs := objectsOfFrame(t, c0(t, reg))
	require.Equal(t, []string{"HystrixCommand Search", "HystrixThreadPool Adaptive", "HystrixThreadPool Fixed"}, names(objs))
	cmd, adaptive, fixed := objs[0], objs[1], objs[2]
	assert.Equal(t, int64(37), cmd.int(t, "propertyValue_executionIsolationSemaphoreMaxConcurrentRequests"))
	assert.Equal(t, "aimd", cmd.values["propertyValue_executionIsolationSemaphoreAdaptiveLimit"])
	assert.Equal(t, int64(14), adaptive.int(t, "currentCorePoolSize"))
	assert.Equal(t, int64(14), adaptive.int(t, "currentMaximumPoolSize"))
	assert.Equal(t, int64(14), adaptive.int(t, "propertyValue_maximumSize"))
	assert.Equal(t, "vegas", adaptive.values["propertyValue_adaptiveLimit"])
	assert.NotContains(t, fixed.keys, "propertyValue_maximumSize")
	assert.NotContains(t, fixed.keys, "propertyValue_adaptiveLimit")
}
