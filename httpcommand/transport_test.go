package httpcommand

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// harness is a Transport on a registry of its own on a manual clock, and
// a client that uses it; the test's servers and idle connections are
// closed at its end.
type harness struct {
	clock     *clock.Manual
	registry  *command.Registry
	transport *Transport
	client    *http.Client
}

func newHarness(t *testing.T, opts ...Option) *harness {
	t.Helper()
	h := &harness{clock: clock.NewManual(t0)}
	h.registry = command.NewRegistry(command.WithClock(h.clock))
	base := &http.Transport{}
	h.transport = New(append([]Option{WithBase(base), WithRegistry(h.registry)}, opts...)...)
	h.client = &http.Client{Transport: h.transport}
	t.Cleanup(func() {
		h.client.CloseIdleConnections()
		h.registry.Close()
	})
	return h
}

// server starts an httptest server with handler, closed at the test's
// end (after the harness's cleanup, which runs later, registered first).
func server(t *testing.T, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv
}

func status(code int) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(code)
		_, _ = io.WriteString(w, http.StatusText(code))
	}
}

func (h *harness) get(t *testing.T, url string) (*http.Response, error) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	return h.client.Do(req)
}

// readBody reads and closes a response's body.
func readBody(t *testing.T, resp *http.Response) string {
	t.Helper()
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// events returns the cumulative counts of key's events once the rolling
// buckets have closed.
func (h *harness) events(key string) metricsstream.EventTotals {
	h.clock.Advance(time.Second)
	m, _ := h.registry.Metrics().LookupCommand(key)
	return m.CumulativeCounts()
}

func hostOf(srv *httptest.Server) string { return strings.TrimPrefix(srv.URL, "http://") }

func TestSuccessIsACommandOfTheHost(t *testing.T) {
	h := newHarness(t)
	srv := server(t, status(http.StatusOK))
	resp, err := h.get(t, srv.URL+"/users/1")
	require.NoError(t, err)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, "OK", readBody(t, resp))

	ev := h.events(hostOf(srv))
	assert.Equal(t, int64(1), ev[metricsstream.Success])
	cfg, ok := h.registry.Config(hostOf(srv))
	require.True(t, ok)
	assert.Equal(t, hostOf(srv), cfg.Pool, "a pool per host")
	assert.Equal(t, command.PoolIsolation, cfg.Isolation)
}

// A host that hangs takes its own pool's workers and no one else's: the
// requests to a healthy host are answered while the hung ones wait, and
// the hung host's extra requests are rejected at once.
func TestAHungHostDoesNotSlowTheOthers(t *testing.T) {
	h := newHarness(t, WithPoolConfig(func(string) command.PoolConfig { return command.PoolConfig{CoreSize: 2} }))
	release := make(chan struct{})
	var arrived sync.WaitGroup
	arrived.Add(2)
	hung := server(t, func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	healthy := server(t, status(http.StatusOK))
	defer close(release)

	hungErrs := make(chan error, 2)
	for range 2 {
		go func() {
			_, err := h.get(t, hung.URL)
			hungErrs <- err
		}()
	}
	arrived.Wait() // both of the hung host's workers are taken

	_, err := h.get(t, hung.URL)
	assert.ErrorIs(t, err, command.ErrPoolRejected, "the hung host's pool is full")
	for range 20 {
		resp, err := h.get(t, healthy.URL)
		require.NoError(t, err)
		assert.Equal(t, "OK", readBody(t, resp))
	}
	select {
	case err := <-hungErrs:
		t.Fatalf("a hung request ended before its timeout: %v", err)
	default:
	}

	h.clock.Advance(command.DefaultTimeout)
	for range 2 {
		assert.ErrorIs(t, <-hungErrs, command.ErrTimeout)
	}
	assert.Equal(t, int64(20), h.events(hostOf(healthy))[metricsstream.Success])
	ev := h.events(hostOf(hung))
	assert.Equal(t, int64(2), ev[metricsstream.Timeout])
	assert.Equal(t, int64(1), ev[metricsstream.PoolRejected])
}

var tripFast = func(string) command.Config {
	return command.Config{Breaker: breaker.Config{RequestVolumeThreshold: 5, ErrorThresholdPercentage: 50}}
}

// A storm of 503s opens the host's breaker: later requests are
// short-circuited and never reach it. Another host is untouched.
func TestA503StormOpensTheHostsBreaker(t *testing.T) {
	h := newHarness(t, WithConfig(tripFast))
	var hits atomic.Int64
	storm := server(t, func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Retry-After", "1")
		status(http.StatusServiceUnavailable)(w, r)
	})
	healthy := server(t, status(http.StatusOK))

	for range 10 {
		_, err := h.get(t, storm.URL)
		var se *StatusError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, http.StatusServiceUnavailable, se.StatusCode)
		assert.Equal(t, "1", se.Header.Get("Retry-After"))
	}
	h.clock.Advance(time.Second) // the health snapshot is taken
	_, err := h.get(t, storm.URL)
	assert.ErrorIs(t, err, command.ErrShortCircuited)
	assert.Equal(t, int64(10), hits.Load(), "the short-circuited request never reached the host")
	assert.True(t, h.registry.Breaker(hostOf(storm)).IsOpen())

	resp, err := h.get(t, healthy.URL)
	require.NoError(t, err)
	assert.Equal(t, "OK", readBody(t, resp))
	assert.False(t, h.registry.Breaker(hostOf(healthy)).IsOpen())
}

