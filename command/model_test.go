package command

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// How a step's execution goes, as the test drives it.
type stepOutcome int

const (
	runSucceeds stepOutcome = iota
	runFails
	runPanics
	runBadRequest
	runTimesOut       // run waits on its context; the clock passes the timeout
	runShortCircuited // the key is forced open for the step
	runRejected       // another execution holds the only permit or worker
	callerLeftBefore  // the caller's context ended before the call
	callerLeavesMid   // the caller's context ends while run waits on it
	faultFails        // an injected error stands in for run (Config.Faults)
	faultDelays       // an injected delay runs into the timeout; run is not called
)

var stepOutcomeNames = [...]string{"succeeds", "fails", "panics", "bad request", "times out",
	"short-circuited", "rejected", "caller left before", "caller leaves mid-run",
	"injected error", "injected delay"}

func (o stepOutcome) String() string { return stepOutcomeNames[o] }

// How a step's fallback goes.
type fallbackOutcome int

const (
	noFallback fallbackOutcome = iota
	fallbackSucceeds
	fallbackFails
)

var errFallbackBoom = errors.New("fallback boom")

// modelInput is what a step's run is called with: what to do, and, for
// the execution that holds the permit of a rejected step, when to stop.
type modelInput struct {
	outcome stepOutcome
	entered chan struct{}   // closed by run when it starts, if not nil
	hold    <-chan struct{} // a blocker's run returns once this is closed
}

func modelRun(ctx context.Context, in modelInput) (string, error) {
	if in.entered != nil {
		close(in.entered)
	}
	switch in.outcome {
	case runFails:
		return "", errBoom
	case runPanics:
		panic("run panicked")
	case runBadRequest:
		return "", BadRequest(errBoom)
	case runTimesOut, callerLeavesMid:
		<-ctx.Done()
		return "", ctx.Err()
	case faultFails, faultDelays:
		return "ran under a fault", nil // a success the model does not expect
	}
	if in.hold != nil {
		<-in.hold
	}
	return "ran", nil
}

func modelFallback(f fallbackOutcome) func(context.Context, modelInput, error) (string, error) {
	return func(context.Context, modelInput, error) (string, error) {
		if f == fallbackFails {
			return "", errFallbackBoom
		}
		return "fell back", nil
	}
}

// expected is what the reference model says of one step: the caller's
// value or error, and the events of its Completion (none when the
// execution never began).
type expected struct {
	value       string
	failure     FailureType // when the caller gets an *Error
	fallbackErr error       // that *Error's FallbackErr
	plainErr    error       // when the caller gets this error as it is
	events      []string    // nil: no Completion
}

// modelStep is Hystrix's semantics for one step, as HYSTRIX.md's table
// gives them.
func modelStep(o stepOutcome, f fallbackOutcome, iso Isolation) expected {
	var failure FailureType
	var event string
	switch o {
	case runSucceeds:
		return expected{value: "ran", events: []string{"SUCCESS"}}
	case runBadRequest:
		return expected{plainErr: ErrBadRequest, events: []string{"BAD_REQUEST"}}
	case callerLeftBefore:
		return expected{plainErr: context.Canceled}
	case callerLeavesMid:
		return expected{plainErr: context.Canceled, events: []string{"CANCELLED"}}
	case runFails, runPanics, faultFails:
		failure, event = CommandFailure, "FAILURE"
	case runTimesOut, faultDelays:
		failure, event = TimeoutFailure, "TIMEOUT"
	case runShortCircuited:
		failure, event = ShortCircuitFailure, "SHORT_CIRCUITED"
	case runRejected:
		failure, event = PoolRejectedFailure, "THREAD_POOL_REJECTED"
		if iso == SemaphoreIsolation {
			failure, event = SemaphoreRejectedFailure, "SEMAPHORE_REJECTED"
		}
	}
	switch f {
	case fallbackSucceeds:
		return expected{value: "fell back", events: []string{event, "FALLBACK_SUCCESS"}}
	case fallbackFails:
		return expected{failure: failure, fallbackErr: errFallbackBoom, events: []string{event, "FALLBACK_FAILURE"}}
	}
	return expected{failure: failure, fallbackErr: ErrFallbackMissing, events: []string{event, "FALLBACK_MISSING"}}
}

