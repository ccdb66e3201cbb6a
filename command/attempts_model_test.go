package command

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// A call with hedges and retries, driven one event at a time in a random
// order (an attempt succeeds, an attempt fails, the hedge's delay passes,
// an attempt times out, the backoff passes), in every execution mode and
// both isolations,
// returns what a model of the policies says and records one Completion
// per attempt with the events the model says: the winner's SUCCESS, the
// losers' CANCELLED, no fallback for a failure another attempt may still
// make good, the fallback once for the last, HEDGED on every hedge and
// RETRIED on each retry's first execution.
func TestHedgedAndRetriedCallsFollowTheModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := newAttemptsModel(rt)
		defer m.close()
		m.run()
	})
}

// attemptsModel is one call of a key with hedges and retries on, run
// against the model.
type attemptsModel struct {
	t        *rapid.T
	clock    *clock.Manual
	reg      *Registry
	armed    chan time.Duration // the backoffs, as they are armed
	done     chan metricsstream.Completion
	entered  chan *modelAttempt
	leave    context.CancelFunc // ends the caller's context
	c        *Command[int, string]
	mode     execMode
	policy   attemptsPolicy
	fallback bool
	timeout  time.Duration // each execution's, or 0 for none

	// The model's state.
	round   int
	started int                   // attempts started in the round
	pending int                   // hedges started and not yet received
	running map[int]*modelAttempt // by number, received and not yet answered
	numbers int                   // attempts received in the call
	due     time.Duration         // when the next hedge starts, from the call's start; 0 if none waits
	now     time.Duration         // the clock, from the call's start
}

// attemptsPolicy is a key's hedges and retries.
type attemptsPolicy struct {
	hedges, attempts int
	onError          bool
}

// modelAttempt is one attempt's run, waiting for the test's word.
type modelAttempt struct {
	n      int  // in the order the attempts began; set by the test before it answers
	hedge  bool // the model says it is a hedge
	retry  bool // the model says it is a retry's first execution
	answer chan bool
	// deadline is when the attempt times out, from the call's start; 0
	// if it does not.
	deadline time.Duration
}

const (
	modelHedgeDelay = 50 * time.Millisecond
	modelBackoff    = 100 * time.Millisecond // then 200 ms
)

// modelTimeouts are the timeouts the model draws from. Within a round
// every event is due at a sum of at most three timeouts and three hedge
// delays from the round's start; two sums are equal only when their
// terms are, for these timeouts, so two timers never come due at once
// unless the model says so (two attempts started together). Timers due
// at one instant fire in the order they were armed, which the model does
// not know.
var modelTimeouts = []time.Duration{0, 20 * time.Millisecond, 70 * time.Millisecond}

