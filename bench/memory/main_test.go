package memory

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that nothing leaks but what hystrix-go is known to leak:
// the two monitor goroutines it starts for every circuit name and never
// stops, not even on hystrix.Flush.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/afex/hystrix-go/hystrix.(*metricExchange).Monitor"),
		goleak.IgnoreTopFunction("github.com/afex/hystrix-go/hystrix.(*poolMetrics).Monitor"),
	)
}
