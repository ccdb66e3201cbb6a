package httpcommand

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/internal/registrytest"
)

// guardHarness is a Guard on a registry of its own on a manual clock.
type guardHarness struct {
	*registrytest.Registry
	guard *Guard
}

func newGuardHarness(t *testing.T, h http.Handler, cfg command.Config) *guardHarness {
	t.Helper()
	g := &guardHarness{Registry: registrytest.New(t, t0)}
	g.guard = &Guard{Handler: h, Registry: g.Registry.Registry, Config: func(string) command.Config { return cfg }}
	return g
}

// serve serves one GET of path with the guard and returns what it wrote.
func (g *guardHarness) serve(path string) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	g.guard.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	return rec
}

// blocking is a handler that tells entered when it starts and answers
// 200 once release is closed.
type blocking struct {
	entered chan struct{}
	release chan struct{}
	calls   atomic.Int32
}

func newBlocking() *blocking {
	return &blocking{entered: make(chan struct{}, 10), release: make(chan struct{})}
}

func (b *blocking) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.calls.Add(1)
	b.entered <- struct{}{}
	<-b.release
	_, _ = io.WriteString(w, "served")
}

func TestGuardRefusesRequestsBeyondItsPermits(t *testing.T) {
	b := newBlocking()
	g := newGuardHarness(t, b, command.Config{MaxConcurrentRequests: 1})
	first := make(chan *httptest.ResponseRecorder)
	go func() { first <- g.serve("/a") }()
	<-b.entered

	refused := g.serve("/b")
	assert.Equal(t, http.StatusServiceUnavailable, refused.Code)
	assert.Equal(t, "Service Unavailable\n", refused.Body.String())
	close(b.release)
	served := <-first
	assert.Equal(t, http.StatusOK, served.Code)
	assert.Equal(t, "served", served.Body.String())
	assert.Equal(t, int32(1), b.calls.Load(), "a refused request never reaches the handler")
	assert.Equal(t, "[SUCCESS: 1, SEMAPHORE_REJECTED: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", g.Events(DefaultGuardKey))
}

// Without CircuitBreaker, a guard refusing most requests, which Hystrix
// counts as errors, does not open a circuit and refuse them all.
func TestGuardBusyIsNotBroken(t *testing.T) {
	b := newBlocking()
	g := newGuardHarness(t, b, command.Config{MaxConcurrentRequests: 1, Breaker: breaker.Config{RequestVolumeThreshold: 2}})
	first := make(chan *httptest.ResponseRecorder)
	go func() { first <- g.serve("/") }()
	<-b.entered
	for range 5 {
		assert.Equal(t, http.StatusServiceUnavailable, g.serve("/").Code)
	}
	close(b.release)
	<-first
	g.Clock.Advance(500 * time.Millisecond) // the health snapshot's interval
	assert.Equal(t, http.StatusOK, g.serve("/").Code)
	assert.False(t, g.Breaker(DefaultGuardKey).IsOpen())
	cfg, _ := g.Config(DefaultGuardKey)
	assert.True(t, cfg.Breaker.Disabled)
}

func TestGuardCountsTheStatusTheHandlerWrote(t *testing.T) {
	for _, tc := range []struct {
		name   string
		handle http.HandlerFunc
		code   int
		events string
	}{
		{"ok", status(http.StatusOK), http.StatusOK, "[SUCCESS: 1]"},
		{"nothing written", func(http.ResponseWriter, *http.Request) {}, http.StatusOK, "[SUCCESS: 1]"},
		{"redirect", status(http.StatusFound), http.StatusFound, "[SUCCESS: 1]"},
		{"server error", status(http.StatusInternalServerError), http.StatusInternalServerError, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]"},
		{"too many requests", status(http.StatusTooManyRequests), http.StatusTooManyRequests, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]"},
		{"not found", status(http.StatusNotFound), http.StatusNotFound, "[BAD_REQUEST: 1, EXCEPTION_THROWN: 1]"},
		{"write before status", func(w http.ResponseWriter, _ *http.Request) {
			_, _ = io.WriteString(w, "body")
			w.WriteHeader(http.StatusInternalServerError) // superfluous: the status was 200
		}, http.StatusOK, "[SUCCESS: 1]"},
		{"informational first", func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusEarlyHints)
			w.WriteHeader(http.StatusBadGateway)
		}, 0, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := newGuardHarness(t, tc.handle, command.Config{})
			rec := g.serve("/")
			if tc.code != 0 { // a recorder's Code is the first status written, 1xx included
				assert.Equal(t, tc.code, rec.Code, "the handler's answer, as it wrote it")
			}
			assert.Equal(t, tc.events, g.Events(DefaultGuardKey))
		})
	}
}

