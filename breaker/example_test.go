package breaker_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// snapshots is a HealthSource fed by hand. In a program the health source
// is a command's *metricsstream.CommandMetrics, which emits a snapshot of
// its rolling window every HealthSnapshotInterval.
type snapshots struct {
	mu        sync.Mutex
	observers []observable.Observer[metricsstream.HealthCounts]
	resets    int
}

func (s *snapshots) HealthStream() observable.Observable[metricsstream.HealthCounts] {
	return observable.Create(func(ctx context.Context, o observable.Observer[metricsstream.HealthCounts]) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.observers = append(s.observers, o)
	})
}

func (s *snapshots) ResetStream() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resets++
}

func (s *snapshots) emit(hc metricsstream.HealthCounts) {
	s.mu.Lock()
	observers := s.observers
	s.mu.Unlock()
	for _, o := range observers {
		o.OnNext(hc) // the breaker ignores the subscriptions it has left
	}
}

func ExampleBreaker_openOnFailures() {
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	health := &snapshots{}
	b := breaker.New(breaker.Config{
		RequestVolumeThreshold:   20,
		ErrorThresholdPercentage: 50,
		SleepWindow:              5 * time.Second,
	}, health, breaker.WithClock(clk))
	defer b.Close()

	// 12 of the last 20 requests failed: the next snapshot trips it.
	health.emit(metricsstream.HealthCounts{Total: 20, Errors: 12, ErrorPercentage: 60})
	fmt.Println(b.State(), "allows a request:", b.AttemptExecution())

	// After the sleep window one request is let through as a trial.
	clk.Advance(5*time.Second + time.Millisecond)
	fmt.Println("trial admitted:", b.AttemptExecution(), b.State())
	fmt.Println("another request:", b.AttemptExecution())

	// The trial succeeded: the breaker closes and starts its counts over.
	b.MarkSuccess()
	fmt.Println(b.State(), "allows a request:", b.AttemptExecution())
	fmt.Println("health stream resets:", health.resets)

	// Output:
	// OPEN allows a request: false
	// trial admitted: true HALF_OPEN
	// another request: false
	// CLOSED allows a request: true
	// health stream resets: 1
}

func ExampleBreaker_Transitions() {
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	health := &snapshots{}
	b := breaker.New(breaker.Config{SleepWindow: time.Second}, health,
		breaker.WithClock(clk), breaker.WithName("GetUser"))

	done := make(chan struct{})
	b.Transitions().SubscribeFunc(context.Background(), func(t breaker.Transition) {
		fmt.Printf("%v at %s, %d%% errors\n", t, t.Time.Format("15:04:05.000"), t.Health.ErrorPercentage)
	}, nil, func() { close(done) })

	health.emit(metricsstream.HealthCounts{Total: 40, Errors: 30, ErrorPercentage: 75})
	clk.Advance(1500 * time.Millisecond)
	b.AttemptExecution() // the trial...
	b.MarkNonSuccess()   // ...fails
	clk.Advance(1500 * time.Millisecond)
	b.AttemptExecution() // the next one...
	b.MarkSuccess()      // ...succeeds

	b.Close() // completes the stream after what it holds
	<-done

	// Output:
	// GetUser: CLOSED -> OPEN at 00:00:00.000, 75% errors
	// GetUser: OPEN -> HALF_OPEN at 00:00:01.500, 75% errors
	// GetUser: HALF_OPEN -> OPEN at 00:00:01.500, 75% errors
	// GetUser: OPEN -> HALF_OPEN at 00:00:03.000, 75% errors
	// GetUser: HALF_OPEN -> CLOSED at 00:00:03.000, 75% errors
}

// A command reports the outcome of every execution the breaker admitted;
// that is what keeps a half-open breaker from waiting forever.
func ExampleCircuitBreaker() {
	run := func(cb breaker.CircuitBreaker, call func() error) error {
		if !cb.AttemptExecution() {
			return errors.New("short-circuited")
		}
		if err := call(); err != nil {
			cb.MarkNonSuccess() // failures, timeouts, rejections, cancellations, panics
			return err
		}
		cb.MarkSuccess()
		return nil
	}
	fmt.Println(run(breaker.NoOp(), func() error { return nil }))

	// Output:
	// <nil>
}

func ExampleRegistry_GetOrCreate() {
	var r breaker.Registry
	defer r.Reset()
	health := &snapshots{}

	// Every command with key "GetUser" shares one breaker; the first
	// configuration seen for the key holds.
	a := r.GetOrCreate("GetUser", breaker.Config{SleepWindow: 2 * time.Second}, health)
	b := r.GetOrCreate("GetUser", breaker.Config{SleepWindow: 9 * time.Second}, health)
	fmt.Println(a == b, b.Name(), b.Config().SleepWindow)

	// Output:
	// true GetUser 2s
}

func ExampleConfig_Validate() {
	err := breaker.Config{ErrorThresholdPercentage: 150, SleepWindow: -time.Second}.Validate()
	fmt.Println(errors.Is(err, breaker.ErrInvalidConfig))
	fmt.Println(err)

	// Output:
	// true
	// breaker: Config.ErrorThresholdPercentage is 150: must be between 0 and 100
	// breaker: Config.SleepWindow is -1s: must not be negative
}

