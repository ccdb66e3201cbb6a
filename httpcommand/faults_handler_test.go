package httpcommand

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/internal/registrytest"
)

// faultsRequest sends a request to h and returns its status and body.
func faultsRequest(t *testing.T, h http.Handler, method, target, body string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	b, err := io.ReadAll(rec.Result().Body)
	require.NoError(t, err)
	return rec.Code, string(b)
}

// A game day through the handler: PUT injects faults into a command,
// which its executions meet; GET tells them and the faults injected;
// DELETE turns them off.
func TestFaultsHandlerSetsAndTellsFaults(t *testing.T) {
	reg := command.NewRegistry()
	t.Cleanup(reg.Close)
	getUser := command.New("GetUser", func(context.Context, int) (string, error) { return "ann", nil },
		command.WithRegistry(reg), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation, Timeout: -1}))
	command.New("GetOrders", func(context.Context, int) (string, error) { return "none", nil }, command.WithRegistry(reg))
	h := FaultsHandler(reg)

	code, body := faultsRequest(t, h, http.MethodGet, "/faults", "")
	require.Equal(t, http.StatusOK, code)
	assert.JSONEq(t, `[]`, body, "no command injects faults")

	code, body = faultsRequest(t, h, http.MethodPut, "/faults?command=GetUser",
		`{"enabled":true,"errorPercentage":100,"error":"province down","delay":"2s"}`)
	require.Equal(t, http.StatusOK, code, body)
	assert.JSONEq(t, `{"command":"GetUser","enabled":true,"delayPercentage":0,"delay":"2s","errorPercentage":100,"error":"province down","badRequest":false,"markedOnly":false,"until":"","active":true,"delays":0,"errors":0}`, body)
	cfg, _ := reg.Config("GetUser")
	assert.Equal(t, command.SemaphoreIsolation, cfg.Isolation, "the rest of the Config is kept")

	for range 2 {
		_, err := getUser.Execute(context.Background(), 1)
		assert.EqualError(t, err, "GetUser failed and no fallback available (cause: province down)")
	}
	code, body = faultsRequest(t, h, http.MethodGet, "/faults", "")
	require.Equal(t, http.StatusOK, code)
	var all []faultsJSON
	require.NoError(t, json.Unmarshal([]byte(body), &all))
	require.Len(t, all, 1)
	assert.Equal(t, "GetUser", all[0].Command)
	assert.Equal(t, int64(2), all[0].Errors)

	// What GET answers goes back changed.
	all[0].ErrorPercentage = 0
	back, err := json.Marshal(all[0])
	require.NoError(t, err)
	code, _ = faultsRequest(t, h, http.MethodPut, "/faults?command=GetUser", string(back))
	require.Equal(t, http.StatusOK, code)
	_, err = getUser.Execute(context.Background(), 1)
	require.NoError(t, err)

	code, _ = faultsRequest(t, h, http.MethodDelete, "/faults?command=GetUser", "")
	require.Equal(t, http.StatusNoContent, code)
	cfg, _ = reg.Config("GetUser")
	assert.False(t, cfg.Faults.Enabled)
	code, body = faultsRequest(t, h, http.MethodGet, "/faults?command=GetUser", "")
	require.Equal(t, http.StatusOK, code)
	assert.Contains(t, body, `"enabled":false`)
	assert.Contains(t, body, `"errors":2`, "what was injected stays counted")
}