// A guard's FailureStatus says which of its handler's statuses fail: a
// 501 it leaves out is a bad request, a 404 it adds a failure.
func TestGuardFailureStatus(t *testing.T) {
	for code, events := range map[int]string{
		http.StatusNotImplemented: "[BAD_REQUEST: 1, EXCEPTION_THROWN: 1]",
		http.StatusNotFound:       "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]",
		http.StatusBadGateway:     "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]",
		http.StatusOK:             "[SUCCESS: 1]",
	} {
		g := newGuardHarness(t, status(code), command.Config{})
		g.guard.FailureStatus = func(code int) bool {
			return code == http.StatusNotFound || (code != http.StatusNotImplemented && DefaultFailureStatus(code))
		}
		assert.Equal(t, code, g.serve("/").Code, "the handler's answer, as it wrote it")
		assert.Equal(t, events, g.Events(DefaultGuardKey), "%d", code)
	}
}

func TestGuardTimeoutCancelsTheHandler(t *testing.T) {
	entered := make(chan struct{})
	silent := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-r.Context().Done()
	})
	g := newGuardHarness(t, silent, command.Config{Timeout: 300 * time.Millisecond})
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- g.serve("/") }()
	<-entered
	g.Clock.Advance(300 * time.Millisecond)
	rec := <-done
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code, "the handler wrote nothing: the guard answers")
	assert.Equal(t, "[TIMEOUT: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", g.Events(DefaultGuardKey))
}

func TestGuardTimeoutKeepsTheHandlersOwnAnswer(t *testing.T) {
	entered := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(entered)
		<-r.Context().Done()
		http.Error(w, "gave up", http.StatusGatewayTimeout)
	})
	g := newGuardHarness(t, h, command.Config{Timeout: 300 * time.Millisecond})
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- g.serve("/") }()
	<-entered
	g.Clock.Advance(300 * time.Millisecond)
	rec := <-done
	assert.Equal(t, http.StatusGatewayTimeout, rec.Code)
	assert.Equal(t, "gave up\n", rec.Body.String(), "a response once begun is the handler's")
	assert.Equal(t, "[TIMEOUT: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", g.Events(DefaultGuardKey))
}

func TestGuardRateLimitAnswers429(t *testing.T) {
	g := newGuardHarness(t, status(http.StatusOK), command.Config{
		RateLimit: command.RateLimitConfig{Enabled: true, Rate: 1, Burst: 1},
	})
	assert.Equal(t, http.StatusOK, g.serve("/").Code)
	assert.Equal(t, http.StatusTooManyRequests, g.serve("/").Code, "no token left: the clock has not moved")
	assert.Equal(t, "[SUCCESS: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1, RATE_LIMITED: 1]", g.Events(DefaultGuardKey))
}

func TestGuardOpenCircuitShortCircuits(t *testing.T) {
	var calls atomic.Int32
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(http.StatusInternalServerError)
	})
	g := newGuardHarness(t, h, command.Config{Breaker: breaker.Config{RequestVolumeThreshold: 2}})
	g.guard.CircuitBreaker = true
	for range 2 {
		assert.Equal(t, http.StatusInternalServerError, g.serve("/").Code)
	}
	g.Clock.Advance(500 * time.Millisecond) // the health snapshot's interval
	rec := g.serve("/")
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Equal(t, int32(2), calls.Load(), "the open circuit keeps the request from the handler")
	assert.True(t, g.Breaker(DefaultGuardKey).IsOpen())
}

