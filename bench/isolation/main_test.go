package isolation

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that nothing leaks but what hystrix-go is known to leak:
// the two monitor goroutines it starts for every command name and never
// stops.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("github.com/afex/hystrix-go/hystrix.(*metricExchange).Monitor"),
		goleak.IgnoreTopFunction("github.com/afex/hystrix-go/hystrix.(*poolMetrics).Monitor"),
	)
}
