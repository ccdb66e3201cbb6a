// Command throttle sends a downstream three times the calls it can
// serve, then lets it recover, and compares how the callers' circuit
// breakers share out its capacity meanwhile: no breaker, Hystrix's, and
// adaptive throttling (breaker.Config.ThrottleSuccessPercentage) at two
// success thresholds. For each it prints, while the downstream is
// overloaded, the calls a second it served, the calls a second that
// reached it, the calls a second it turned away, and the calls a second
// the breaker answered with the fallback without calling it; then how
// long after the recovery the callers are served in full again.
//
// A Hystrix breaker is all or nothing. Two calls in three fail, so it
// trips, refuses everything for its sleep window, closes on a trial,
// and trips again at the next snapshot: the downstream serves a fraction
// of what it could. Throttling refuses only the share of the calls the
// success rate says the downstream cannot take, so it serves its whole
// capacity while fewer calls reach it to be turned away.
//
// It runs on a simulated clock, in a fraction of a second: time moves in
// steps of 10ms, the callers make their calls of each step one after the
// other, and the downstream serves at most its capacity's share of a
// step and turns the rest away at once.
//
//	go run ./examples/throttle
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/examples/internal/cmdline"
)

func main() {
	o := defaultOptions
	flag.IntVar(&o.Demand, "demand", o.Demand, "calls a second the callers make")
	flag.IntVar(&o.Capacity, "capacity", o.Capacity, "calls a second the overloaded downstream serves")
	flag.DurationVar(&o.Overload, "overload", o.Overload, "how long the downstream is overloaded")
	flag.DurationVar(&o.Recovery, "recovery", o.Recovery, "how long the run goes on once the downstream serves every call")
	cmdline.Parse()
	if err := run(os.Stdout, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

type options struct {
	Demand   int           // calls a second
	Capacity int           // calls a second the overloaded downstream serves
	Overload time.Duration // how long it is overloaded
	Recovery time.Duration // how long the run goes on after
}

var defaultOptions = options{Demand: 300, Capacity: 100, Overload: 30 * time.Second, Recovery: 30 * time.Second}

// step is how far the simulated clock moves between the calls of one
// instant and the next.
const step = 10 * time.Millisecond

func (o options) validate() error {
	perStep := func(n int) float64 { return float64(n) * step.Seconds() }
	switch {
	case o.Demand <= 0 || o.Capacity <= 0:
		return fmt.Errorf("throttle: -demand %d and -capacity %d must be positive", o.Demand, o.Capacity)
	case perStep(o.Demand) != float64(int(perStep(o.Demand))) || perStep(o.Capacity) != float64(int(perStep(o.Capacity))):
		return fmt.Errorf("throttle: -demand %d and -capacity %d must be multiples of %d", o.Demand, o.Capacity, int(time.Second/step))
	case o.Capacity >= o.Demand:
		return fmt.Errorf("throttle: -capacity %d must be less than -demand %d, or the downstream is not overloaded", o.Capacity, o.Demand)
	case o.Overload < time.Second || o.Recovery < time.Second:
		return fmt.Errorf("throttle: -overload %v and -recovery %v must be at least 1s", o.Overload, o.Recovery)
	case o.Overload%step != 0 || o.Recovery%step != 0:
		return fmt.Errorf("throttle: -overload %v and -recovery %v must be multiples of %v", o.Overload, o.Recovery, step)
	}
	return nil
}

// policy is a way for the callers' breaker to protect the downstream.
type policy struct {
	name string
	cfg  breaker.Config
}

var policies = []policy{
	{"no breaker", breaker.Config{Disabled: true}},
	{"Hystrix breaker", breaker.Config{}},
	{"throttle below 50%", breaker.Config{ErrorThresholdPercentage: 100, ThrottleSuccessPercentage: 50}},
	{"throttle below 90%", breaker.Config{ErrorThresholdPercentage: 100, ThrottleSuccessPercentage: 90}},
}

// result is what one policy did: its counts while the downstream was
// overloaded, and how long after the recovery the callers were served in
// full again.
type result struct {
	served, reached, turnedAway, refused int // during the overload
	backAfter                            time.Duration
	back                                 bool
}

var errOverloaded = errors.New("downstream: 503 overloaded")

// refusedAnswer is what the fallback answers for the calls the breaker
// refused, which never reached the downstream.
const refusedAnswer = "fallback"

// simulate runs the scenario for p on a clock of its own.
func simulate(p policy, o options) result {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mc := clock.NewManual(start)
	draws := rand.New(rand.NewPCG(1, 2)) // the same draws at every run
	reg := command.NewRegistry(command.WithClock(mc), command.WithBreakerOptions(breaker.WithRand(draws.Float64)))
	defer reg.Close()

	var capacity, servedThisStep, reachedThisStep int
	call := command.New("Downstream", func(ctx context.Context, _ int) (string, error) {
		reachedThisStep++
		if servedThisStep >= capacity {
			return "", errOverloaded
		}
		servedThisStep++
		return "ok", nil
	}, command.WithRegistry(reg), command.WithConfig(command.Config{
		Isolation: command.SemaphoreIsolation, Timeout: -1, Breaker: p.cfg,
	})).WithFallback(func(ctx context.Context, _ int, err error) (string, error) {
		if errors.Is(err, command.ErrShortCircuited) {
			return refusedAnswer, nil
		}
		return "", err
	})

	var r result
	demand := int(float64(o.Demand) * step.Seconds())
	overloadSteps := int(o.Overload / step)
	stepsPerSecond := int(time.Second / step)
	servedInSecond := 0
	for i := range overloadSteps + int(o.Recovery/step) {
		overloaded := i < overloadSteps
		capacity = demand
		if overloaded {
			capacity = int(float64(o.Capacity) * step.Seconds())
		}
		servedThisStep, reachedThisStep = 0, 0
		for n := range demand {
			v, _ := call.Execute(context.Background(), n)
			if overloaded && v == refusedAnswer {
				r.refused++
			}
		}
		if overloaded {
			r.served += servedThisStep
			r.reached += reachedThisStep
			r.turnedAway += reachedThisStep - servedThisStep
		} else if !r.back {
			// Back in full: a whole second, from the recovery on, in
			// which every call was served.
			servedInSecond += servedThisStep
			if (i-overloadSteps+1)%stepsPerSecond == 0 {
				if servedInSecond == demand*stepsPerSecond {
					r.back = true
					r.backAfter = time.Duration(i-overloadSteps+1)*step - time.Second
				}
				servedInSecond = 0
			}
		}
		mc.Advance(step)
	}
	return r
}

func run(w io.Writer, o options) error {
	if err := o.validate(); err != nil {
		return err
	}
	fmt.Fprintf(w, "%d calls/s to a downstream that serves %d/s for %v, then all of them, for %v\n\n",
		o.Demand, o.Capacity, o.Overload, o.Recovery)
	fmt.Fprintf(w, "%-20s %9s %10s %14s %10s %13s\n", "", "served/s", "reached/s", "turned away/s", "refused/s", "back in full")
	secs := o.Overload.Seconds()
	for _, p := range policies {
		r := simulate(p, o)
		back := "never"
		if r.back {
			back = "after " + r.backAfter.String()
		}
		fmt.Fprintf(w, "%-20s %9.0f %10.0f %14.0f %10.0f %13s\n", p.name,
			float64(r.served)/secs, float64(r.reached)/secs, float64(r.turnedAway)/secs, float64(r.refused)/secs, back)
	}
	return nil
}