// A request the guard's throttling breaker refuses is answered 503
// without a Retry-After: whether the next goes through is a draw, and a
// client told to retry at once would only add to the load it sheds.
func TestGuardThrottledRequestHasNoRetryAfter(t *testing.T) {
	var fail atomic.Bool
	fail.Store(true)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if fail.Load() {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	g := &guardHarness{Registry: registrytest.New(t, t0, command.WithBreakerOptions(breaker.WithRand(func() float64 { return 0 })))}
	cfg := command.Config{Breaker: breaker.Config{RequestVolumeThreshold: 2, ErrorThresholdPercentage: 100, ThrottleSuccessPercentage: 100}}
	g.guard = &Guard{Handler: h, Registry: g.Registry.Registry, CircuitBreaker: true, Config: func(string) command.Config { return cfg }}
	assert.Equal(t, http.StatusInternalServerError, g.serve("/").Code)
	fail.Store(false)
	assert.Equal(t, http.StatusOK, g.serve("/").Code)
	g.Clock.Advance(500 * time.Millisecond) // the health snapshot: one of two succeeded
	require.Positive(t, g.Breaker(DefaultGuardKey).ThrottleProbability())

	rec := g.serve("/")
	assert.Equal(t, http.StatusServiceUnavailable, rec.Code)
	assert.Empty(t, rec.Header().Values("Retry-After"))
	assert.False(t, g.Breaker(DefaultGuardKey).IsOpen(), "throttling, not open")
	assert.Equal(t, "[SUCCESS: 1, FAILURE: 1, SHORT_CIRCUITED: 1, FALLBACK_MISSING: 2, EXCEPTION_THROWN: 2]", g.Events(DefaultGuardKey))
}

func TestGuardRaisesTheHandlersPanicAgain(t *testing.T) {
	for _, value := range []any{"boom", http.ErrAbortHandler} {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic(value) })
		g := newGuardHarness(t, h, command.Config{})
		assert.PanicsWithValue(t, value, func() { g.serve("/") }, "the same value, for net/http")
		assert.Equal(t, "[FAILURE: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", g.Events(DefaultGuardKey))
	}
}

func TestGuardKeysAndBadKeys(t *testing.T) {
	g := newGuardHarness(t, status(http.StatusOK), command.Config{})
	g.guard.Key = func(r *http.Request) string { return r.URL.Query().Get("key") }
	var got error
	g.guard.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		got = err
		GuardErrorHandler(w, r, err)
	}
	assert.Equal(t, http.StatusOK, g.serve("/?key=users").Code)
	assert.Equal(t, "[SUCCESS: 1]", g.Events("users"))

	rec := g.serve("/orders?key=")
	assert.ErrorIs(t, got, command.ErrInvalidKey)
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.Equal(t, `httpcommand: Guard: the key of a request for /orders is "": invalid key`+"\n", rec.Body.String())
}

func TestGuardRoutesKeyedByPattern(t *testing.T) {
	g := newGuardHarness(t, status(http.StatusOK), command.Config{})
	g.guard.Key = func(r *http.Request) string { return r.Pattern }
	mux := http.NewServeMux()
	mux.Handle("GET /users/{id}", g.guard)
	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/users/7", nil))
	assert.Equal(t, http.StatusOK, rec.Code)
	assert.Equal(t, "[SUCCESS: 1]", g.Events("GET /users/{id}"))
}

func TestGuardInvalidConfigAnswers500NamingTheField(t *testing.T) {
	var calls atomic.Int32
	h := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { calls.Add(1) })
	g := newGuardHarness(t, h, command.Config{MaxConcurrentRequests: -1})
	rec := g.serve("/")
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.Contains(t, rec.Body.String(), `httpcommand: Guard: config of "http-server": command: Config.MaxConcurrentRequests`)
	assert.Zero(t, calls.Load())
}

func TestGuardPanicsWithoutHandler(t *testing.T) {
	assert.PanicsWithValue(t, "httpcommand: Guard with nil Handler", func() {
		(&Guard{}).ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil))
	})
}

func TestGuardStatus(t *testing.T) {
	for err, code := range map[error]int{
		command.ErrRateLimited:       http.StatusTooManyRequests,
		command.ErrInvalidKey:        http.StatusInternalServerError,
		command.ErrInvalidConfig:     http.StatusInternalServerError,
		command.ErrSemaphoreRejected: http.StatusServiceUnavailable,
		command.ErrPoolRejected:      http.StatusServiceUnavailable,
		command.ErrShortCircuited:    http.StatusServiceUnavailable,
		command.ErrTimeout:           http.StatusServiceUnavailable,
		errors.New("other"):          http.StatusServiceUnavailable,
	} {
		assert.Equal(t, code, GuardStatus(err), "%v", err)
	}
}