// 429 Too Many Requests counts as a failure, as 5xx do.
func TestTooManyRequestsIsAFailure(t *testing.T) {
	h := newHarness(t)
	srv := server(t, status(http.StatusTooManyRequests))
	_, err := h.get(t, srv.URL)
	var se *StatusError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, http.StatusTooManyRequests, se.StatusCode)
	assert.Equal(t, int64(1), h.events(hostOf(srv))[metricsstream.Failure])
}

// 404s are bad requests: the caller gets each response as it is, and
// however many there are, the breaker never opens.
func TestNotFoundNeverOpensTheBreaker(t *testing.T) {
	h := newHarness(t, WithConfig(tripFast), WithFallback(func(*http.Request, error) (*http.Response, error) {
		t.Error("a bad request reached the fallback")
		return nil, errors.New("no")
	}))
	srv := server(t, status(http.StatusNotFound))
	for range 30 {
		resp, err := h.get(t, srv.URL)
		require.NoError(t, err)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode)
		assert.Equal(t, "Not Found", readBody(t, resp))
		h.clock.Advance(100 * time.Millisecond)
	}
	assert.False(t, h.registry.Breaker(hostOf(srv)).IsOpen())
	ev := h.events(hostOf(srv))
	assert.Equal(t, int64(30), ev[metricsstream.BadRequest])
	assert.Zero(t, ev[metricsstream.Failure])
	m, _ := h.registry.Metrics().LookupCommand(hostOf(srv))
	assert.Zero(t, m.HealthCounts().Total, "bad requests are not counted in health")
}

// A connection refused is a failure, answered by the fallback, which
// builds a response.
func TestConnectionErrorsFailIntoTheFallback(t *testing.T) {
	var cause error
	h := newHarness(t, WithFallback(func(req *http.Request, err error) (*http.Response, error) {
		cause = err
		return &http.Response{
			StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{"X-Fallback": {"cache"}},
			Body: io.NopCloser(strings.NewReader("cached " + req.URL.Path)), Request: req,
		}, nil
	}))
	gone := httptest.NewServer(status(http.StatusOK))
	gone.Close()

	resp, err := h.get(t, gone.URL+"/users/1")
	require.NoError(t, err)
	assert.Equal(t, "cache", resp.Header.Get("X-Fallback"))
	assert.Equal(t, "cached /users/1", readBody(t, resp))
	var ce *command.Error
	require.ErrorAs(t, cause, &ce)
	assert.Equal(t, command.CommandFailure, ce.Failure)
	assert.Equal(t, int64(1), h.events(hostOf(gone))[metricsstream.Failure])
}

// The command's timeout reaches the request through its context: the
// server sees the request cancelled, and the caller gets ErrTimeout.
func TestTimeoutCancelsTheRequest(t *testing.T) {
	h := newHarness(t, WithConfig(func(string) command.Config {
		return command.Config{Timeout: 300 * time.Millisecond}
	}))
	arrived, cancelled := make(chan struct{}), make(chan struct{})
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
		close(cancelled)
	})
	errc := make(chan error, 1)
	go func() {
		_, err := h.get(t, srv.URL)
		errc <- err
	}()
	<-arrived
	h.clock.Advance(300 * time.Millisecond)
	assert.ErrorIs(t, <-errc, command.ErrTimeout)
	<-cancelled
}

