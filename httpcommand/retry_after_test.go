package httpcommand

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/observable"
)

func TestRetryAfterHeaderParses(t *testing.T) {
	now := t0
	date := func(d time.Duration) string { return now.Add(d).Format(http.TimeFormat) }
	for _, tc := range []struct {
		name        string
		retryAfter  string
		serverDate  string
		want        time.Duration
		wantWordSet bool
	}{
		{"seconds", "120", "", 2 * time.Minute, true},
		{"zero seconds", "0", "", 0, true},
		{"a date, from the response's Date", date(90 * time.Second), date(30 * time.Second), time.Minute, true},
		{"a date, from now without a Date", date(90 * time.Second), "", 90 * time.Second, true},
		{"a date, from now when Date is not a date", date(90 * time.Second), "yesterday", 90 * time.Second, true},
		{"a date already past", date(-time.Minute), "", 0, true},
		{"seconds beyond a century", "99999999999999", "", maxRetryAfter.Truncate(time.Second), true},
		{"a date beyond a century", "Fri, 31 Dec 9999 23:59:59 GMT", "", maxRetryAfter, true},
		{"seconds beyond 63 bits", "99999999999999999999", "", maxRetryAfter.Truncate(time.Second), true},
		{"no header", "", "", 0, false},
		{"negative seconds", "-1", "", 0, false},
		{"a fraction", "1.5", "", 0, false},
		{"neither", "soon", "", 0, false},
	} {
		h := http.Header{}
		if tc.retryAfter != "" {
			h.Set("Retry-After", tc.retryAfter)
		}
		if tc.serverDate != "" {
			h.Set("Date", tc.serverDate)
		}
		got, ok := retryAfter(h, now)
		assert.Equal(t, tc.wantWordSet, ok, tc.name)
		assert.Equal(t, tc.want, got, tc.name)
	}

	var p observable.Pushback = &StatusError{Header: http.Header{"Retry-After": {"3"}}}
	got, ok := p.RetryAfter()
	assert.True(t, ok)
	assert.Equal(t, 3*time.Second, got, "a StatusError is the pushback a retry policy finds")
}

func TestGuardRefusalsSayWhenToComeBack(t *testing.T) {
	t.Run("the rate limit: until the next token", func(t *testing.T) {
		g := newGuardHarness(t, status(http.StatusOK), command.Config{
			RateLimit: command.RateLimitConfig{Enabled: true, Rate: 0.5, Burst: 1},
		})
		ok := g.serve("/")
		assert.Equal(t, http.StatusOK, ok.Code)
		assert.Empty(t, ok.Header().Get("Retry-After"), "an answer of the handler's is its own")
		refused := g.serve("/")
		assert.Equal(t, http.StatusTooManyRequests, refused.Code)
		assert.Equal(t, "2", refused.Header().Get("Retry-After"), "a token every 2s")
		g.Clock.Advance(1500 * time.Millisecond)
		assert.Equal(t, "1", g.serve("/").Header().Get("Retry-After"), "500ms, rounded up")
	})
	t.Run("an open circuit: until its sleep window ends", func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
		g := newGuardHarness(t, h, command.Config{Breaker: breaker.Config{RequestVolumeThreshold: 2, SleepWindow: 30 * time.Second}})
		g.guard.CircuitBreaker = true
		for range 2 {
			assert.Empty(t, g.serve("/").Header().Get("Retry-After"), "the handler's own 500")
		}
		g.Clock.Advance(500 * time.Millisecond) // the health snapshot's interval
		refused := g.serve("/")
		assert.Equal(t, http.StatusServiceUnavailable, refused.Code)
		assert.Equal(t, "30", refused.Header().Get("Retry-After"))
	})
	t.Run("the longest sleep window, rounded up without wrapping around", func(t *testing.T) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) })
		g := newGuardHarness(t, h, command.Config{Breaker: breaker.Config{RequestVolumeThreshold: 2, SleepWindow: math.MaxInt64}})
		g.guard.CircuitBreaker = true
		for range 2 {
			g.serve("/")
		}
		g.Clock.Advance(500 * time.Millisecond)
		refused := g.serve("/")
		assert.Equal(t, http.StatusServiceUnavailable, refused.Code)
		assert.Equal(t, "9223372037", refused.Header().Get("Retry-After"), "the longest Duration less 500ms, rounded up")
	})
	t.Run("the permits: when one frees is not known", func(t *testing.T) {
		b := newBlocking()
		g := newGuardHarness(t, b, command.Config{MaxConcurrentRequests: 1})
		first := make(chan *httptest.ResponseRecorder)
		go func() { first <- g.serve("/a") }()
		<-b.entered
		refused := g.serve("/b")
		assert.Equal(t, http.StatusServiceUnavailable, refused.Code)
		assert.NotContains(t, refused.Header(), "Retry-After")
		close(b.release)
		<-first
	})
	t.Run("set before ErrorHandler, which may answer otherwise", func(t *testing.T) {
		g := newGuardHarness(t, status(http.StatusOK), command.Config{
			RateLimit: command.RateLimitConfig{Enabled: true, Rate: 1, Burst: 1},
		})
		var seen string
		g.guard.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
			seen = w.Header().Get("Retry-After")
			w.Header().Del("Retry-After")
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		g.serve("/")
		refused := g.serve("/")
		assert.Equal(t, "1", seen)
		assert.NotContains(t, refused.Header(), "Retry-After")
	})
}

// A Transport whose key retries, refused by a guard's rate limit, waits
// the Retry-After the guard sent, not its own backoff of a millisecond,
// and is served when it comes back.
func TestTransportRetryWaitsTheGuardsRetryAfter(t *testing.T) {
	var served atomic.Int32
	g := newGuardHarness(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
	}), command.Config{RateLimit: command.RateLimitConfig{Enabled: true, Rate: 1, Burst: 1}})
	srv := httptest.NewServer(g.guard)
	t.Cleanup(srv.Close)
	h := newHarness(t, WithConfig(func(string) command.Config {
		return command.Config{Timeout: -1, Retry: command.RetryConfig{
			MaxAttempts: 2,
			Backoff:     observable.Backoff{Initial: time.Millisecond, Jitter: observable.NoJitter},
		}}
	}))

	resp, err := h.get(t, srv.URL)
	require.NoError(t, err)
	readBody(t, resp)
	idle := h.clock.Pending()

	done := make(chan int, 1)
	go func() {
		resp, err := h.get(t, srv.URL)
		assert.NoError(t, err)
		if err == nil {
			readBody(t, resp)
			done <- resp.StatusCode
		}
		close(done)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, h.clock.BlockUntil(ctx, idle+1), "refused, the request waits for its retry")
	h.clock.Advance(time.Second - time.Millisecond)
	assert.Equal(t, idle+1, h.clock.Pending(), "still waiting, long after the backoff's millisecond")
	g.Clock.Advance(time.Second) // the server has a token again
	h.clock.Advance(time.Millisecond)
	assert.Equal(t, http.StatusOK, <-done)
	assert.Equal(t, int32(2), served.Load())
	assert.Equal(t, "[SUCCESS: 2, FAILURE: 1, RETRIED: 1]", h.events(hostOf(srv)).String())
}