// Under pool isolation the handler runs on a worker, and the guard's
// goroutine answers only once it has returned, even past the timeout.
func TestGuardPoolIsolationWaitsForTheHandler(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	var running atomic.Bool
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		running.Store(true)
		close(entered)
		<-release
		running.Store(false)
		http.Error(w, "late", http.StatusGatewayTimeout)
	})
	g := newGuardHarness(t, h, command.Config{Isolation: command.PoolIsolation, Timeout: 300 * time.Millisecond})
	done := make(chan *httptest.ResponseRecorder)
	go func() { done <- g.serve("/") }()
	<-entered
	g.Clock.Advance(300 * time.Millisecond)
	<-g.TimedOut
	close(release) // had the guard answered at the timeout, its 503 would be the recorder's

	rec := <-done
	assert.False(t, running.Load())
	assert.Equal(t, http.StatusGatewayTimeout, rec.Code, "the handler's answer, written before the guard returned")
	assert.Equal(t, "[TIMEOUT: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", g.Events(DefaultGuardKey))
}

// A request that times out while queued for a worker is answered by the
// guard, and its handler never runs.
func TestGuardPoolQueueTimeoutNeverRunsTheHandler(t *testing.T) {
	b := newBlocking()
	g := newGuardHarness(t, b, command.Config{Isolation: command.PoolIsolation, Timeout: 300 * time.Millisecond})
	require.NoError(t, g.ConfigurePool(DefaultGuardKey, command.PoolConfig{CoreSize: 1, MaxQueueSize: 1, QueueSizeRejectionThreshold: 1}))
	first, second := make(chan *httptest.ResponseRecorder), make(chan *httptest.ResponseRecorder)
	go func() { first <- g.serve("/first") }()
	<-b.entered
	go func() { second <- g.serve("/second") }()
	require.Eventually(t, func() bool {
		p, _ := g.Metrics().LookupPool(DefaultGuardKey)
		return p != nil && p.QueueSize() == 1
	}, 5*time.Second, time.Millisecond)
	g.Clock.Advance(300 * time.Millisecond) // both time out
	assert.Equal(t, http.StatusServiceUnavailable, (<-second).Code)
	close(b.release)
	assert.Equal(t, http.StatusOK, (<-first).Code)
	assert.Equal(t, int32(1), b.calls.Load(), "the queued request's handler never ran")
}

// onlyWriter is a ResponseWriter that cannot flush.
type onlyWriter struct{ http.ResponseWriter }

// A flush sends the headers: the response has begun, and a timeout after
// it leaves the answer to the handler. A flush the server's writer
// cannot do sends nothing.
func TestGuardFlushBeginsTheResponse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		writer func(*httptest.ResponseRecorder) http.ResponseWriter
		code   int
		body   string
	}{
		{"flushed", func(rec *httptest.ResponseRecorder) http.ResponseWriter { return rec }, http.StatusOK, ""},
		{"cannot flush", func(rec *httptest.ResponseRecorder) http.ResponseWriter { return onlyWriter{rec} }, http.StatusServiceUnavailable, "Service Unavailable\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			entered := make(chan struct{})
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.(http.Flusher).Flush()
				close(entered)
				<-r.Context().Done()
			})
			g := newGuardHarness(t, h, command.Config{Timeout: 300 * time.Millisecond})
			rec := httptest.NewRecorder()
			done := make(chan struct{})
			go func() {
				g.guard.ServeHTTP(tc.writer(rec), httptest.NewRequest(http.MethodGet, "/", nil))
				close(done)
			}()
			<-entered
			g.Clock.Advance(300 * time.Millisecond)
			<-done
			assert.Equal(t, tc.code, rec.Code)
			assert.Equal(t, tc.body, rec.Body.String(), "nothing written after the flush")
		})
	}
}

// A health check reaches a server whose permits are all taken.
func TestGuardBypass(t *testing.T) {
	b := newBlocking()
	mux := http.NewServeMux()
	mux.Handle("/work", b)
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		_, hasDeadline := r.Context().Deadline()
		fmt.Fprint(w, "ok, deadline: ", hasDeadline)
	})
	g := newGuardHarness(t, mux, command.Config{MaxConcurrentRequests: 1})
	g.guard.Bypass = func(r *http.Request) bool { return r.URL.Path == "/healthz" }
	first := make(chan *httptest.ResponseRecorder)
	go func() { first <- g.serve("/work") }()
	<-b.entered
	assert.Equal(t, http.StatusServiceUnavailable, g.serve("/work").Code)
	health := g.serve("/healthz")
	assert.Equal(t, http.StatusOK, health.Code)
	assert.Equal(t, "ok, deadline: false", health.Body.String(), "under no timeout")
	close(b.release)
	<-first
	assert.Equal(t, "[SUCCESS: 1, SEMAPHORE_REJECTED: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", g.Events(DefaultGuardKey),
		"the health check is in no key's counts")
}