// check returns what is wrong with a caller's (v, err) against e, or "".
func (e expected) check(key string, v string, err error) string {
	switch {
	case e.plainErr != nil:
		if !errors.Is(err, e.plainErr) {
			return fmt.Sprintf("error %v, want %v", err, e.plainErr)
		}
		var ce *Error
		if errors.As(err, &ce) {
			return fmt.Sprintf("error %v is an *Error, want %v as it is", err, e.plainErr)
		}
	case e.fallbackErr != nil:
		var ce *Error
		if !errors.As(err, &ce) {
			return fmt.Sprintf("error %v (%T), want an *Error", err, err)
		}
		if ce.Command != key || ce.Failure != e.failure || !errors.Is(ce.FallbackErr, e.fallbackErr) {
			return fmt.Sprintf("*Error{%s, %v, fallback %v}, want {%s, %v, fallback %v}",
				ce.Command, ce.Failure, ce.FallbackErr, key, e.failure, e.fallbackErr)
		}
	default:
		if err != nil || v != e.value {
			return fmt.Sprintf("(%q, %v), want (%q, nil)", v, err, e.value)
		}
	}
	return ""
}

// Every execution mode, in both isolations, over random sequences of
// outcomes on one key, returns what a reference model of Hystrix's
// semantics says and records the events it says, one Completion per
// execution that began; and whatever the sequence, every permit comes
// back, so a step never finds a permit an earlier one kept.
func TestEveryModeFollowsTheModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		iso := rapid.SampledFrom(bothIsolations).Draw(rt, "isolation")
		// A key with no timeout: under semaphore isolation, a Queue's Get
		// or an Observe's First whose context cannot end then runs the
		// execution itself (observable.Joinable).
		timed := rapid.Bool().Draw(rt, "timed")
		m := newModelKey(rt, iso, timed)
		defer m.close()
		outcomes := []stepOutcome{runSucceeds, runFails, runPanics, runBadRequest,
			runShortCircuited, runRejected, callerLeftBefore, callerLeavesMid, faultFails}
		if timed {
			outcomes = append(outcomes, runTimesOut, faultDelays)
		}
		steps := rapid.IntRange(1, 8).Draw(rt, "steps")
		for i := range steps {
			o := rapid.SampledFrom(outcomes).Draw(rt, fmt.Sprintf("outcome %d", i))
			f := rapid.SampledFrom([]fallbackOutcome{noFallback, fallbackSucceeds, fallbackFails}).
				Draw(rt, fmt.Sprintf("fallback %d", i))
			mode := rapid.SampledFrom(execModesOf[modelInput]()).Draw(rt, fmt.Sprintf("mode %d", i))
			// A nil context means Background, for the outcomes that do not
			// end the caller's context.
			nilCtx := o != callerLeftBefore && o != callerLeavesMid && rapid.Bool().Draw(rt, fmt.Sprintf("nil context %d", i))
			m.step(o, f, mode, nilCtx)
		}
	})
}

// modelKey is one key on a manual clock, driven step by step.
type modelKey struct {
	t           *rapid.T
	iso         Isolation
	clock       *clock.Manual
	reg         *Registry
	completions chan metricsstream.Completion
	commands    [3]*Command[modelInput, string] // by fallbackOutcome
}

const modelTimeout = 100 * time.Millisecond

// newModelKey makes the key, with a timeout of modelTimeout when timed
// and none otherwise.
func newModelKey(t *rapid.T, iso Isolation, timed bool) *modelKey {
	mc := clock.NewManual(harnessStart)
	m := &modelKey{t: t, iso: iso, clock: mc, reg: NewRegistry(WithClock(mc)),
		completions: make(chan metricsstream.Completion, 64)}
	m.reg.onCompletion = func(c *metricsstream.Completion) { m.completions <- *c }
	timeout := time.Duration(-1)
	if timed {
		timeout = modelTimeout
	}
	cfg := Config{Isolation: iso, Timeout: timeout, MaxConcurrentRequests: 1,
		Breaker: breaker.Config{RequestVolumeThreshold: 1 << 20}}
	if err := m.reg.ConfigurePool("model", PoolConfig{CoreSize: 1}); err != nil {
		t.Fatal(err)
	}
	m.commands[noFallback] = New("model", modelRun, WithRegistry(m.reg), WithConfig(cfg))
	m.commands[fallbackSucceeds] = New("model", modelRun, WithRegistry(m.reg)).WithFallback(modelFallback(fallbackSucceeds))
	m.commands[fallbackFails] = New("model", modelRun, WithRegistry(m.reg)).WithFallback(modelFallback(fallbackFails))
	return m
}

func (m *modelKey) close() { m.reg.Close() }

