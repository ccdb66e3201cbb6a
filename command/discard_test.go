package command

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/observable"
)

// How a step of TestEveryValueIsReceivedOrDiscarded goes.
type discardStep int

const (
	answersAtOnce            discardStep = iota // run returns a value at once
	answersAfterTimeout                         // run returns a value once the timeout has ended its context
	answersAfterCallerLeft                      // run returns a value once the caller has left
	answersAsTimeoutPasses                      // run moves the clock past the timeout, then returns a value
	fallsBack                                   // run fails; the fallback returns a value at once
	fallsBackAfterCallerLeft                    // run fails; the fallback returns a value once the caller has left
	hedgesAnswerTogether                        // the first attempt and a hedge return values at about the same time
)

var discardStepNames = [...]string{"answers at once", "answers after the timeout",
	"answers after the caller left", "answers as the timeout passes", "falls back",
	"falls back after the caller left", "hedges answer together"}

func (s discardStep) String() string { return discardStepNames[s] }

// discardInput is what a step's run and fallback are called with.
type discardInput struct {
	step    discardStep
	entered chan struct{} // told once by the user code the test waits for
	mu      sync.Mutex
	calls   int           // runs so far: a hedge is the second
	both    chan struct{} // closed by the hedge, which the first attempt waits for
}

// enter tells the test the user code it waits for has begun, once.
func (in *discardInput) enter() {
	select {
	case in.entered <- struct{}{}:
	default:
	}
}

// discardKey is a key whose every run and fallback returns a value of its
// own, and whose command keeps account of each: produced, received by a
// caller, discarded.
type discardKey struct {
	t     *rapid.T
	clock interface{ Advance(time.Duration) }
	reg   *Registry
	cmd   *Command[*discardInput, string]
	obs   *ObservableCommand[*discardInput, string] // of the same run and fallback, as Singles

	mu        sync.Mutex
	next      int
	running   int // runs and fallbacks that have not returned
	produced  []string
	received  []string
	discarded []string
}

const (
	discardTimeout = 100 * time.Millisecond
	discardHedge   = 10 * time.Millisecond
)

// Whatever happens to an execution, in every mode and both isolations,
// hedged or not, each value its run or fallback returns with a nil error
// reaches exactly one place: the caller, or WithDiscard's function.
func TestEveryValueIsReceivedOrDiscarded(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		d, steps := drawDiscardKey(rt)
		defer d.reg.Close()
		modes := execModesOf[*discardInput]()
		for i := range rapid.IntRange(1, 6).Draw(rt, "steps") {
			step := rapid.SampledFrom(steps).Draw(rt, fmt.Sprintf("step %d", i))
			mode := rapid.SampledFrom(modes).Draw(rt, fmt.Sprintf("mode %d", i))
			d.step(step, mode.name, func(ctx context.Context, in *discardInput) ([]string, error) {
				v, err := mode.exec(ctx, d.cmd, in)
				if err != nil {
					return nil, err
				}
				return []string{v}, nil
			})
		}
	})
}

type streamDiscardMode struct {
	name string
	exec func(ctx context.Context, c *ObservableCommand[*discardInput, string], in *discardInput) ([]string, error)
}

// streamDiscardModes are the ways of executing an ObservableCommand of
// discardKey. Observe is not among them: its replay keeps the values it
// was given for the subscribers to come (see ObservableCommand.WithDiscard).
var streamDiscardModes = []streamDiscardMode{
	{"Execute", func(ctx context.Context, c *ObservableCommand[*discardInput, string], in *discardInput) ([]string, error) {
		return c.Execute(ctx, in)
	}},
	{"ToObservable.First", func(ctx context.Context, c *ObservableCommand[*discardInput, string], in *discardInput) ([]string, error) {
		v, err := c.ToObservable(ctx, in).First(ctx)
		if err != nil {
			return nil, err
		}
		return []string{v}, nil
	}},
	{"Queue.Get", func(ctx context.Context, c *ObservableCommand[*discardInput, string], in *discardInput) ([]string, error) {
		return c.Queue(ctx, in).Get(ctx)
	}},
}

// The same of an ObservableCommand whose Observable and fallback are
// synchronous Singles (observable.FromFunc) of the same run and fallback:
// each value they give reaches exactly one place, the caller or
// WithDiscard's function. Hedged, First's attempts are calls, as a
// Command's are (observable_first.go); the other modes' are
// subscriptions of a hedged stream, whose values pass through the
// hedge's operators as the caller leaves or another attempt wins.
func TestEveryValueOfAnObservableCommandIsReceivedOrDiscarded(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		d, steps := drawDiscardKey(rt)
		defer d.reg.Close()
		for i := range rapid.IntRange(1, 6).Draw(rt, "steps") {
			step := rapid.SampledFrom(steps).Draw(rt, fmt.Sprintf("step %d", i))
			mode := rapid.SampledFrom(streamDiscardModes).Draw(rt, fmt.Sprintf("mode %d", i))
			d.step(step, mode.name, func(ctx context.Context, in *discardInput) ([]string, error) {
				return mode.exec(ctx, d.obs, in)
			})
		}
	})
}

// discarded records what a WithDiscard function was handed.
type discarded struct {
	mu sync.Mutex
	vs []string
}

func (d *discarded) discard(v string) {
	d.mu.Lock()
	d.vs = append(d.vs, v)
	d.mu.Unlock()
}

func (d *discarded) values() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.vs)
}

