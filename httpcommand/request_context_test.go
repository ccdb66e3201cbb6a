package httpcommand

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// userService is a handler that runs GetUser twice with the request's
// context, the second served by the request cache, and then answers as
// respond says.
func userService(t *testing.T, r *command.Registry, respond func(w http.ResponseWriter)) http.Handler {
	getUser := command.New("GetUser", func(ctx context.Context, id string) (string, error) { return "user " + id, nil },
		command.WithRegistry(r), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation})).
		WithCacheKey(func(id string) string { return id })
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		for range 2 {
			_, err := getUser.Execute(req.Context(), "7")
			assert.NoError(t, err, "a cache key needs the request context")
		}
		respond(w)
	})
}

// serve runs one request through h on a test server and returns the
// response, its body read.
func serve(t *testing.T, h http.Handler) (*http.Response, string) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, string(body)
}

func TestRequestContextAddsTheRequestLogHeader(t *testing.T) {
	const log = "GetUser[SUCCESS][0ms], GetUser[SUCCESS, RESPONSE_FROM_CACHE][0ms]"
	cases := []struct {
		name    string
		respond func(w http.ResponseWriter)
	}{
		{"written", func(w http.ResponseWriter) { io.WriteString(w, "ok") }},
		{"a status first", func(w http.ResponseWriter) { w.WriteHeader(http.StatusAccepted); io.WriteString(w, "ok") }},
		{"flushed by assertion", func(w http.ResponseWriter) { w.(http.Flusher).Flush(); io.WriteString(w, "ok") }},
		{"flushed by ResponseController", func(w http.ResponseWriter) {
			require.NoError(t, http.NewResponseController(w).Flush())
			io.WriteString(w, "ok")
		}},
		{"nothing written", func(w http.ResponseWriter) {}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := command.NewRegistry(command.WithClock(clock.NewManual(t0)))
			defer r.Close()
			resp, _ := serve(t, RequestContext(userService(t, r, tc.respond), WithLogHeader(LogHeader)))
			assert.Equal(t, log, resp.Header.Get("X-HystrixLog"))
		})
	}
}

// An informational response (103 Early Hints) goes before the final
// headers: the log is the one of the final response, with the executions
// made after the hints.
func TestRequestContextLogHeaderAfterAnInformationalResponse(t *testing.T) {
	r := command.NewRegistry(command.WithClock(clock.NewManual(t0)))
	defer r.Close()
	hints := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		userService(t, r, func(w http.ResponseWriter) { io.WriteString(w, "ok") }).ServeHTTP(w, req)
	})
	resp, body := serve(t, RequestContext(hints, WithLogHeader(LogHeader)))
	assert.Equal(t, "ok", body)
	assert.Equal(t, "GetUser[SUCCESS][0ms], GetUser[SUCCESS, RESPONSE_FROM_CACHE][0ms]", resp.Header.Get(LogHeader))
}

func TestRequestContextWithoutLogHeader(t *testing.T) {
	r := command.NewRegistry(command.WithClock(clock.NewManual(t0)))
	defer r.Close()
	resp, body := serve(t, RequestContext(userService(t, r, func(w http.ResponseWriter) { io.WriteString(w, "ok") })))
	assert.Equal(t, "ok", body)
	assert.Empty(t, resp.Header.Values(LogHeader), "no header unless asked")

	resp, _ = serve(t, RequestContext(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.NotNil(t, command.RequestLogFrom(r.Context()), "the request carries a request context")
	}), WithLogHeader("X-Log")))
	assert.Empty(t, resp.Header.Values("X-Log"), "a request that ran no command gets no header")
}

// The request context ends with the request: its log goes to the request
// events stream.
func TestRequestContextPublishesTheRequestWhenItEnds(t *testing.T) {
	r := command.NewRegistry(command.WithClock(clock.NewManual(t0)))
	defer r.Close()
	got := requestEvents(t, r)

	serve(t, RequestContext(userService(t, r, func(w http.ResponseWriter) {})))
	select {
	case e := <-got:
		assert.Equal(t, "GetUser[SUCCESS][0ms], GetUser[SUCCESS, RESPONSE_FROM_CACHE][0ms]", e.String())
	case <-time.After(10 * time.Second):
		t.Fatal("the request was not published")
	}
}

