package command

import (
	"strings"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// requestT0 is where the manual clocks of the request tests start.
var requestT0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newManualRegistry returns a registry on a manual clock, closed when the
// test ends.
func newManualRegistry(t testing.TB) (*Registry, *clock.Manual) {
	t.Helper()
	mc := clock.NewManual(requestT0)
	r := NewRegistry(WithClock(mc))
	t.Cleanup(r.Close)
	return r, mc
}

// displays returns the executions of l as the request log shows them,
// without their latencies: "GetUser[SUCCESS, RESPONSE_FROM_CACHE]".
func displays(l *RequestLog) []string {
	var out []string
	for _, e := range l.Executions() {
		s := e.String() // "GetUser[SUCCESS][12ms]"
		out = append(out, s[:strings.LastIndexByte(s, '[')])
	}
	return out
}

// isolations are the two isolations, for tests that run under both.
var isolations = []Isolation{PoolIsolation, SemaphoreIsolation}

// breakerForcedOpen is the breaker configuration of a circuit held open.
var breakerForcedOpen = breaker.Config{ForceOpen: true}