// Bad requests name what is wrong, and change nothing.
func TestFaultsHandlerRefusesBadRequests(t *testing.T) {
	reg := command.NewRegistry()
	t.Cleanup(reg.Close)
	command.New("GetUser", func(context.Context, int) (string, error) { return "ann", nil }, command.WithRegistry(reg))
	h := FaultsHandler(reg)
	for _, tc := range []struct {
		method, target, body string
		code                 int
		says                 string
	}{
		{http.MethodPut, "/faults?command=GetUsr", `{"enabled":true}`, http.StatusNotFound, `no command "GetUsr"`},
		{http.MethodPut, "/faults", `{"enabled":true}`, http.StatusBadRequest, "PUT needs ?command="},
		{http.MethodDelete, "/faults", ``, http.StatusBadRequest, "DELETE needs ?command="},
		{http.MethodPut, "/faults?command=GetUser", `{"enabled":true,"errorPercent":5}`, http.StatusBadRequest, `unknown field "errorPercent"`},
		{http.MethodPut, "/faults?command=GetUser", `{"enabled":true,"delayPercentage":5,"delay":"2 s"}`, http.StatusBadRequest, "delay: time: "},
		{http.MethodPut, "/faults?command=GetUser", `{"enabled":true,"errorPercentage":500}`, http.StatusBadRequest, "Config.Faults.ErrorPercentage: 500 is not within [0, 100]"},
		{http.MethodPost, "/faults?command=GetUser", `{}`, http.StatusMethodNotAllowed, "method POST not allowed"},
	} {
		code, body := faultsRequest(t, h, tc.method, tc.target, tc.body)
		assert.Equal(t, tc.code, code, "%s %s %s", tc.method, tc.target, tc.body)
		assert.Contains(t, body, tc.says)
	}
	cfg, _ := reg.Config("GetUser")
	assert.Equal(t, command.FaultConfig{}, cfg.Faults, "nothing changed")
	_, ok := reg.Config("GetUsr")
	assert.False(t, ok, "no command made by a typo")
	assert.Panics(t, func() { FaultsHandler(nil) })
}

// A game day with an end: PUT "for" sets the faults' end that long after
// now on the registry's clock, GET tells it and whether the faults are
// still injected, and they stop by themselves at it.
func TestFaultsHandlerGameDayEndsByItself(t *testing.T) {
	reg := registrytest.New(t, t0)
	getUser := command.New("GetUser", func(context.Context, int) (string, error) { return "ann", nil },
		command.WithRegistry(reg.Registry), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation}))
	h := FaultsHandler(reg.Registry)

	code, body := faultsRequest(t, h, http.MethodPut, "/faults?command=GetUser", `{"enabled":true,"errorPercentage":100,"for":"10m"}`)
	require.Equal(t, http.StatusOK, code, body)
	var got faultsJSON
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	assert.Equal(t, t0.Add(10*time.Minute).UTC().Format(time.RFC3339Nano), got.Until)
	assert.True(t, got.Active)
	_, err := getUser.Execute(context.Background(), 1)
	require.ErrorIs(t, err, command.ErrInjectedFault)

	reg.Clock.Advance(10 * time.Minute)
	_, err = getUser.Execute(context.Background(), 1)
	require.NoError(t, err, "the game day is over")
	_, body = faultsRequest(t, h, http.MethodGet, "/faults?command=GetUser", "")
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	assert.True(t, got.Enabled, "as configured")
	assert.False(t, got.Active, "but no longer injected")

	// until goes back as it came; for and until together, or a for that is
	// not a positive duration, are refused.
	code, _ = faultsRequest(t, h, http.MethodPut, "/faults?command=GetUser", `{"enabled":true,"errorPercentage":100,"until":"`+got.Until+`"}`)
	assert.Equal(t, http.StatusOK, code)
	for body, says := range map[string]string{
		`{"enabled":true,"for":"1m","until":"` + got.Until + `"}`: "for and until: give one",
		`{"enabled":true,"for":"-1m"}`:                            `for: "-1m" is not a positive duration`,
		`{"enabled":true,"until":"tomorrow"}`:                     "until: ",
	} {
		code, answer := faultsRequest(t, h, http.MethodPut, "/faults?command=GetUser", body)
		assert.Equal(t, http.StatusBadRequest, code, body)
		assert.Contains(t, answer, says)
	}
}

// An injected error may be a bad request: no fallback, no count against
// the breaker, BAD_REQUEST; GET tells it and what it wraps.
func TestFaultsHandlerInjectsBadRequests(t *testing.T) {
	reg := registrytest.New(t, t0)
	getUser := command.New("GetUser", func(context.Context, int) (string, error) { return "ann", nil },
		command.WithRegistry(reg.Registry), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation})).
		WithFallback(func(context.Context, int, error) (string, error) { return "anonymous", nil })
	h := FaultsHandler(reg.Registry)
	for _, tc := range []struct{ body, err, says string }{
		{`{"enabled":true,"errorPercentage":100,"error":"no such user","badRequest":true}`, "no such user", `"error":"no such user","badRequest":true`},
		{`{"enabled":true,"errorPercentage":100,"badRequest":true}`, command.ErrInjectedFault.Error(), `"error":"","badRequest":true`},
	} {
		code, body := faultsRequest(t, h, http.MethodPut, "/faults?command=GetUser", tc.body)
		require.Equal(t, http.StatusOK, code, body)
		assert.Contains(t, body, tc.says)
		_, err := getUser.Execute(context.Background(), 1)
		assert.True(t, command.IsBadRequest(err), "%v", err)
		assert.ErrorContains(t, err, tc.err)
	}
	assert.Equal(t, "[BAD_REQUEST: 2, EXCEPTION_THROWN: 2]", reg.Events("GetUser"), "no fallback, nothing against the breaker")
}

