package httpcommand

import (
	"context"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/observable"
)

// Whatever a key's retries, hedges, timeout and fallback make of a
// request, and whatever its attempts answer (a success, a 404, a 503, a
// transport error) and when (before or after a hedge, a timeout, the
// caller leaving, or the end of the call), every body is closed once:
// each response's that the caller does not get, by the Transport; the
// one the caller gets, by the caller alone; and each request body
// given to the base transport, by it, or by the Transport when it never
// gave it. The caller gets a response or an error, never both; a
// response it gets reads whole.
func TestEveryBodyIsClosedOnce(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := newBodiesHarness(rt)
		defer h.registry.Close()
		h.call(rt)
	})
}

// trackedBody is a body that counts its Closes.
type trackedBody struct {
	io.Reader
	name   string
	closes atomic.Int32
}

func (b *trackedBody) Close() error {
	b.closes.Add(1)
	return nil
}

// fakeAttempt is a request the fake base transport got, waiting for the
// test's answer or its context's end.
type fakeAttempt struct {
	req    *http.Request
	answer chan int // a status, or 0 for a transport error
}

type bodiesHarness struct {
	clock    *clock.Manual
	registry *command.Registry
	client   *http.Client
	attempts chan *fakeAttempt
	// running counts the fake RoundTrips under way. Not a WaitGroup: an
	// attempt a worker begins late may start one while the test waits.
	running atomic.Int32

	mu     sync.Mutex
	bodies []*trackedBody // every body made, requests' and responses'
}

var errConnectionReset = errors.New("connection reset by peer")

func newBodiesHarness(rt *rapid.T) *bodiesHarness {
	h := &bodiesHarness{clock: clock.NewManual(t0), attempts: make(chan *fakeAttempt, 16)}
	h.registry = command.NewRegistry(command.WithClock(h.clock))
	timeout := rapid.SampledFrom([]time.Duration{-1, 50 * time.Millisecond}).Draw(rt, "timeout")
	cfg := command.Config{
		Timeout: timeout,
		Breaker: breaker.Config{ForceClosed: true},
		Retry: command.RetryConfig{
			MaxAttempts: rapid.IntRange(0, 3).Draw(rt, "maxAttempts"),
			Backoff:     observable.Backoff{Initial: 10 * time.Millisecond, Jitter: observable.NoJitter},
		},
		Hedge: command.HedgeConfig{MaxHedges: rapid.IntRange(0, 2).Draw(rt, "maxHedges"), Delay: 10 * time.Millisecond},
	}
	opts := []Option{WithBase(h), WithRegistry(h.registry), WithConfig(func(string) command.Config { return cfg })}
	if rapid.Bool().Draw(rt, "fallback") {
		opts = append(opts, WithFallback(func(*http.Request, error) (*http.Response, error) {
			return &http.Response{StatusCode: http.StatusOK, Body: h.body("fallback"), Header: http.Header{}}, nil
		}))
	}
	h.client = &http.Client{Transport: New(opts...)}
	return h
}

// body returns a new tracked body reading s.
func (h *bodiesHarness) body(s string) *trackedBody {
	b := &trackedBody{Reader: strings.NewReader(s), name: s}
	h.mu.Lock()
	h.bodies = append(h.bodies, b)
	h.mu.Unlock()
	return b
}

