package httpcommand

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// handlerPlan is what one request's handler does: it writes a status or
// not, a body or not, flushes or not, and then returns, panics, or
// waits for its context, which the guard's timeout ends.
type handlerPlan struct {
	status int // 0: none written
	body   bool
	flush  bool
	end    string // "return", "panic" or "timeout"
}

func (p handlerPlan) String() string {
	return fmt.Sprintf("status %d, body %v, flush %v, then %s", p.status, p.body, p.flush, p.end)
}

// started returns the status of the response the handler began, 0 if
// it began none.
func (p handlerPlan) started() int {
	switch {
	case p.status != 0:
		return p.status
	case p.body || p.flush:
		return http.StatusOK
	}
	return 0
}

// Whatever the handler writes and however it ends, under either
// isolation: the response is the handler's when it began one, the
// guard's 503 when it timed out before beginning one, and net/http's
// empty 200 otherwise; a panic reaches the server with its value; and
// every request is counted once, as what its ending says.
func TestGuardAnswersAndCountsEveryRequestOnce(t *testing.T) {
	const timeout = 300 * time.Millisecond
	rapid.Check(t, func(rt *rapid.T) {
		isolation := rapid.SampledFrom([]command.Isolation{command.SemaphoreIsolation, command.PoolIsolation}).Draw(rt, "isolation")
		clk := clock.NewManual(t0)
		reg := command.NewRegistry(command.WithClock(clk))
		defer reg.Close()

		// Under pool isolation the caller times out on its own goroutine,
		// while the handler runs on a worker: a handler that returned as
		// its context ended could beat the caller's timer, and its answer
		// would stand (command.Config.Timeout). The handler that waits for
		// its context so waits, under a pool, until the TIMEOUT is
		// recorded.
		timedOut := make(chan struct{}, 1)
		reg.AddEventNotifier(command.EventNotifierFunc(func(_ string, e metricsstream.EventType) {
			if e == metricsstream.Timeout {
				select {
				case timedOut <- struct{}{}:
				default: // under a semaphore nobody waits for it
				}
			}
		}))
		release := make(chan struct{})

		var plan handlerPlan
		entered := make(chan struct{}, 1)
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if plan.status != 0 {
				w.WriteHeader(plan.status)
			}
			if plan.body {
				_, _ = io.WriteString(w, "handler's")
			}
			if plan.flush {
				w.(http.Flusher).Flush()
			}
			switch plan.end {
			case "panic":
				panic("handler's panic")
			case "timeout":
				entered <- struct{}{}
				<-r.Context().Done()
				if isolation == command.PoolIsolation {
					<-release
				}
			}
		})
		guard := &Guard{Handler: h, Registry: reg, Config: func(string) command.Config {
			return command.Config{Isolation: isolation, Timeout: timeout}
		}}

		var want metricsstream.EventTotals
		requests := rapid.IntRange(1, 8).Draw(rt, "requests")
		for i := range requests {
			plan = handlerPlan{
				status: rapid.SampledFrom([]int{0, 200, 204, 302, 404, 429, 500, 503}).Draw(rt, "status"),
				body:   rapid.Bool().Draw(rt, "body"),
				flush:  rapid.Bool().Draw(rt, "flush"),
				end:    rapid.SampledFrom([]string{"return", "panic", "timeout"}).Draw(rt, "end"),
			}
			rec := httptest.NewRecorder()
			panicked := make(chan any, 1)
			go func() {
				defer func() { panicked <- recover() }()
				guard.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
			}()
			if plan.end == "timeout" {
				<-entered
				clk.Advance(timeout)
				if isolation == command.PoolIsolation {
					<-timedOut
					release <- struct{}{}
				}
			}
			v := <-panicked

			began := plan.started()
			switch {
			case plan.end == "panic":
				if v != "handler's panic" {
					rt.Fatalf("request %d (%v): the server got the panic %v", i, plan, v)
				}
				want[metricsstream.Failure]++
				want[metricsstream.FallbackMissing]++
				want[metricsstream.ExceptionThrown]++
				continue
			case v != nil:
				rt.Fatalf("request %d (%v): panicked with %v", i, plan, v)
			case plan.end == "timeout":
				want[metricsstream.Timeout]++
				want[metricsstream.FallbackMissing]++
				want[metricsstream.ExceptionThrown]++
			case began >= 500 || began == http.StatusTooManyRequests:
				want[metricsstream.Failure]++
				want[metricsstream.FallbackMissing]++
				want[metricsstream.ExceptionThrown]++
			case began >= 400:
				want[metricsstream.BadRequest]++
				want[metricsstream.ExceptionThrown]++
			default:
				want[metricsstream.Success]++
			}

			wantCode, wantBody := began, ""
			if plan.body {
				wantBody = "handler's"
			}
			if began == 0 {
				wantCode = http.StatusOK // net/http's, for a handler that wrote nothing
				if plan.end == "timeout" {
					wantCode, wantBody = http.StatusServiceUnavailable, "Service Unavailable\n"
				}
			}
			if rec.Code != wantCode || rec.Body.String() != wantBody {
				rt.Fatalf("request %d (%v): answered %d %q, want %d %q", i, plan, rec.Code, rec.Body.String(), wantCode, wantBody)
			}
		}

		clk.Advance(time.Second)
		m, _ := reg.Metrics().LookupCommand(DefaultGuardKey)
		if got := m.CumulativeCounts(); got != want {
			rt.Fatalf("counted %v, want %v", got, want)
		}
	})
}
