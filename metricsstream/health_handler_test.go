package metricsstream

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/clock"
)

// The health names every open circuit as group::key, the key standing for
// a group that is not set, and only those.
func TestHealthNamesTheOpenCircuits(t *testing.T) {
	r := NewRegistry(clock.NewManual(t0))
	h := HealthHandler(r)
	serve := func() (int, string, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/health", nil))
		return rec.Code, rec.Header().Get("Content-Type"), rec.Body.String()
	}
	code, contentType, body := serve()
	assert.Equal(t, http.StatusOK, code)
	assert.Equal(t, "application/json", contentType)
	assert.JSONEq(t, `{"status":"UP"}`, body, "no command")

	r.Command("GetUser", Config{}).SetStatusProvider(commandStatus{Group: "Users", CircuitBreakerOpen: true})
	r.Command("GetOrders", Config{}).SetStatusProvider(commandStatus{Group: "Orders"})
	r.Command("Audit", Config{}).SetStatusProvider(commandStatus{CircuitBreakerOpen: true})
	r.Command("Unknown", Config{})
	assert.Equal(t, Health{Status: HealthCircuitOpen, OpenCircuitBreakers: []string{"Audit::Audit", "Users::GetUser"}}, HealthOf(r))
	code, _, body = serve()
	assert.Equal(t, http.StatusOK, code, "an open circuit is no failure of the service")
	assert.JSONEq(t, `{"status":"CIRCUIT_OPEN","openCircuitBreakers":["Audit::Audit","Users::GetUser"]}`, body)
}
