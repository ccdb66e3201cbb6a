package httpcommand

import (
	"errors"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/command"
)

// A code is an HTTP status of 400 to 599, with no message; it reads back
// as it was given.
func TestFaultStatusesNameStatuses(t *testing.T) {
	err, bad := FaultStatuses.FaultError("503", "")
	require.NoError(t, bad)
	assert.Equal(t, &StatusError{StatusCode: 503, Status: "503 Service Unavailable", Header: http.Header{}}, err)
	code, message, ok := FaultStatuses.FaultCode(command.BadRequest(err))
	assert.True(t, ok)
	assert.Equal(t, "503", code)
	assert.Empty(t, message)
	for _, code := range []string{"200", "399", "600", "Unavailable", ""} {
		_, bad := FaultStatuses.FaultError(code, "")
		assert.EqualError(t, bad, "not an HTTP status of 400 to 599", code)
	}
	_, bad = FaultStatuses.FaultError("503", "draining")
	assert.EqualError(t, bad, `an HTTP status has no message (error "draining")`)
	_, _, ok = FaultStatuses.FaultCode(errors.New("boom"))
	assert.False(t, ok)
}

// faultOf returns the configuration of a key that injects the status code
// into every request.
func faultOf(t *testing.T, code string) command.Config {
	t.Helper()
	err, bad := FaultStatuses.FaultError(code, "")
	require.NoError(t, bad)
	return command.Config{Faults: command.FaultConfig{Enabled: true, ErrorPercentage: 100, Error: err}}
}

// On a Transport's key, an injected status stands in for the server's
// answer: a status of failure fails the request with the *StatusError,
// as the server's 503 does; another is a bad request whose response, of
// that status, the caller gets. The server is not asked.
func TestTransportFaultStatusesAreTheServersAnswers(t *testing.T) {
	var asked atomic.Int32
	srv := server(t, func(w http.ResponseWriter, r *http.Request) { asked.Add(1) })
	for _, tc := range []struct {
		code    string
		failure bool
		events  string
	}{
		{"503", true, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]"},
		{"404", false, "[BAD_REQUEST: 1, EXCEPTION_THROWN: 1]"},
	} {
		h := newHarness(t, WithConfig(func(string) command.Config { return faultOf(t, tc.code) }))
		resp, err := h.get(t, srv.URL+"/users/1")
		if tc.failure {
			var s *StatusError
			require.ErrorAs(t, err, &s, tc.code)
			assert.Equal(t, 503, s.StatusCode)
		} else {
			require.NoError(t, err, tc.code)
			assert.Equal(t, 404, resp.StatusCode)
			assert.Equal(t, "404 Not Found", resp.Status)
			assert.Empty(t, readBody(t, resp))
		}
		assert.Equal(t, tc.events, h.events(hostOf(srv)).String(), tc.code)
	}
	assert.Zero(t, asked.Load())
}

// A guard answers an injected status with it, and counts it as its
// FailureStatus counts the handler's: 429 a FAILURE, 404 a bad request.
func TestGuardAnswersAnInjectedStatus(t *testing.T) {
	var served atomic.Int32
	handler := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served.Add(1) })
	for _, tc := range []struct {
		code   string
		status int
		events string
	}{
		{"429", http.StatusTooManyRequests, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]"},
		{"404", http.StatusNotFound, "[BAD_REQUEST: 1, EXCEPTION_THROWN: 1]"},
	} {
		g := newGuardHarness(t, handler, faultOf(t, tc.code))
		assert.Equal(t, tc.status, g.serve("/a").Code, tc.code)
		assert.Equal(t, tc.events, g.Events(DefaultGuardKey), tc.code)
	}
	assert.Zero(t, served.Load(), "no request reached the handler")
}