// A handler that hijacks the connection (a WebSocket's upgrade) owns it:
// the guard writes nothing to it, even past the timeout.
func TestGuardHijackedConnectionIsTheHandlers(t *testing.T) {
	hijacked := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, rw, err := w.(http.Hijacker).Hijack()
		if !assert.NoError(t, err) {
			return
		}
		defer conn.Close()
		close(hijacked)
		<-r.Context().Done() // the guard's timeout
		_, _ = rw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 8\r\nConnection: close\r\n\r\nhijacked")
		_ = rw.Flush()
	})
	g := newGuardHarness(t, h, command.Config{Timeout: 300 * time.Millisecond})
	var serverLog strings.Builder
	served := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.guard.ServeHTTP(w, r)
		close(served)
	}))
	srv.Config.ErrorLog = log.New(&serverLog, "", 0)
	srv.Start()
	defer srv.Close()

	got := make(chan string)
	go func() {
		resp, err := http.Get(srv.URL)
		if !assert.NoError(t, err) {
			got <- ""
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- string(b)
	}()
	<-hijacked
	g.Clock.Advance(300 * time.Millisecond)
	assert.Equal(t, "hijacked", <-got)
	<-served // the guard has returned: whatever it wrote, it wrote
	assert.Equal(t, "[TIMEOUT: 1, FALLBACK_MISSING: 1, EXCEPTION_THROWN: 1]", g.Events(DefaultGuardKey))
	srv.Close()
	assert.Empty(t, serverLog.String(), "nothing written on the hijacked connection")
}

// readFromWriter is a ResponseWriter with a ReadFrom of its own, as
// net/http's, which sends a file with sendfile.
type readFromWriter struct {
	*httptest.ResponseRecorder
	readFrom int
}

func (w *readFromWriter) ReadFrom(r io.Reader) (int64, error) {
	w.readFrom++
	return io.Copy(w.ResponseRecorder, r)
}

func TestGuardKeepsTheWritersReadFrom(t *testing.T) {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.(io.ReaderFrom).ReadFrom(io.LimitReader(strings.NewReader("a file's bytes"), 6))
	})
	g := newGuardHarness(t, h, command.Config{})
	w := &readFromWriter{ResponseRecorder: httptest.NewRecorder()}
	g.guard.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, 1, w.readFrom, "the server's own ReadFrom")
	assert.Equal(t, "a file", w.Body.String())
	assert.Equal(t, "[SUCCESS: 1]", g.Events(DefaultGuardKey))
}

// A guard's partitions keep live requests served while batch requests
// hold the permits: the partition comes from a header, and Handler's
// context names it.
func TestGuardPartitions(t *testing.T) {
	b := newBlocking()
	live := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if command.PartitionFrom(r.Context()) != "live" {
			b.ServeHTTP(w, r)
			return
		}
		_, _ = io.WriteString(w, "live")
	})
	g := newGuardHarness(t, live, command.Config{MaxConcurrentRequests: 1,
		Partitions: []command.Partition{{Name: "live", Share: 0.5}, {Name: "batch", Share: 0.5}}})
	g.guard.Partition = func(r *http.Request) string { return r.Header.Get("Priority") }
	serve := func(priority string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.Header.Set("Priority", priority)
		g.guard.ServeHTTP(rec, r)
		return rec
	}
	first := make(chan *httptest.ResponseRecorder)
	go func() { first <- serve("batch") }()
	<-b.entered

	assert.Equal(t, http.StatusServiceUnavailable, serve("batch").Code, "batch holds its guarantee")
	assert.Equal(t, http.StatusServiceUnavailable, serve("").Code, "no partition, no guarantee")
	rec := serve("live")
	assert.Equal(t, http.StatusOK, rec.Code, "live is guaranteed a permit")
	assert.Equal(t, "live", rec.Body.String())
	close(b.release)
	assert.Equal(t, http.StatusOK, (<-first).Code)
	assert.Equal(t, "[SUCCESS: 2, SEMAPHORE_REJECTED: 2, FALLBACK_MISSING: 2, EXCEPTION_THROWN: 2]", g.Events(DefaultGuardKey))
}
