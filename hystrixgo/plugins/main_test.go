package plugins

import (
	"testing"

	"go.uber.org/goleak"
)

// go-metrics rates its meters and timers from one goroutine of its own,
// which it starts with the first and keeps for the life of the process.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("github.com/rcrowley/go-metrics.(*meterArbiter).tick"))
}
