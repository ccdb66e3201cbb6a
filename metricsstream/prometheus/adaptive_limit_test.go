package prometheus

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

const wantAdaptiveLimits = `
# HELP rxhystrix_command_adaptive_limit The adaptive limit on the command's execution permits now, for a semaphore-isolated command that has one.
# TYPE rxhystrix_command_adaptive_limit gauge
rxhystrix_command_adaptive_limit{algorithm="gradient2",command="Search",group="Search"} 37
# HELP rxhystrix_pool_adaptive_limit The adaptive limit on the pool's workers now, for a pool that has one.
# TYPE rxhystrix_pool_adaptive_limit gauge
rxhystrix_pool_adaptive_limit{algorithm="vegas",pool="Adaptive"} 14
# HELP rxhystrix_pool_core_size The most commands the pool's workers run at once: its CoreSize, or its adaptive limit now.
# TYPE rxhystrix_pool_core_size gauge
rxhystrix_pool_core_size{pool="Adaptive"} 14
rxhystrix_pool_core_size{pool="Fixed"} 10
`

// An adaptive limit is a gauge of its own, labelled with its algorithm,
// and the pool's core size is the limit; fixed sizes have no such gauge.
func TestCollectorReportsAdaptiveLimits(t *testing.T) {
	reg := metricsstream.NewRegistry(clock.NewManual(t0))
	reg.Pool("Adaptive", metricsstream.Config{}).SetStatusProvider(poolStatus{CoreSize: 14, MaximumSize: 14, AdaptiveLimit: "vegas"})
	reg.Pool("Fixed", metricsstream.Config{}).SetStatusProvider(poolStatus{CoreSize: 10, MaximumSize: 10})
	reg.Command("Search", metricsstream.Config{}).SetStatusProvider(commandStatus{
		Properties: metricsstream.CommandProperties{Isolation: "SEMAPHORE", MaxConcurrentRequests: 37, AdaptiveLimit: "gradient2"},
	})
	reg.Command("Fixed", metricsstream.Config{}).SetStatusProvider(commandStatus{
		Properties: metricsstream.CommandProperties{Isolation: "SEMAPHORE", MaxConcurrentRequests: 10},
	})
	c := NewCollector(reg)
	gather(t, c) // what it sends matches what it describes
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(wantAdaptiveLimits),
		"rxhystrix_command_adaptive_limit", "rxhystrix_pool_adaptive_limit", "rxhystrix_pool_core_size"))
}