// codedError is an error of a protocol of codes, for the tests of
// FaultErrors.
type codedError struct{ code, message string }

func (e *codedError) Error() string { return e.code + " " + e.message }

// lettered is a FaultErrors whose codes are single capital letters.
type lettered struct{}

func (lettered) FaultError(code, message string) (error, error) {
	if len(code) != 1 || code[0] < 'A' || code[0] > 'Z' {
		return nil, fmt.Errorf("not a letter")
	}
	return &codedError{code, message}, nil
}

func (lettered) FaultCode(err error) (string, string, bool) {
	var c *codedError
	if errors.As(err, &c) {
		return c.code, c.message, true
	}
	return "", "", false
}

// A PUT with a code injects the error of the FaultErrors that knows it,
// and GET tells the code back; a code that none knows, or given to a
// handler without FaultErrors, is refused.
func TestFaultsHandlerInjectsErrorsOfACode(t *testing.T) {
	reg := command.NewRegistry()
	t.Cleanup(reg.Close)
	getUser := command.New("GetUser", func(context.Context, int) (string, error) { return "ann", nil },
		command.WithRegistry(reg), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation, Timeout: -1}))
	h := FaultsHandler(reg, lettered{})

	code, body := faultsRequest(t, h, http.MethodPut, "/faults?command=GetUser", `{"enabled":true,"errorPercentage":100,"code":"U","error":"draining","badRequest":true}`)
	require.Equal(t, http.StatusOK, code, body)
	assert.JSONEq(t, `{"command":"GetUser","enabled":true,"delayPercentage":0,"delay":"0s","errorPercentage":100,"error":"draining","code":"U","badRequest":true,"markedOnly":false,"until":"","active":true,"delays":0,"errors":0}`, body)
	_, err := getUser.Execute(context.Background(), 1)
	var coded *codedError
	require.ErrorAs(t, err, &coded)
	assert.Equal(t, codedError{"U", "draining"}, *coded)
	assert.True(t, command.IsBadRequest(err))

	code, body = faultsRequest(t, h, http.MethodPut, "/faults?command=GetUser", `{"enabled":true,"code":"unavailable"}`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, body, `code "unavailable": not a letter`)
	code, body = faultsRequest(t, FaultsHandler(reg), http.MethodPut, "/faults?command=GetUser", `{"enabled":true,"code":"U"}`)
	assert.Equal(t, http.StatusBadRequest, code)
	assert.Contains(t, body, `code "U": a code needs a FaultErrors`)
	cfg, _ := reg.Config("GetUser")
	assert.Equal(t, &codedError{"U", "draining"}, errors.Unwrap(cfg.Faults.Error), "the refused PUTs changed nothing")
	assert.Panics(t, func() { FaultsHandler(reg, nil) })
}

// A body with more than the JSON of one set of faults is not such JSON:
// what follows the first value is not silently dropped, and nothing
// changes.
func TestFaultsHandlerRefusesWhatFollowsTheFaults(t *testing.T) {
	reg := command.NewRegistry()
	t.Cleanup(reg.Close)
	command.New("GetUser", func(context.Context, int) (string, error) { return "ann", nil }, command.WithRegistry(reg))
	h := FaultsHandler(reg)
	for _, body := range []string{
		`{"enabled":true,"errorPercentage":100}{"enabled":false}`,
		`{"enabled":true,"errorPercentage":100} trailing`,
	} {
		code, said := faultsRequest(t, h, http.MethodPut, "/faults?command=GetUser", body)
		assert.Equal(t, http.StatusBadRequest, code, "%s: %s", body, said)
	}
	cfg, _ := reg.Config("GetUser")
	assert.Equal(t, command.FaultConfig{}, cfg.Faults, "nothing changed")
	code, _ := faultsRequest(t, h, http.MethodPut, "/faults?command=GetUser", "{\"enabled\":true,\"errorPercentage\":100}\n")
	assert.Equal(t, http.StatusOK, code, "white space after the faults is no more")
}
