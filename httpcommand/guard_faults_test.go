package httpcommand

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/command"
)

// A guard's key takes faults as any command's, which makes them
// server-side faults, as Envoy's fault filter injects: an injected error
// is answered 503 without reaching the handler, and an injected delay
// holds the request's permit until the timeout answers it 503.
func TestGuardFaultsAreTheServersFaults(t *testing.T) {
	var served atomic.Int32
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served.Add(1) })

	failing := newGuardHarness(t, handler, command.Config{Faults: command.FaultConfig{Enabled: true, ErrorPercentage: 100}})
	rec := failing.serve("/a")
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	_, errs := injected(failing.Registry.Registry, DefaultGuardKey)
	assert.Equal(t, int64(1), errs)
	assert.Equal(t, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", failing.Events(DefaultGuardKey))

	slow := newGuardHarness(t, handler, command.Config{Timeout: time.Second, MaxConcurrentRequests: 1,
		Faults: command.FaultConfig{Enabled: true, DelayPercentage: 100, Delay: time.Hour}})
	answered := make(chan *httptest.ResponseRecorder)
	go func() { answered <- slow.serve("/b") }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if delays, _ := injected(slow.Registry.Registry, DefaultGuardKey); delays == 1 {
			break
		}
		require.True(t, time.Now().Before(deadline), "the delay did not begin")
		runtime.Gosched()
	}
	assert.Equal(t, http.StatusServiceUnavailable, slow.serve("/c").Code, "the delayed request holds the only permit")
	slow.Clock.Advance(time.Second)
	assert.Equal(t, http.StatusServiceUnavailable, (<-answered).Code)
	assert.Zero(t, served.Load(), "no request reached the handler")
}

// injected reads the faults injected into key's executions, none for a
// key not used yet.
func injected(r *command.Registry, key string) (delays, errors int64) {
	m, ok := r.Metrics().LookupCommand(key)
	if !ok {
		return 0, 0
	}
	st, _ := m.Status()
	return st.Faults.Delays, st.Faults.Errors
}

// An injected 500 is answered as the server's 500 would be: the status
// and its text. Only an invalid key or configuration, the program's own
// mistake, is answered with the error's message.
func TestGuardInjected500AnswersTheStatusText(t *testing.T) {
	fault, bad := FaultStatuses.FaultError("500", "")
	require.NoError(t, bad)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	g := newGuardHarness(t, h, command.Config{Faults: command.FaultConfig{Enabled: true, ErrorPercentage: 100, Error: fault}})
	rec := g.serve("/")
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.Equal(t, "Internal Server Error\n", rec.Body.String(), "the command's error is no answer to a client")
}
