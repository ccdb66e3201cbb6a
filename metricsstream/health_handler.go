package metricsstream

import (
	"encoding/json"
	"net/http"
	"slices"
)

// Health is what [HealthHandler] answers, as Spring Cloud Netflix's
// Hystrix health indicator reports it: Status "UP", or "CIRCUIT_OPEN"
// with the open circuits as "group::key", sorted.
type Health struct {
	Status              string   `json:"status"`
	OpenCircuitBreakers []string `json:"openCircuitBreakers,omitempty"`
}

// The statuses of a [Health].
const (
	HealthUp          = "UP"
	HealthCircuitOpen = "CIRCUIT_OPEN"
)

// HealthOf returns the health of r's commands: CIRCUIT_OPEN when a
// command's circuit is open, forced open included, naming each.
func HealthOf(r *Registry) Health {
	var open []string
	for m := range r.Commands() {
		s, ok := m.Status()
		if !ok || !s.CircuitBreakerOpen {
			continue
		}
		group, _ := s.groupAndPool(m.Key())
		open = append(open, group+"::"+m.Key())
	}
	if len(open) == 0 {
		return Health{Status: HealthUp}
	}
	slices.Sort(open)
	return Health{Status: HealthCircuitOpen, OpenCircuitBreakers: open}
}

// HealthHandler answers each request with the [HealthOf] r as JSON
// (DefaultRegistry if r is nil), 200 OK whatever it says:
//
//	{"status":"CIRCUIT_OPEN","openCircuitBreakers":["Users::GetUser"]}
//
// It is for a page or an alert to read. An open circuit is the service
// protecting itself from a downstream, not the service failing, so a
// readiness or liveness probe must not restart or unroute an instance
// for it: every instance would go the same way at once.
func HealthHandler(r *Registry) http.Handler {
	if r == nil {
		r = DefaultRegistry
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-cache")
		json.NewEncoder(w).Encode(HealthOf(r))
	})
}
