// Hystrixgo is the program of seed 003 ("hystrix-go usage and internals")
// written with rxhystrix: a service calls a downstream site through Do
// with a fallback, under the article's configuration
//
//	Timeout 3s, MaxConcurrentRequests 10, SleepWindow 5s,
//	RequestVolumeThreshold 10, ErrorPercentThreshold 30
//
// and replays the article's experiment against servers on 127.0.0.1:
//
//  1. more concurrent requests than MaxConcurrentRequests: the extra ones
//     are rejected and answered by the fallback;
//  2. the downstream's network goes away: every call fails, and the
//     breaker opens;
//  3. further calls are short-circuited;
//  4. the network comes back; after the sleep window exactly one call of a
//     concurrent batch goes through, as the article's reader wondered
//     ("why only one?"): the breaker lets a single trial through, and its
//     success closes the breaker;
//  5. every call succeeds again.
//
// Step 1 sends 13 requests, not 15: rejections count as errors in the
// breaker's health, and 5 rejections out of 15 requests (33%) would already
// pass the 30% threshold and open the breaker.
//
// The flag -scale multiplies every duration of the article:
//
//	go run ./examples/hystrixgo              # the article's timings
//	go run ./examples/hystrixgo -scale 0.1   # ten times faster
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/examples/internal/cmdline"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// options scale the article's durations.
type options struct {
	// Scale multiplies the timeout, the sleep window and the health
	// snapshot interval; 1 is the article's configuration.
	Scale float64
}

func main() {
	var opts options
	flag.Float64Var(&opts.Scale, "scale", 1, "multiplies every duration of the article's configuration")
	cmdline.Parse()
	if err := run(os.Stdout, opts); err != nil {
		fmt.Fprintln(os.Stderr, "hystrixgo:", err)
		os.Exit(1)
	}
}

// run starts the downstream and the service, replays the article's
// experiment and writes what the callers see to w.
func run(w io.Writer, opts options) error {
	// The longest scaled duration, the run's deadline, is 20s scaled.
	if !(opts.Scale > 0) || float64(20*time.Second)*opts.Scale > float64(math.MaxInt64)/2 {
		return fmt.Errorf("options.Scale is %v: it must be positive, and small enough for the scaled durations to fit a time.Duration", opts.Scale)
	}
	scaled := func(d time.Duration) time.Duration { return time.Duration(float64(d) * opts.Scale) }

	// The article's hystrix.ConfigureCommand("wuqq", ...). command.Configure
	// and command.Do do the same on command.DefaultRegistry; a registry of
	// our own leaves nothing behind when run returns.
	reg := command.NewRegistry()
	defer reg.Close()
	cfg := command.Config{
		Timeout:               scaled(3 * time.Second),
		Isolation:             command.SemaphoreIsolation, // hystrix-go's MaxConcurrentRequests is a limit of concurrent calls
		MaxConcurrentRequests: 10,
		Breaker: breaker.Config{
			SleepWindow:              scaled(5 * time.Second),
			RequestVolumeThreshold:   10,
			ErrorThresholdPercentage: 30,
		},
		Metrics: metricsstream.Config{HealthSnapshotInterval: scaled(500 * time.Millisecond)},
	}
	if err := reg.Configure("wuqq", cfg); err != nil {
		return err
	}
	fmt.Fprintf(w, "wuqq: Timeout %v, MaxConcurrentRequests %d, SleepWindow %v, RequestVolumeThreshold %d, ErrorPercentThreshold %d\n",
		cfg.Timeout, cfg.MaxConcurrentRequests, cfg.Breaker.SleepWindow, cfg.Breaker.RequestVolumeThreshold, cfg.Breaker.ErrorThresholdPercentage)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second+scaled(20*time.Second))
	defer cancel()

	site := newDownstream()
	siteServer := httptest.NewServer(site)
	defer siteServer.Close()
	svc := newService(reg, siteServer.URL)
	defer svc.close()
	server := httptest.NewServer(svc)
	defer server.Close()
	callers := newCallers(server.URL)
	defer callers.close()

	wuqq := reg.Breaker("wuqq")

	fmt.Fprintln(w, "1. 13 concurrent requests, while the downstream holds every call it gets:")
	answers, err := callers.whileHeld(ctx, site, 13, cfg.MaxConcurrentRequests)
	if err != nil {
		return err
	}
	report(w, answers)

	fmt.Fprintln(w, "2. the downstream's network goes away; 10 concurrent requests:")
	site.setUp(false)
	opening := nextTransition(ctx, wuqq, breaker.Open)
	answers, err = callers.burst(ctx, 10)
	if err != nil {
		return err
	}
	report(w, answers)
	opened, err := opening.Get(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   breaker %v -> %v: %d requests in the window, %d%% errors\n",
		opened.From, opened.To, opened.Health.Total, opened.Health.ErrorPercentage)

	fmt.Fprintln(w, "3. 10 more concurrent requests:")
	answers, err = callers.burst(ctx, 10)
	if err != nil {
		return err
	}
	report(w, answers)

	fmt.Fprintf(w, "4. the network is back; after the sleep window (%v), 10 concurrent requests:\n", cfg.Breaker.SleepWindow)
	site.setUp(true)
	if err := sleepUntil(ctx, opened.Time.Add(cfg.Breaker.SleepWindow+time.Millisecond)); err != nil {
		return err
	}
	// The downstream holds the trial until the other nine have their
	// answers, so that they all meet the breaker half-open.
	closing := nextTransition(ctx, wuqq, breaker.Closed)
	answers, err = callers.whileHeld(ctx, site, 10, 1)
	if err != nil {
		return err
	}
	report(w, answers)
	closed, err := closing.Get(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "   breaker %v -> %v\n", closed.From, closed.To)

	fmt.Fprintln(w, "5. 10 concurrent requests:")
	answers, err = callers.burst(ctx, 10)
	if err != nil {
		return err
	}
	report(w, answers)
	return nil
}

// nextTransition returns a Future of b's next transition to state to. It
// subscribes to the transitions before it returns, so that it misses none
// that follows.
func nextTransition(ctx context.Context, b *breaker.Breaker, to breaker.State) *observable.Future[breaker.Transition] {
	return b.Transitions().
		Filter(func(t breaker.Transition) bool { return t.To == to }).
		Take(1).
		ToFutureOn(ctx, observable.Immediate)
}

// service is the article's server on port 8090: each request calls the
// downstream through Do, whose fallback answers "handle error: ...".
type service struct {
	reg  *command.Registry
	url  string
	http *http.Client
}

func newService(reg *command.Registry, url string) *service {
	return &service{reg: reg, url: url, http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 20}}}
}

func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var answer string
	_ = s.reg.Do(r.Context(), "wuqq", func(ctx context.Context) error {
		// talk to other services
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
		if err != nil {
			return err
		}
		resp, err := s.http.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		answer = "ok"
		return err
	}, func(ctx context.Context, err error) error {
		answer = fmt.Sprintf("handle error: %v", err)
		return nil
	})
	io.WriteString(w, answer)
}

func (s *service) close() { s.http.CloseIdleConnections() }