// step runs one execution of outcome o with fallback f through mode, with
// a nil context when nilCtx, and checks it against the model.
func (m *modelKey) step(o stepOutcome, f fallbackOutcome, mode execModeOf[modelInput], nilCtx bool) {
	m.t.Helper()
	c := m.commands[f]
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in := modelInput{outcome: o}

	var blocker <-chan callResult[string]
	var release chan struct{}
	switch o {
	case runShortCircuited:
		m.configure(breaker.Config{ForceOpen: true})
		defer m.configure(breaker.Config{})
	case runRejected:
		release = make(chan struct{})
		entered := make(chan struct{})
		hold := modelInput{outcome: runSucceeds, entered: entered, hold: release}
		blocker = goCall(func() (string, error) { return m.commands[noFallback].Execute(context.Background(), hold) })
		m.wait(entered, "the blocker to hold the permit")
	case callerLeftBefore:
		cancel()
	case runTimesOut, callerLeavesMid:
		in.entered = make(chan struct{})
	case faultFails:
		m.configureFaults(FaultConfig{Enabled: true, ErrorPercentage: 100})
		defer m.configureFaults(FaultConfig{})
	case faultDelays:
		m.configureFaults(FaultConfig{Enabled: true, DelayPercentage: 100, Delay: 2 * modelTimeout})
		defer m.configureFaults(FaultConfig{})
	}
	delays := m.reg.state("model", Config{}).faults[faultDelay].Load()

	callerCtx := context.Context(ctx)
	if nilCtx {
		callerCtx = nil
	}
	call := goCall(func() (string, error) { return mode.exec(callerCtx, c, in) })
	switch o {
	case runTimesOut:
		m.wait(in.entered, "run to start")
		m.clock.Advance(modelTimeout)
	case callerLeavesMid:
		m.wait(in.entered, "run to start")
		cancel()
	case faultDelays:
		waitFor(m.t, "the injected delay to begin", func() bool {
			return m.reg.state("model", Config{}).faults[faultDelay].Load() > delays
		})
		m.clock.Advance(modelTimeout)
	}
	res := m.result(call)
	want := modelStep(o, f, m.iso)
	if msg := want.check("model", res.v, res.err); msg != "" {
		m.t.Fatalf("%s, fallback %d, %s: %s", o, f, mode.name, msg)
	}
	if want.events != nil {
		got := eventNames(m.completion().Events)
		if !slices.Equal(sorted(got), sorted(want.events)) {
			m.t.Fatalf("%s, fallback %d, %s: events %v, want %v", o, f, mode.name, got, want.events)
		}
	}
	if blocker != nil {
		close(release)
		if r := m.result(blocker); r.err != nil {
			m.t.Fatalf("the blocker failed: %v", r.err)
		}
		if got := eventNames(m.completion().Events); !slices.Equal(got, []string{"SUCCESS"}) {
			m.t.Fatalf("the blocker recorded %v", got)
		}
	}
	m.settle()
}

// configure sets the key's breaker config, keeping the rest.
func (m *modelKey) configure(b breaker.Config) {
	cfg, _ := m.reg.Config("model")
	b.RequestVolumeThreshold = 1 << 20
	cfg.Breaker = b
	if err := m.reg.Configure("model", cfg); err != nil {
		m.t.Fatal(err)
	}
}

// configureFaults sets the key's faults, keeping the rest.
func (m *modelKey) configureFaults(f FaultConfig) {
	cfg, _ := m.reg.Config("model")
	cfg.Faults = f
	if err := m.reg.Configure("model", cfg); err != nil {
		m.t.Fatal(err)
	}
}

// settle waits until the step's execution has given everything back, and
// checks that it published no second Completion.
func (m *modelKey) settle() {
	k, _ := m.reg.keys.Load("model")
	ks := k.(*keyState)
	deadline := time.Now().Add(stuckAfter)
	for ks.metrics.ConcurrentExecutions() != 0 || ks.fallbackSem.used() != 0 || (m.iso == PoolIsolation && poolWorkerRunning()) {
		if time.Now().After(deadline) {
			m.t.Fatalf("a step kept a permit: %d executions, %d fallbacks", ks.metrics.ConcurrentExecutions(), ks.fallbackSem.used())
		}
		runtime.Gosched()
	}
	select {
	case c := <-m.completions:
		m.t.Fatalf("an extra Completion: %v", eventNames(c.Events))
	default:
	}
}

func (m *modelKey) wait(ch <-chan struct{}, what string) {
	select {
	case <-ch:
	case <-time.After(stuckAfter):
		m.t.Fatalf("timed out waiting for %s", what)
	}
}

func (m *modelKey) result(call <-chan callResult[string]) callResult[string] {
	select {
	case r := <-call:
		return r
	case <-time.After(stuckAfter):
		m.t.Fatalf("the call did not return")
		return callResult[string]{}
	}
}

func (m *modelKey) completion() metricsstream.Completion {
	select {
	case c := <-m.completions:
		return c
	case <-time.After(stuckAfter):
		m.t.Fatalf("no Completion")
		return metricsstream.Completion{}
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