func TestRequestContextPanicsOnBadInput(t *testing.T) {
	ok := http.NotFoundHandler()
	assert.PanicsWithValue(t, "httpcommand: RequestContext with nil argument", func() { RequestContext(nil) })
	assert.PanicsWithValue(t, "httpcommand: RequestContext: option 0 is nil", func() { RequestContext(ok, nil) })
	for _, name := range []string{"", "X Log", "X-Log:", "Ünicode", "X\nLog", "(x)"} {
		assert.Panics(t, func() { WithLogHeader(name) }, "%q", name)
	}
	for _, name := range []string{"X-HystrixLog", "x-log", "A!#$%&'*+-.^_`|~9"} {
		assert.NotPanics(t, func() { WithLogHeader(name) }, "%q", name)
	}
}

// A command key is any UTF-8, and a header value is sent as text: the log
// goes with bytes outside printable ASCII, and '%', percent-encoded, over
// HTTP/1.1 and HTTP/2 alike, where a control character would make HTTP/2
// drop the header and the HTTP/1.1 client fail the response.
func TestRequestContextLogHeaderOfAnyKey(t *testing.T) {
	for _, http2 := range []bool{false, true} {
		t.Run(map[bool]string{false: "HTTP/1.1", true: "HTTP/2"}[http2], func(t *testing.T) {
			r := command.NewRegistry(command.WithClock(clock.NewManual(t0)))
			defer r.Close()
			cfg := command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation})
			odd := command.New("Get\x01Bücher 100%", func(ctx context.Context, id string) (string, error) { return id, nil }, command.WithRegistry(r), cfg)
			srv := httptest.NewUnstartedServer(RequestContext(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				_, err := odd.Execute(req.Context(), "7")
				assert.NoError(t, err)
				io.WriteString(w, "ok")
			}), WithLogHeader(LogHeader)))
			srv.EnableHTTP2 = http2
			srv.StartTLS()
			defer srv.Close()
			resp, err := srv.Client().Get(srv.URL)
			require.NoError(t, err)
			defer resp.Body.Close()
			assert.Equal(t, http2, resp.ProtoMajor == 2)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			assert.Equal(t, "ok", string(body))
			assert.Equal(t, "Get%01B%C3%BCcher 100%25[SUCCESS][0ms]", resp.Header.Get(LogHeader))
		})
	}
}

// A flush the server's writer cannot do sends no headers: the log header
// still lists the executions that end after it, before the response's
// first write.
func TestRequestContextLogHeaderAfterAFlushThatCannotBeDone(t *testing.T) {
	r := command.NewRegistry(command.WithClock(clock.NewManual(t0)))
	defer r.Close()
	cfg := command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation})
	a := command.New("A", func(ctx context.Context, id string) (string, error) { return id, nil }, command.WithRegistry(r), cfg)
	b := command.New("B", func(ctx context.Context, id string) (string, error) { return id, nil }, command.WithRegistry(r), cfg)
	h := RequestContext(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		_, _ = a.Execute(req.Context(), "1")
		assert.ErrorIs(t, http.NewResponseController(w).Flush(), http.ErrNotSupported)
		_, _ = b.Execute(req.Context(), "2")
		_, _ = io.WriteString(w, "ok")
	}), WithLogHeader(LogHeader))
	rec := httptest.NewRecorder()
	h.ServeHTTP(onlyWriter{rec}, httptest.NewRequest(http.MethodGet, "/", nil))
	assert.Equal(t, "ok", rec.Body.String())
	assert.Equal(t, "A[SUCCESS][0ms], B[SUCCESS][0ms]", rec.Header().Get(LogHeader),
		"the flush that could not be done sent no headers")
}

// The request context ends when h returns, whoever serves the request:
// its log is published then, not when the server cancels the request's
// context, which a server other than net/http's (a test's recorder, an
// adapter of serverless events) may never do.
func TestRequestContextEndsWhenTheHandlerReturns(t *testing.T) {
	r := command.NewRegistry(command.WithClock(clock.NewManual(t0)))
	defer r.Close()
	got := requestEvents(t, r)

	h := RequestContext(userService(t, r, func(w http.ResponseWriter) {}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/", nil)) // a context never cancelled
	select {
	case e := <-got:
		assert.Equal(t, "GetUser[SUCCESS][0ms], GetUser[SUCCESS, RESPONSE_FROM_CACHE][0ms]", e.String())
	case <-time.After(failAfter):
		t.Fatal("the request context did not end when the handler returned")
	}
}

// requestEvents subscribes to r's request events stream until the test
// ends, and returns the requests it publishes.
func requestEvents(t *testing.T, r *command.Registry) <-chan metricsstream.RequestEvents {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	got := make(chan metricsstream.RequestEvents, 1)
	r.Metrics().RequestEvents().SubscribeFunc(ctx, func(e metricsstream.RequestEvents) { got <- e }, nil, nil)
	return got
}