// RoundTrip is the fake base transport: it waits for the test's answer
// or the request's end, and closes the request's body, as
// http.RoundTripper must.
func (h *bodiesHarness) RoundTrip(req *http.Request) (*http.Response, error) {
	h.running.Add(1)
	defer h.running.Add(-1)
	if req.Body != nil {
		defer req.Body.Close()
	}
	a := &fakeAttempt{req: req, answer: make(chan int, 1)}
	h.attempts <- a
	select {
	case code := <-a.answer:
		if code == 0 {
			return nil, errConnectionReset
		}
		return &http.Response{StatusCode: code, Status: http.StatusText(code), Header: http.Header{}, Body: h.body("response"), Request: req}, nil
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
}

// request draws a request: a GET, a PUT whose body can be made again, a
// POST sent once, or a POST with an idempotency key.
func (h *bodiesHarness) request(rt *rapid.T, ctx context.Context) *http.Request {
	kind := rapid.SampledFrom([]string{"GET", "PUT", "POST", "POST idempotent"}).Draw(rt, "request")
	method := strings.Fields(kind)[0]
	req, err := http.NewRequestWithContext(ctx, method, "http://downstream.test/orders", nil)
	if err != nil {
		rt.Fatal(err)
	}
	if method != http.MethodGet {
		req.Body = h.body("order")
		req.GetBody = func() (io.ReadCloser, error) { return h.body("order"), nil }
		if kind == "POST" {
			req.GetBody = nil
		}
	}
	if kind == "POST idempotent" {
		req.Header.Set("Idempotency-Key", "order-42")
	}
	return req
}

type callResult struct {
	resp *http.Response
	err  error
}

// call makes one request, answers its attempts, moves the clock and
// maybe leaves, in a random order, then checks every body.
func (h *bodiesHarness) call(rt *rapid.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	req := h.request(rt, ctx)
	done := make(chan callResult, 1)
	go func() {
		resp, err := h.client.Do(req)
		done <- callResult{resp, err}
	}()

	var pending []*fakeAttempt
	collect := func() {
		for {
			select {
			case a := <-h.attempts:
				pending = append(pending, a)
			default:
				return
			}
		}
	}
	answer := func(a *fakeAttempt, code int) {
		a.answer <- code
		for i, p := range pending {
			if p == a {
				pending = append(pending[:i], pending[i+1:]...)
				break
			}
		}
	}
	var result callResult
	finished := false
	for range rapid.IntRange(0, 12).Draw(rt, "steps") {
		collect()
		select {
		case result = <-done:
			finished = true
		default:
		}
		if finished {
			break
		}
		switch rapid.IntRange(0, 3).Draw(rt, "step") {
		case 0:
			if len(pending) > 0 {
				a := rapid.SampledFrom(pending).Draw(rt, "attempt")
				answer(a, rapid.SampledFrom([]int{200, 404, 503, 0}).Draw(rt, "answer"))
			}
		case 1:
			h.clock.Advance(rapid.SampledFrom([]time.Duration{time.Millisecond, 10 * time.Millisecond, 50 * time.Millisecond}).Draw(rt, "advance"))
		case 2:
			cancel()
		case 3: // every attempt at once: their answers race
			code := rapid.SampledFrom([]int{200, 404, 503, 0}).Draw(rt, "answerAll")
			for len(pending) > 0 {
				answer(pending[0], code)
			}
		}
	}
	// Whatever is left: answer every attempt and move the clock on until
	// the caller has its answer, then answer the late ones too.
	deadline := time.Now().Add(10 * time.Second)
	for !finished {
		collect()
		for len(pending) > 0 {
			answer(pending[0], http.StatusOK)
		}
		select {
		case result = <-done:
			finished = true
		case <-time.After(time.Millisecond):
			h.clock.Advance(10 * time.Millisecond)
		}
		if time.Now().After(deadline) {
			rt.Fatalf("the request was never answered")
		}
	}
	cancel()
	for h.running.Load() > 0 {
		if time.Now().After(deadline) {
			rt.Fatalf("a RoundTrip never returned")
		}
		runtime.Gosched()
	}
	collect()
	for _, a := range pending {
		a.answer <- http.StatusOK // too late: its context ended, whichever it sees first
	}

	if (result.resp == nil) == (result.err == nil) {
		rt.Fatalf("the caller got %v and %v", result.resp, result.err)
	}
	if result.resp != nil {
		got, err := io.ReadAll(result.resp.Body)
		if err != nil || (string(got) != "response" && string(got) != "fallback") {
			rt.Fatalf("the caller's body read %q, %v", got, err)
		}
		tracked, _ := result.resp.Body.(*trackedBody) // a fallback's, as it made it
		if b, ok := result.resp.Body.(*body); ok {
			tracked, _ = b.ReadCloser.(*trackedBody)
		}
		if tracked == nil {
			rt.Fatalf("the caller's body %T is none the base transport or the fallback made", result.resp.Body)
		}
		if n := tracked.closes.Load(); n != 0 {
			rt.Fatalf("the caller's body was closed %d times before the caller closed it", n)
		}
		result.resp.Body.Close()
	}
	for {
		h.mu.Lock()
		var open []string
		for _, b := range h.bodies {
			switch n := b.closes.Load(); {
			case n > 1:
				h.mu.Unlock()
				rt.Fatalf("a %s body was closed %d times", b.name, n)
			case n == 0:
				open = append(open, b.name)
			}
		}
		h.mu.Unlock()
		if len(open) == 0 {
			return
		}
		if time.Now().After(deadline) {
			rt.Fatalf("bodies never closed: %v", open)
		}
		runtime.Gosched() // a worker finishing what its attempt left
	}
}