// The caller's context is the command's: cancelling it cancels the
// request.
func TestCallersContextCancelsTheCommand(t *testing.T) {
	h := newHarness(t)
	arrived := make(chan struct{})
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	errc := make(chan error, 1)
	go func() {
		_, err := h.client.Do(req)
		errc <- err
	}()
	<-arrived
	cancel()
	assert.ErrorIs(t, <-errc, context.Canceled)
	assert.Equal(t, int64(1), h.events(hostOf(srv))[metricsstream.Cancelled])
}

// The command ends when the headers arrive; the body is read after, past
// the command's timeout, and is whole.
func TestBodyStaysReadableAfterTheCommandEnds(t *testing.T) {
	h := newHarness(t, WithConfig(func(string) command.Config {
		return command.Config{Timeout: 100 * time.Millisecond}
	}))
	rest := make(chan struct{})
	srv := server(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "first half, ")
		w.(http.Flusher).Flush()
		<-rest
		_, _ = io.WriteString(w, "second half")
	})
	resp, err := h.get(t, srv.URL)
	require.NoError(t, err)
	m, _ := h.registry.Metrics().LookupCommand(hostOf(srv))
	assert.Zero(t, m.ConcurrentExecutions(), "the command has ended")

	h.clock.Advance(time.Second) // far past the timeout
	assert.Equal(t, int64(1), m.CumulativeCount(metricsstream.Success))
	close(rest)
	assert.Equal(t, "first half, second half", readBody(t, resp))
}

// A request body is closed whatever happens to the request, sent or
// short-circuited.
func TestRequestBodyIsClosed(t *testing.T) {
	h := newHarness(t, WithConfig(func(string) command.Config {
		return command.Config{Breaker: breaker.Config{ForceOpen: true}}
	}))
	srv := server(t, status(http.StatusOK))
	b := &closeCounter{Reader: strings.NewReader("data")}
	req, err := http.NewRequest(http.MethodPost, srv.URL, b)
	require.NoError(t, err)
	_, err = h.client.Do(req)
	assert.ErrorIs(t, err, command.ErrShortCircuited)
	assert.Equal(t, int64(1), b.closed.Load())
}

type closeCounter struct {
	io.Reader
	closed atomic.Int64
}

func (c *closeCounter) Close() error { c.closed.Add(1); return nil }

// WithKey keys requests by what the caller chooses; an invalid key fails
// the request with ErrInvalidKey.
func TestWithKey(t *testing.T) {
	h := newHarness(t, WithKey(func(r *http.Request) string { return r.Header.Get("X-Downstream") }))
	srv := server(t, status(http.StatusOK))
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	req.Header.Set("X-Downstream", "Users")
	resp, err := h.client.Do(req)
	require.NoError(t, err)
	readBody(t, resp)
	assert.Equal(t, int64(1), h.events("Users")[metricsstream.Success])

	_, err = h.get(t, srv.URL) // no header: an empty key
	assert.ErrorIs(t, err, command.ErrInvalidKey)
}

func TestOptionsPanicOnNil(t *testing.T) {
	assert.PanicsWithValue(t, "httpcommand: New: option 0 is nil", func() { New(nil) })
	assert.PanicsWithValue(t, "httpcommand: WithKey with nil argument", func() { WithKey(nil) })
	assert.PanicsWithValue(t, "httpcommand: WithBase with nil argument", func() { WithBase(nil) })
	assert.PanicsWithValue(t, "httpcommand: WithFailureStatus with nil argument", func() { WithFailureStatus(nil) })
}

func TestInvalidConfigFailsTheRequestsOfItsKey(t *testing.T) {
	h := newHarness(t, WithConfig(func(string) command.Config { return command.Config{MaxConcurrentRequests: -1} }))
	srv := server(t, status(http.StatusOK))
	_, err := h.get(t, srv.URL)
	assert.ErrorContains(t, err, "Config.MaxConcurrentRequests: -1 is negative")
}