func newAttemptsModel(rt *rapid.T) *attemptsModel {
	mc := clock.NewManual(harnessStart)
	m := &attemptsModel{
		t:       rt,
		clock:   mc,
		armed:   make(chan time.Duration, 4),
		done:    make(chan metricsstream.Completion, 16),
		entered: make(chan *modelAttempt, 4),
		running: map[int]*modelAttempt{},
		policy: attemptsPolicy{
			hedges:   rapid.IntRange(0, 2).Draw(rt, "hedges"),
			attempts: rapid.IntRange(1, 3).Draw(rt, "attempts"),
			onError:  rapid.Bool().Draw(rt, "on error"),
		},
		mode:     rapid.SampledFrom(execModes).Draw(rt, "mode"),
		fallback: rapid.Bool().Draw(rt, "fallback"),
		timeout:  rapid.SampledFrom(modelTimeouts).Draw(rt, "timeout"),
	}
	timeout := m.timeout
	if timeout == 0 {
		timeout = -1
	}
	spy := timerSpy{Manual: mc, armed: m.armed, backoffsOnly: true}
	m.reg = NewRegistry(WithClock(spy))
	m.reg.onCompletion = func(c *metricsstream.Completion) { m.done <- *c }
	run := func(ctx context.Context, _ int) (string, error) {
		a := &modelAttempt{answer: make(chan bool, 1)}
		m.entered <- a
		select {
		case ok := <-a.answer:
			if ok {
				return attemptValue(a.n), nil
			}
			return "", errBoom
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	m.c = New("Attempts", run, WithRegistry(m.reg), WithConfig(Config{
		Isolation: rapid.SampledFrom(bothIsolations).Draw(rt, "isolation"),
		Timeout:   timeout,
		Hedge:     HedgeConfig{MaxHedges: m.policy.hedges, Delay: modelHedgeDelay, OnError: m.policy.onError},
		Retry: RetryConfig{
			MaxAttempts: m.policy.attempts,
			Backoff:     observable.Backoff{Initial: modelBackoff, Jitter: observable.NoJitter},
			Budget:      RetryBudget{MinConcurrency: 100}, // refusals: TestHedgeOnErrorRefusedByTheBudgetRunsTheFallback
		},
	}))
	if m.fallback {
		m.c = m.c.WithFallback(fallbackName)
	}
	return m
}

func attemptValue(n int) string { return fmt.Sprintf("attempt %d", n) }

func (m *attemptsModel) close() { m.reg.Close() }

// run makes the call and drives it to its end.
func (m *attemptsModel) run() {
	ctx, leave := context.WithCancel(context.Background())
	defer leave()
	m.leave = leave
	call := goCall(func() (string, error) { return m.mode.exec(ctx, m.c, 1) })
	m.beginRound()
	var want callResult[string]
	for ended := false; !ended; {
		actions := []string{}
		// The next timer to come due: the hedge's delay, or a timeout.
		next := m.nextTimeout()
		hedgeNext := m.due != 0 && (next == 0 || m.due < next)
		for _, n := range slices.Sorted(maps.Keys(m.running)) {
			actions = append(actions, fmt.Sprintf("succeed %d", n), fmt.Sprintf("fail %d", n))
			if hedgeNext {
				// The failure comes as the hedge has started, before its
				// goroutine may have begun it.
				actions = append(actions, fmt.Sprintf("delay, fail %d", n))
			}
		}
		if hedgeNext {
			actions = append(actions, "delay")
		} else if next != 0 {
			actions = append(actions, "timeout")
		}
		actions = append(actions, "leave")
		action := rapid.SampledFrom(actions).Draw(m.t, fmt.Sprintf("after %d attempts", m.numbers))
		var n int
		switch {
		case action == "delay":
			m.delay()
		case action == "timeout":
			want, ended = m.timeOut(next)
		case action == "leave":
			want, ended = m.callerLeaves(), true
		case strings.HasPrefix(action, "succeed"):
			fmt.Sscanf(action, "succeed %d", &n)
			want, ended = callResult[string]{v: attemptValue(n)}, true
			m.succeed(n)
		case strings.HasPrefix(action, "delay, fail"):
			fmt.Sscanf(action, "delay, fail %d", &n)
			m.delay()
			want, ended = m.fail(n)
		default:
			fmt.Sscanf(action, "fail %d", &n)
			want, ended = m.fail(n)
		}
		m.receiveHedges()
	}
	got := awaitCall(m.t, call)
	if got.err != nil || want.err != nil {
		if !errors.Is(got.err, want.err) || got.v != want.v {
			m.t.Fatalf("the call returned (%q, %v), the model says (%q, %v)", got.v, got.err, want.v, want.err)
		}
	} else if got.v != want.v {
		m.t.Fatalf("the call returned %q, the model says %q", got.v, want.v)
	}
	select {
	case c := <-m.done:
		m.t.Fatalf("an extra Completion: %v", eventNames(c.Events))
	default:
	}
}

// beginRound begins the first execution of a round, and its hedge's wait.
func (m *attemptsModel) beginRound() {
	m.round++
	m.started = 1
	m.arm()
	m.receive(m.round > 1)
}

// delay lets the hedge's delay pass: a hedge starts.
func (m *attemptsModel) delay() {
	m.advance(m.due)
	m.launch()
}

// launch starts a hedge, which the test receives once the step is done,
// and arms the wait for the next.
func (m *attemptsModel) launch() {
	m.started++
	m.pending++
	m.arm()
}

// arm arms the wait for the next hedge, if one may still start.
func (m *attemptsModel) arm() {
	m.due = 0
	if m.started <= m.policy.hedges {
		m.due = m.now + modelHedgeDelay
	}
}

// receiveHedges waits for the hedges started to begin. Two that begin at
// once may do so in either order: the model numbers attempts as they
// begin.
func (m *attemptsModel) receiveHedges() {
	for ; m.pending > 0; m.pending-- {
		m.receive(false)
	}
}

// receive waits for an attempt to begin: a retry's first execution if
// retry is set, a hedge if not and the round has begun.
func (m *attemptsModel) receive(retry bool) {
	a := recv(m.t, m.entered, "an attempt to begin")
	m.numbers++
	a.n, a.hedge, a.retry = m.numbers, m.pending > 0, retry
	if m.timeout > 0 {
		// It began when it was started: at the step just made.
		a.deadline = m.now + m.timeout
	}
	m.running[a.n] = a
}

// nextTimeout is the earliest deadline of the attempts running, or 0.
func (m *attemptsModel) nextTimeout() time.Duration {
	var next time.Duration
	for _, a := range m.running {
		if a.deadline != 0 && (next == 0 || a.deadline < next) {
			next = a.deadline
		}
	}
	return next
}

// advance moves the clock to to, from the call's start.
func (m *attemptsModel) advance(to time.Duration) {
	m.clock.Advance(to - m.now)
	m.now = to
}

// succeed makes attempt n succeed: it wins, and the others are cancelled.
func (m *attemptsModel) succeed(n int) {
	winner := m.running[n]
	delete(m.running, n)
	winner.answer <- true
	want := [][]string{m.events(winner, "SUCCESS")}
	for _, a := range m.running {
		want = append(want, m.events(a, "CANCELLED"))
	}
	m.running = nil
	m.completions(want, fmt.Sprintf("attempt %d won", n))
}

// fail makes attempt n fail, and says whether that ends the call, and
// with what.
func (m *attemptsModel) fail(n int) (callResult[string], bool) {
	a := m.running[n]
	delete(m.running, n)
	a.answer <- false
	return m.failed([]*modelAttempt{a}, "FAILURE", errBoom, fmt.Sprintf("attempt %d failed", n))
}

// timeOut moves the clock to at, when the attempts whose deadline it is
// time out, and says whether that ends the call, and with what.
func (m *attemptsModel) timeOut(at time.Duration) (callResult[string], bool) {
	m.advance(at)
	var out []*modelAttempt
	for _, n := range slices.Sorted(maps.Keys(m.running)) {
		if a := m.running[n]; a.deadline == at {
			out = append(out, a)
			delete(m.running, n)
		}
	}
	return m.failed(out, "TIMEOUT", ErrTimeout, fmt.Sprintf("%d attempts timed out", len(out)))
}

// failed is the failure of the attempts out, at one instant, with
// outcome: it says whether that ends the call, and with what. Attempts
// that fail together ask the race in either order: only the last to ask
// may run the fallback or be retried, and they are alike (each a hedge,
// started at one instant), so the model takes them in order.
func (m *attemptsModel) failed(out []*modelAttempt, outcome string, cause error, after string) (callResult[string], bool) {
	var want [][]string
	for i, a := range out {
		switch {
		case m.policy.onError && m.started <= m.policy.hedges:
			// The failure starts the next hedge, which may still answer: no
			// fallback.
			want = append(want, m.events(a, outcome))
			m.launch()
			continue
		case len(m.running)+m.pending+len(out)-1-i > 0:
			want = append(want, m.events(a, outcome))
			continue
		case m.round < m.policy.attempts:
			want = append(want, m.events(a, outcome))
			m.completions(want, after+", a retry follows")
			backoff := modelBackoff << (m.round - 1)
			if armed := recv(m.t, m.armed, "the backoff"); armed != backoff {
				m.t.Fatalf("a backoff of %v, the model says %v", armed, backoff)
			}
			if rapid.Bool().Draw(m.t, "the caller leaves during the backoff") {
				return m.callerLeaves(), true // no retry begins
			}
			// On a goroutine of its own: the clock calls the retry, which a
			// subscription makes on the timer's goroutine, and which under
			// semaphore isolation runs there until the test answers it.
			go m.clock.Advance(backoff)
			m.now += backoff
			m.beginRound()
			return callResult[string]{}, false
		case m.fallback:
			want = append(want, m.events(a, outcome, "FALLBACK_SUCCESS"))
			m.completions(want, after+", the last")
			return callResult[string]{v: "anonymous"}, true
		default:
			want = append(want, m.events(a, outcome, "FALLBACK_MISSING"))
			m.completions(want, after+", the last")
			return callResult[string]{err: cause}, true
		}
	}
	m.completions(want, after+" beside others")
	return callResult[string]{}, false
}

// callerLeaves ends the caller's context: the attempts running are
// cancelled, none begins, and the call ends with the context's error.
func (m *attemptsModel) callerLeaves() callResult[string] {
	m.leave()
	var want [][]string
	for _, a := range m.running {
		want = append(want, m.events(a, "CANCELLED"))
	}
	m.running = nil
	m.completions(want, "the caller left")
	return callResult[string]{err: context.Canceled}
}

// events is what attempt a records, besides its outcome's events, in
// Hystrix's order.
func (m *attemptsModel) events(a *modelAttempt, outcome ...string) []string {
	names := slices.Clone(outcome)
	if a.hedge {
		names = append(names, "HEDGED")
	}
	if a.retry {
		names = append(names, "RETRIED")
	}
	return names
}

// completions waits for len(want) Completions and checks their events
// against want, in any order.
func (m *attemptsModel) completions(want [][]string, after string) {
	var got, wanted []string
	for _, w := range want {
		c := recv(m.t, m.done, "a Completion after "+after)
		got = append(got, strings.Join(eventNames(c.Events), " "))
		wanted = append(wanted, strings.Join(w, " "))
	}
	slices.Sort(got)
	slices.Sort(wanted)
	if !slices.Equal(got, wanted) {
		m.t.Fatalf("after %s: Completions %q, the model says %q", after, got, wanted)
	}
}
