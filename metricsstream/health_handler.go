package metricsstream

import (
	"encoding/json"
	"net/http"
	"slices"
)

// Health is what [HealthHandler] answers. Status and
// OpenCircuitBreakers are as Spring Cloud Netflix's Hystrix health
// indicator reports them: Status "UP", or "CIRCUIT_OPEN" with the open
// circuits as "group::key", sorted. The lists after them are rxhystrix's,
// in the same form, and do not change Status: a bulkhead or a rate limit
// that refuses is doing its work, but says where to look first.
type Health struct {
	Status              string   `json:"status"`
	OpenCircuitBreakers []string `json:"openCircuitBreakers,omitempty"`
	// HalfOpenCircuitBreakers are those of OpenCircuitBreakers whose
	// breaker is half open (CommandStatus.CircuitBreakerState
	// HALF_OPEN): a trial is out, and the circuit closes if it succeeds.
	// Spring's indicator counts them open, as Hystrix's isOpen does.
	HalfOpenCircuitBreakers []string `json:"halfOpenCircuitBreakers,omitempty"`
	// RejectingBulkheads are the commands that refused executions at
	// their bulkhead in the rolling window: a worker pool and its queue
	// full (THREAD_POOL_REJECTED), or every semaphore permit taken
	// (SEMAPHORE_REJECTED). The downstream is slower than the traffic
	// needs, or the bulkhead is too small for it.
	RejectingBulkheads []string `json:"rejectingBulkheads,omitempty"`
	// RejectingPools are the worker pools, by name, that refused
	// executions in the rolling window (their queue and workers full),
	// whichever commands they serve: where several commands share a
	// pool, the one to grow or to split.
	RejectingPools []string `json:"rejectingPools,omitempty"`
	// RateLimited are the commands whose rate limit refused executions
	// in the rolling window (RATE_LIMITED).
	RateLimited []string `json:"rateLimited,omitempty"`
	// ThrottlingCircuitBreakers are the commands whose closed breaker
	// refuses a share of the executions now
	// (CommandStatus.CircuitBreakerThrottle): the downstream's success
	// rate is below the breaker's throttle threshold.
	ThrottlingCircuitBreakers []string `json:"throttlingCircuitBreakers,omitempty"`
	// InjectingFaults are the commands that inject faults into their
	// executions now (command.Config.Faults): the failures they make are
	// not their downstream's, and an injection left on is a finding of
	// its own.
	InjectingFaults []string `json:"injectingFaults,omitempty"`
}

// The statuses of a [Health].
const (
	HealthUp          = "UP"
	HealthCircuitOpen = "CIRCUIT_OPEN"
)

// HealthOf returns the health of r's commands: CIRCUIT_OPEN when a
// command's circuit is open, forced open or half open included, naming
// each and, apart, the half-open ones, and
// the commands that refused executions at their bulkhead or their rate
// limit in the rolling window, the pools that refused them, those whose breaker throttles now and
// those that inject faults now, whatever the status.
func HealthOf(r *Registry) Health {
	var h Health
	for m := range r.Commands() {
		s, _ := m.Status()
		group, _ := s.groupAndPool(m.Key())
		name := group + "::" + m.Key()
		if s.CircuitBreakerOpen {
			h.OpenCircuitBreakers = append(h.OpenCircuitBreakers, name)
			if s.CircuitBreakerState == CircuitHalfOpen {
				h.HalfOpenCircuitBreakers = append(h.HalfOpenCircuitBreakers, name)
			}
		}
		rolling := m.RollingCounts()
		if rolling[PoolRejected] > 0 || rolling[SemaphoreRejected] > 0 {
			h.RejectingBulkheads = append(h.RejectingBulkheads, name)
		}
		if rolling[RateLimited] > 0 {
			h.RateLimited = append(h.RateLimited, name)
		}
		if s.CircuitBreakerThrottle > 0 {
			h.ThrottlingCircuitBreakers = append(h.ThrottlingCircuitBreakers, name)
		}
		if s.Faults.Enabled {
			h.InjectingFaults = append(h.InjectingFaults, name)
		}
	}
	for p := range r.Pools() {
		if p.RollingCount(PoolRejection) > 0 {
			h.RejectingPools = append(h.RejectingPools, p.Key())
		}
	}
	slices.Sort(h.OpenCircuitBreakers)
	slices.Sort(h.HalfOpenCircuitBreakers)
	slices.Sort(h.RejectingBulkheads)
	slices.Sort(h.RejectingPools)
	slices.Sort(h.RateLimited)
	slices.Sort(h.ThrottlingCircuitBreakers)
	slices.Sort(h.InjectingFaults)
	h.Status = HealthUp
	if len(h.OpenCircuitBreakers) > 0 {
		h.Status = HealthCircuitOpen
	}
	return h
}

// HealthHandler answers GET with the [HealthOf] r as JSON
// (DefaultRegistry if r is nil), 200 OK whatever it says:
//
//	{"status":"CIRCUIT_OPEN","openCircuitBreakers":["Users::GetUser"],"rejectingBulkheads":["Search::Suggest"]}
//
// It is for a page or an alert to read. An open circuit is the service
// protecting itself from a downstream, not the service failing, so a
// readiness or liveness probe must not restart or unroute an instance
// for it: every instance would go the same way at once.
//
// HEAD gets GET's headers without a body; other methods get 405, as the
// streams' handlers answer them: a health page changes nothing.
func HealthHandler(r *Registry) http.Handler {
	if r == nil {
		r = DefaultRegistry
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if !answersGet(w, req, "the health") {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		if req.Method == http.MethodHead {
			return
		}
		json.NewEncoder(w).Encode(HealthOf(r))
	})
}