// drawDiscardKey draws an isolation and whether the key hedges, and
// returns the key and the steps it may take: a hedged key's hedges
// answer together; an unhedged key's timeout passes.
func drawDiscardKey(rt *rapid.T) (d *discardKey, steps []discardStep) {
	iso := rapid.SampledFrom(bothIsolations).Draw(rt, "isolation")
	hedged := rapid.Bool().Draw(rt, "hedged")
	steps = []discardStep{answersAtOnce, answersAfterCallerLeft, fallsBack, fallsBackAfterCallerLeft}
	if hedged {
		steps = append(steps, hedgesAnswerTogether)
	} else {
		steps = append(steps, answersAfterTimeout, answersAsTimeoutPasses)
	}
	return newDiscardKey(rt, iso, hedged), steps
}

// newDiscardKey makes the key: a timeout of discardTimeout unless hedged,
// a hedge after discardHedge if hedged (and then no timeout, so that only
// a step that hedges moves the clock past the delay).
func newDiscardKey(t *rapid.T, iso Isolation, hedged bool) *discardKey {
	mc := clock.NewManual(harnessStart)
	d := &discardKey{t: t, clock: mc, reg: NewRegistry(WithClock(mc))}
	cfg := Config{Isolation: iso, Timeout: discardTimeout}
	if hedged {
		cfg.Timeout = -1
		cfg.Hedge = HedgeConfig{MaxHedges: 1, Delay: discardHedge}
	}
	d.cmd = New("discard", d.run, WithRegistry(d.reg), WithConfig(cfg)).
		WithFallback(d.fallback).
		WithDiscard(d.discard)
	d.obs = NewObservable("discard-stream", func(_ context.Context, in *discardInput) observable.Observable[string] {
		return observable.FromFunc(func(ctx context.Context) (string, error) { return d.run(ctx, in) })
	}, WithRegistry(d.reg), WithConfig(cfg)).
		WithFallback(d.fallback).
		WithDiscard(d.discard)
	return d
}

// produce returns a value never returned before, and counts it.
func (d *discardKey) produce() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.next++
	v := fmt.Sprintf("v%d", d.next)
	d.produced = append(d.produced, v)
	return v
}

func (d *discardKey) discard(v string) {
	d.mu.Lock()
	d.discarded = append(d.discarded, v)
	d.mu.Unlock()
}

// enterUserCode counts a run or fallback in until the function it
// returns is called, as it returns.
func (d *discardKey) enterUserCode() (returned func()) {
	d.mu.Lock()
	d.running++
	d.mu.Unlock()
	return func() {
		d.mu.Lock()
		d.running--
		d.mu.Unlock()
	}
}

func (d *discardKey) run(ctx context.Context, in *discardInput) (string, error) {
	defer d.enterUserCode()()
	switch in.step {
	case fallsBack, fallsBackAfterCallerLeft:
		return "", errBoom
	case answersAfterTimeout, answersAfterCallerLeft:
		in.enter()
		<-ctx.Done()
	case answersAsTimeoutPasses:
		d.clock.Advance(discardTimeout)
	case hedgesAnswerTogether:
		in.mu.Lock()
		in.calls++
		first := in.calls == 1
		in.mu.Unlock()
		if first {
			in.enter()
			<-in.both
		} else {
			close(in.both)
		}
	}
	return d.produce(), nil
}

func (d *discardKey) fallback(ctx context.Context, in *discardInput, _ error) (string, error) {
	defer d.enterUserCode()()
	if in.step == fallsBackAfterCallerLeft {
		in.enter()
		<-ctx.Done()
	}
	return d.produce(), nil
}

// step runs one execution of step through mode and checks the account
// once every value is in.
//
// exec returns the values the caller received, which come with an error
// when a stream fails part way.
func (d *discardKey) step(step discardStep, mode string, exec func(context.Context, *discardInput) ([]string, error)) {
	d.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := &discardInput{step: step, entered: make(chan struct{}, 1), both: make(chan struct{})}
	call := goCall(func() ([]string, error) { return exec(ctx, in) })
	switch step {
	case answersAfterTimeout:
		recv(d.t, in.entered, "run to start")
		d.clock.Advance(discardTimeout)
	case answersAfterCallerLeft, fallsBackAfterCallerLeft:
		recv(d.t, in.entered, "the user code to start")
		cancel()
	case hedgesAnswerTogether:
		recv(d.t, in.entered, "the first attempt to start")
		d.clock.Advance(discardHedge)
	}
	res := awaitCall(d.t, call)
	d.mu.Lock()
	d.received = append(d.received, res.v...) // a stream's values come with its error too
	d.mu.Unlock()
	what := fmt.Sprintf("%s, %s: every value received or discarded", step, mode)
	// A call may return before its user code does (the caller left, a
	// hedge won): the account is checked once all of it has returned.
	waitFor(d.t, what, func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		return d.running == 0 && len(d.received)+len(d.discarded) >= len(d.produced)
	})
	d.mu.Lock()
	defer d.mu.Unlock()
	got := slices.Concat(d.received, d.discarded)
	slices.Sort(got)
	want := slices.Clone(d.produced)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		d.t.Fatalf("%s, %s: produced %v, received %v, discarded %v", step, mode,
			d.produced, d.received, d.discarded)
	}
}

func TestWithDiscardNilPanicsNamingTheKey(t *testing.T) {
	reg := NewRegistry()
	defer reg.Close()
	c := New("discard-nil", succeedRun, WithRegistry(reg))
	defer func() {
		msg := fmt.Sprint(recover())
		if !strings.Contains(msg, "discard-nil") || !strings.Contains(msg, "WithDiscard") {
			t.Fatalf("panic %q, want one naming the key and WithDiscard", msg)
		}
	}()
	c.WithDiscard(nil)
}
