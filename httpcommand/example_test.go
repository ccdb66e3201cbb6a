package httpcommand_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/httpcommand"
)

// A client's requests run as commands of their host: a 404 comes back as
// it is, a 503 is a failure that the fallback answers.
func Example() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/users/1":
			io.WriteString(w, "ann")
		case "/users/2":
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	registry := command.NewRegistry() // command.DefaultRegistry without WithRegistry
	defer registry.Close()

	client := &http.Client{}
	client.Transport = httpcommand.New(
		httpcommand.WithRegistry(registry),
		httpcommand.WithFallback(func(req *http.Request, err error) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: http.Header{},
				Body: io.NopCloser(strings.NewReader("someone")), Request: req}, nil
		}),
	)
	defer client.CloseIdleConnections()

	for _, path := range []string{"/users/1", "/users/2", "/users/3"} {
		resp, err := client.Get(srv.URL + path)
		if err != nil {
			fmt.Println(err)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Printf("%s: %d %s\n", path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	// Output:
	// /users/1: 200 ann
	// /users/2: 200 someone
	// /users/3: 404 404 page not found
}

// A client's requests run as commands of their host, with Hystrix's
// defaults: a breaker, a pool of 10 workers and a 1s timeout per host,
// on command.DefaultRegistry's dashboard stream and metrics. This is the
// README's snippet.
func ExampleNew() {
	client := &http.Client{}
	client.Transport = httpcommand.New()

	resp, err := client.Get("http://127.0.0.1:9/users/1")
	if err != nil {
		var failed *httpcommand.StatusError
		switch {
		case errors.Is(err, command.ErrShortCircuited): // the host's circuit is open
		case errors.As(err, &failed): // a 5xx or 429: failed.StatusCode
		}
		return
	}
	defer resp.Body.Close() // readable after the command ended with the headers
}

// A service's handler, wrapped so that each request has a request context
// and its response says which commands the request ran.
func ExampleRequestContext() {
	registry := command.NewRegistry(command.WithClock(clock.NewManual(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))))
	defer registry.Close()
	getUser := command.New("GetUser", func(ctx context.Context, id string) (string, error) { return "user " + id, nil },
		command.WithRegistry(registry), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation})).
		WithCacheKey(func(id string) string { return id })
	mux := http.NewServeMux()
	mux.HandleFunc("/users/{id}", func(w http.ResponseWriter, r *http.Request) {
		a, _ := getUser.Execute(r.Context(), r.PathValue("id"))
		b, _ := getUser.Execute(r.Context(), r.PathValue("id")) // served by the request cache
		fmt.Fprintln(w, a, b)
	})
	srv := httptest.NewServer(httpcommand.RequestContext(mux, httpcommand.WithLogHeader(httpcommand.LogHeader)))
	defer srv.Close()

	resp, err := http.Get(srv.URL + "/users/7")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	fmt.Println(resp.Header.Get("X-HystrixLog"))
	// Output:
	// GetUser[SUCCESS][0ms], GetUser[SUCCESS, RESPONSE_FROM_CACHE][0ms]
}

// A server that serves one request at a time: while a slow request holds
// the permit, the next is refused at once with 503, without reaching the
// handler.
func ExampleGuard() {
	registry := command.NewRegistry(command.WithClock(clock.NewManual(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))))
	defer registry.Close()
	started, finish := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/report", func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-finish
		io.WriteString(w, "report")
	})
	guard := &httpcommand.Guard{Handler: mux, Registry: registry, Config: func(string) command.Config {
		return command.Config{MaxConcurrentRequests: 1} // or AdaptiveLimit: limit.Vegas{}
	}}

	slow := make(chan *httptest.ResponseRecorder)
	go func() {
		rec := httptest.NewRecorder()
		guard.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/report", nil))
		slow <- rec
	}()
	<-started
	rec := httptest.NewRecorder()
	guard.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/report", nil))
	fmt.Println("while busy:", rec.Code)
	close(finish)
	rec = <-slow
	fmt.Println("the slow one:", rec.Code, rec.Body)
	// Output:
	// while busy: 503
	// the slow one: 200 report
}

// A guard's rate limit refuses what comes too soon with 429, and says
// when the next token is due.
func ExampleGuard_retryAfter() {
	registry := command.NewRegistry(command.WithClock(clock.NewManual(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))))
	defer registry.Close()
	guard := &httpcommand.Guard{
		Handler:  http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }),
		Registry: registry,
		Config: func(string) command.Config {
			return command.Config{RateLimit: command.RateLimitConfig{Enabled: true, Rate: 0.25, Burst: 1}} // one every 4s
		},
	}
	for range 2 {
		rec := httptest.NewRecorder()
		guard.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
		fmt.Printf("%d Retry-After: %q\n", rec.Code, rec.Header().Get("Retry-After"))
	}
	// Output:
	// 200 Retry-After: ""
	// 429 Retry-After: "4"
}

// A downstream answers 501 Not Implemented for a report it has no
// template for: the request was wrong, not the server, so the 501 comes
// back to the caller as it is, a bad request, not counted in the host's
// health. (By default it is a failure, and the caller gets an error.)
func ExampleWithFailureStatus() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no template for "+r.URL.Path, http.StatusNotImplemented)
	}))
	defer srv.Close()
	registry := command.NewRegistry()
	defer registry.Close()

	client := &http.Client{Transport: httpcommand.New(
		httpcommand.WithRegistry(registry),
		httpcommand.WithFailureStatus(func(code int) bool {
			return code != http.StatusNotImplemented && httpcommand.DefaultFailureStatus(code)
		}),
	)}
	defer client.CloseIdleConnections()
	resp, err := client.Get(srv.URL + "/reports/2026")
	if err != nil {
		fmt.Println(err)
		return
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	fmt.Printf("%d %s\n", resp.StatusCode, strings.TrimSpace(string(b)))
	// Output:
	// 501 no template for /reports/2026
}
