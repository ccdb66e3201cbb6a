package metricsstream

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

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

// The health names the half-open circuits among the open ones, as
// Spring's indicator counts them, and apart.
func TestHealthNamesTheHalfOpenCircuits(t *testing.T) {
	r := NewRegistry(clock.NewManual(t0))
	r.Command("GetUser", Config{}).SetStatusProvider(commandStatus{Group: "Users", CircuitBreakerOpen: true, CircuitBreakerState: CircuitHalfOpen})
	r.Command("Pay", Config{}).SetStatusProvider(commandStatus{Group: "Payments", CircuitBreakerOpen: true, CircuitBreakerState: CircuitOpen})
	r.Command("Audit", Config{}).SetStatusProvider(commandStatus{CircuitBreakerState: CircuitClosed})
	assert.Equal(t, Health{
		Status:                  HealthCircuitOpen,
		OpenCircuitBreakers:     []string{"Payments::Pay", "Users::GetUser"},
		HalfOpenCircuitBreakers: []string{"Users::GetUser"},
	}, HealthOf(r))
}

// The health names the commands whose closed breaker throttles now,
// without changing the status.
func TestHealthNamesTheThrottlingCircuits(t *testing.T) {
	r := NewRegistry(clock.NewManual(t0))
	throttles := CommandProperties{ThrottleSuccessPercentage: 90, ThrottleAggression: 1, MaxThrottlePercentage: 80}
	r.Command("Recommend", Config{}).SetStatusProvider(commandStatus{Group: "Shop", CircuitBreakerThrottle: 0.12, Properties: throttles})
	r.Command("Idle", Config{}).SetStatusProvider(commandStatus{Group: "Shop", Properties: throttles})
	r.Command("GetUser", Config{}).SetStatusProvider(commandStatus{Group: "Users"})
	assert.Equal(t, Health{Status: HealthUp, ThrottlingCircuitBreakers: []string{"Shop::Recommend"}}, HealthOf(r))
}

// The health names the commands that inject faults now, without changing
// the status, and not those that no longer do.
func TestHealthNamesTheCommandsInjectingFaults(t *testing.T) {
	r := NewRegistry(clock.NewManual(t0))
	r.Command("Recommend", Config{}).SetStatusProvider(commandStatus{Group: "Shop", Faults: FaultStatus{Enabled: true, ErrorPercentage: 5}})
	r.Command("Checkout", Config{}).SetStatusProvider(commandStatus{Group: "Shop", Faults: FaultStatus{Errors: 40}})
	r.Command("GetUser", Config{}).SetStatusProvider(commandStatus{Group: "Users"})
	assert.Equal(t, Health{Status: HealthUp, InjectingFaults: []string{"Shop::Recommend"}}, HealthOf(r))
}

// The health names the commands whose bulkhead or rate limit refused
// executions in the rolling window, without changing the status, and
// forgets them once the refusals leave the window.
func TestHealthNamesTheCommandsThatRefuse(t *testing.T) {
	r, mc := newStreamRegistry()
	pool := r.Command("Suggest", Config{})
	pool.SetStatusProvider(commandStatus{Group: "Search"})
	semaphore := r.Command("GetUser", Config{})
	semaphore.SetStatusProvider(commandStatus{Group: "Users", CircuitBreakerOpen: true})
	limited := r.Command("Checkout", Config{})
	healthy := r.Command("Audit", Config{})
	recordEvents(pool, 0, time.Millisecond, PoolRejected, FallbackSuccess)
	recordEvents(semaphore, 0, time.Millisecond, SemaphoreRejected, FallbackMissing)
	recordEvents(limited, 0, time.Millisecond, RateLimited, FallbackMissing)
	recordEvents(healthy, time.Millisecond, time.Millisecond, Success)
	recordEvents(healthy, time.Millisecond, time.Millisecond, Failure, FallbackSuccess)
	recordEvents(healthy, time.Millisecond, time.Millisecond, Timeout, FallbackSuccess)
	r.Pool("Search", Config{}).MarkRejected()
	r.Pool("Idle", Config{})
	mc.Advance(time.Second) // the bucket closes

	assert.Equal(t, Health{
		Status:              HealthCircuitOpen,
		OpenCircuitBreakers: []string{"Users::GetUser"},
		RejectingBulkheads:  []string{"Search::Suggest", "Users::GetUser"},
		RejectingPools:      []string{"Search"},
		RateLimited:         []string{"Checkout::Checkout"},
	}, HealthOf(r))

	semaphore.SetStatusProvider(commandStatus{Group: "Users"})
	rec := httptest.NewRecorder()
	HealthHandler(r).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/health", nil))
	assert.JSONEq(t, `{"status":"UP","rejectingBulkheads":["Search::Suggest","Users::GetUser"],"rejectingPools":["Search"],"rateLimited":["Checkout::Checkout"]}`,
		rec.Body.String(), "refusals leave the status UP")

	mc.Advance(DefaultRollingWindow)
	assert.Equal(t, Health{Status: HealthUp}, HealthOf(r), "the refusals left the window")
}

// The health answers GET, and HEAD without a body; a method that would
// change something gets 405 naming the methods it answers, as the
// streams do.
func TestHealthAnswersGetAndHeadOnly(t *testing.T) {
	h := HealthHandler(NewRegistry(clock.NewManual(t0)))
	serve := func(method string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, "/health", nil))
		return rec
	}
	rec := serve(http.MethodHead)
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	assert.Empty(t, rec.Body.String())
	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodDelete} {
		rec = serve(method)
		assert.Equal(t, http.StatusMethodNotAllowed, rec.Code, method)
		assert.Equal(t, "GET, HEAD", rec.Header().Get("Allow"), method)
		assert.Contains(t, rec.Body.String(), method)
	}
}