// A fallback that answers after its caller left has its response closed,
// since nobody else will; one that answers before is closed unless the
// caller gets it.
func TestAFallbackAnswerTheCallerDoesNotGetIsClosed(t *testing.T) {
	answers := []*trackedBody{}
	tr := New(WithFallback(func(*http.Request, error) (*http.Response, error) {
		b := &trackedBody{Reader: strings.NewReader("cached"), name: "fallback"}
		answers = append(answers, b)
		return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{}, Body: b}, nil
	}))
	fallback := tr.commands.Fallback
	req, err := http.NewRequest(http.MethodGet, "http://downstream.test/", nil)
	require.NoError(t, err)

	left := &call{req: req}
	left.finish(nil) // the caller left while the fallback ran
	resp, err := fallback(context.Background(), left, errors.New("timed out"))
	assert.Nil(t, resp)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, int32(1), answers[0].closes.Load(), "closed, the caller gone")

	got := &call{req: req}
	resp, err = fallback(context.Background(), got, errors.New("timed out"))
	require.NoError(t, err)
	got.finish(resp)
	assert.Zero(t, answers[1].closes.Load(), "the caller's to close")

	lost := &call{req: req}
	resp, err = fallback(context.Background(), lost, errors.New("timed out"))
	require.NoError(t, err)
	require.NotNil(t, resp)
	lost.finish(nil) // the caller got an error of its own instead
	assert.Equal(t, int32(1), answers[2].closes.Load(), "closed when the call ends without it")
}

// A request made by hand without a URL fails with an error, as
// http.Transport's does, and its body is closed: RoundTrip must not panic
// on it (a RoundTripper is called directly by httputil.ReverseProxy and
// others, which http.Client's own check does not guard).
func TestRequestWithoutURLFailsWithoutPanicking(t *testing.T) {
	h := newHarness(t)
	b := &closeCounter{Reader: strings.NewReader("data")}
	req := &http.Request{Method: http.MethodPut, Header: http.Header{}, Body: b, ContentLength: 4}
	var err error
	require.NotPanics(t, func() {
		var resp *http.Response
		resp, err = h.transport.RoundTrip(req)
		assert.Nil(t, resp)
	})
	assert.ErrorContains(t, err, "nil Request.URL")
	assert.Equal(t, int64(1), b.closed.Load(), "the request's body is closed")
}

// A fallback that returns neither a response nor an error fails the
// request with an error: a RoundTripper must not return a nil response
// without an error (httputil.ReverseProxy reads the response's status
// at once), and the fallback did not answer, so it is a
// FALLBACK_FAILURE, not a FALLBACK_SUCCESS.
func TestFallbackWithNeitherResponseNorError(t *testing.T) {
	h := newHarness(t, WithFallback(func(*http.Request, error) (*http.Response, error) { return nil, nil }))
	srv := server(t, status(http.StatusServiceUnavailable))
	req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
	require.NoError(t, err)
	resp, err := h.transport.RoundTrip(req)
	assert.Nil(t, resp)
	require.Error(t, err, "a nil response needs an error")
	var ce *command.Error
	require.ErrorAs(t, err, &ce)
	ev := h.events(hostOf(srv))
	assert.Equal(t, int64(1), ev[metricsstream.FallbackFailure])
	assert.Zero(t, ev[metricsstream.FallbackSuccess])
}

// Requests to one host are one command however their URLs spell it: the
// host's case and its scheme's default port do not split its breaker,
// health and pool in two.
func TestHostIsCanonical(t *testing.T) {
	for url, want := range map[string]string{
		"http://api.example.com/users":      "api.example.com",
		"http://API.Example.com/users":      "api.example.com",
		"http://api.example.com:80/users":   "api.example.com",
		"https://api.example.com:443/users": "api.example.com",
		"HTTPS://api.example.com:443/users": "api.example.com",
		"http://api.example.com:/users":     "api.example.com",
		"https://api.example.com:80/users":  "api.example.com:80",
		"http://api.example.com:443/users":  "api.example.com:443",
		"http://api.example.com:8443/users": "api.example.com:8443",
		"http://127.0.0.1:8080/":            "127.0.0.1:8080",
		"http://[::1]:80/":                  "[::1]",
		"http://[::1]:8080/":                "[::1]:8080",
		"http://[FE80::1]/":                 "[fe80::1]",
	} {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		require.NoError(t, err)
		assert.Equal(t, want, Host(req), url)
	}
}