func ExampleConfig_halfOpenTrials() {
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	health := &snapshots{}
	b := breaker.New(breaker.Config{HalfOpenTrials: 3}, health, breaker.WithClock(clk))
	defer b.Close()

	health.emit(metricsstream.HealthCounts{Total: 20, Errors: 20, ErrorPercentage: 100})
	clk.Advance(breaker.DefaultSleepWindow + time.Millisecond)
	admitted := 0
	for range 10 {
		if b.AttemptExecution() {
			admitted++
		}
	}
	fmt.Println("trials admitted:", admitted)
	b.MarkSuccess()
	b.MarkSuccess()
	fmt.Println(b.State())
	b.MarkSuccess()
	fmt.Println(b.State())

	// Output:
	// trials admitted: 3
	// HALF_OPEN
	// CLOSED
}

func ExampleConfig_maxSleepWindow() {
	clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	health := &snapshots{}
	b := breaker.New(breaker.Config{SleepWindow: 5 * time.Second, MaxSleepWindow: time.Minute}, health, breaker.WithClock(clk))
	defer b.Close()

	health.emit(metricsstream.HealthCounts{Total: 20, Errors: 20, ErrorPercentage: 100})
	for range 5 {
		fmt.Println(b.State(), "for", b.SleepWindow())
		clk.Advance(b.SleepWindow() + time.Millisecond)
		b.AttemptExecution() // the trial, which fails
		b.MarkNonSuccess()
	}
	clk.Advance(b.SleepWindow() + time.Millisecond)
	b.AttemptExecution() // a trial that succeeds
	b.MarkSuccess()
	fmt.Printf("%v; the next trip opens for %v\n", b.State(), b.SleepWindow())

	// Output:
	// OPEN for 5s
	// OPEN for 10s
	// OPEN for 20s
	// OPEN for 40s
	// OPEN for 1m0s
	// CLOSED; the next trip opens for 5s
}

// The breakers of three instances open together on one dependency's
// failure. A jitter of up to 2s spreads their first trials over two
// seconds; WithRand stands for math/rand/v2 here, so that the output is
// the same at every run.
func ExampleConfig_sleepWindowJitter() {
	for i, share := range []float64{0.1, 0.5, 0.9} {
		clk := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		health := &snapshots{}
		b := breaker.New(breaker.Config{SleepWindow: 5 * time.Second, SleepWindowJitter: 2 * time.Second}, health,
			breaker.WithClock(clk), breaker.WithRand(func() float64 { return share }))
		health.emit(metricsstream.HealthCounts{Total: 20, Errors: 20, ErrorPercentage: 100})
		fmt.Printf("instance %d: first trial after %v\n", i+1, b.SleepWindow())
		b.Close()
	}

	// Output:
	// instance 1: first trial after 5.2s
	// instance 2: first trial after 6s
	// instance 3: first trial after 6.8s
}

// A breaker that throttles below a 50% success rate, the SRE book's
// K = 2, and opens only when every call fails. As the dependency's
// success rate falls, the share of requests it refuses grows, up to the
// 80% default bound; the breaker stays Closed until every call fails.
func ExampleConfig_throttle() {
	health := &snapshots{}
	b := breaker.New(breaker.Config{
		ErrorThresholdPercentage:  100,
		ThrottleSuccessPercentage: 50,
	}, health)
	defer b.Close()

	for _, succeeded := range []int64{100, 60, 45, 30, 10, 0} {
		errs := 100 - succeeded
		health.emit(metricsstream.HealthCounts{Total: 100, Errors: errs, ErrorPercentage: int(errs)})
		fmt.Printf("%3d%% succeed: %v, refuses %2.0f%%\n", succeeded, b.State(), 100*b.ThrottleProbability())
	}

	// Output:
	// 100% succeed: CLOSED, refuses  0%
	//  60% succeed: CLOSED, refuses  0%
	//  45% succeed: CLOSED, refuses 10%
	//  30% succeed: CLOSED, refuses 40%
	//  10% succeed: CLOSED, refuses 79%
	//   0% succeed: OPEN, refuses  0%
}

// A breaker of a command called a few times a minute: Hystrix's volume
// threshold of 20 requests in the window is never reached, so only a run
// of failures can trip it.
func ExampleConfig_consecutiveFailures() {
	b := breaker.New(breaker.Config{ConsecutiveFailures: 3}, &snapshots{})
	defer b.Close()
	done := make(chan breaker.Transition, 1)
	sub := b.Transitions().SubscribeFunc(context.Background(), func(t breaker.Transition) { done <- t }, nil, nil)
	defer sub.Unsubscribe()

	for _, ok := range []bool{false, false, true, false, false, false} {
		b.AttemptExecution()
		if ok {
			b.MarkSuccess()
		} else {
			b.MarkNonSuccess()
		}
		fmt.Println(ok, b.State())
	}
	t := <-done
	fmt.Println(t, "after", t.ConsecutiveFailures, "failures in a row")

	// Output:
	// false CLOSED
	// false CLOSED
	// true CLOSED
	// false CLOSED
	// false CLOSED
	// false OPEN
	// CLOSED -> OPEN after 3 failures in a row
}
