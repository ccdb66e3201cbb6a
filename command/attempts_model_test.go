package command

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
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
		m := newAttemptsModel(rt, false)
		defer m.close()
		m.run()
	})
}

// The same for an ObservableCommand, whose attempts answer in steps: the
// first attempt to emit a value, or to complete, is the stream and the
// others are cancelled, as in gRPC's hedged streams; a failure before a
// value is the race's, as a Command's failure is; and the stream's
// later values, its completion, its failure or the caller's leaving are
// the winner's alone, its failure answered by the fallback after its
// values, with no retry, and never a TIMEOUT: the first value disarmed
// the timeout.
func TestHedgedAndRetriedStreamsFollowTheModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := newAttemptsModel(rt, true)
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
	call     func(context.Context) (string, error)
	policy   attemptsPolicy
	fallback bool
	timeout  time.Duration // each execution's, or 0 for none
	// stream says the command is an ObservableCommand: the call's result
	// is its values joined by ", ". first says the call is First of its
	// ToObservable, which leaves at the first value.
	stream, first bool

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
	n     int  // in the order the attempts began; set by the test before it answers
	hedge bool // the model says it is a hedge
	retry bool // the model says it is a retry's first execution
	// answer is the test's words: "succeed" or "fail" for a Command's
	// run; "emit", "complete" or "fail" for an ObservableCommand's, which
	// tells emitted of each value it has emitted.
	answer  chan string
	emitted chan struct{}
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

func newAttemptsModel(rt *rapid.T, stream bool) *attemptsModel {
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
		fallback: rapid.Bool().Draw(rt, "fallback"),
		timeout:  rapid.SampledFrom(modelTimeouts).Draw(rt, "timeout"),
		stream:   stream,
	}
	timeout := m.timeout
	if timeout == 0 {
		timeout = -1
	}
	spy := timerSpy{Manual: mc, armed: m.armed, backoffsOnly: true}
	m.reg = NewRegistry(WithClock(spy))
	m.reg.onCompletion = func(c *metricsstream.Completion) { m.done <- *c }
	opts := []Option{WithRegistry(m.reg), WithConfig(Config{
		Isolation: rapid.SampledFrom(bothIsolations).Draw(rt, "isolation"),
		Timeout:   timeout,
		Hedge:     HedgeConfig{MaxHedges: m.policy.hedges, Delay: modelHedgeDelay, OnError: m.policy.onError},
		Retry: RetryConfig{
			MaxAttempts: m.policy.attempts,
			Backoff:     observable.Backoff{Initial: modelBackoff, Jitter: observable.NoJitter},
			Budget:      RetryBudget{MinConcurrency: 100}, // refusals: TestHedgeOnErrorRefusedByTheBudgetRunsTheFallback
		},
	})}
	if stream {
		c := NewObservable("Attempts", m.streamAttempt, opts...)
		if m.fallback {
			c = c.WithFallback(fallbackName)
		}
		mode := rapid.SampledFrom(obsModesWithFirstOf[string]()).Draw(rt, "mode")
		m.first = mode.name == "ToObservable.First"
		m.call = func(ctx context.Context) (string, error) {
			vs, err := mode.exec(ctx, c, 1)
			return strings.Join(vs, ", "), err
		}
		return m
	}
	c := New("Attempts", m.runAttempt, opts...)
	if m.fallback {
		c = c.WithFallback(fallbackName)
	}
	mode := rapid.SampledFrom(execModes).Draw(rt, "mode")
	m.call = func(ctx context.Context) (string, error) { return mode.exec(ctx, c, 1) }
	return m
}

// runAttempt is a Command's run: an attempt that waits for the test's
// word, or for its context's end.
func (m *attemptsModel) runAttempt(ctx context.Context, _ int) (string, error) {
	a := &modelAttempt{answer: make(chan string, 1)}
	m.entered <- a
	select {
	case w := <-a.answer:
		if w == "succeed" {
			return attemptValue(a.n), nil
		}
		return "", errBoom
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// streamAttempt is an ObservableCommand's construct: an attempt that
// emits, completes or fails at the test's words, until one ends it or
// its context ends.
func (m *attemptsModel) streamAttempt(context.Context, int) observable.Observable[string] {
	return observable.Create(func(ctx context.Context, o observable.Observer[string]) {
		a := &modelAttempt{answer: make(chan string, 1), emitted: make(chan struct{}, 2)}
		m.entered <- a
		for emitted := false; ; emitted = true {
			select {
			case w := <-a.answer:
				switch {
				case w == "complete":
					o.OnCompleted()
					return
				case w == "fail":
					o.OnError(errBoom)
					return
				case emitted:
					o.OnNext(attemptValue(a.n) + " again")
				default:
					o.OnNext(attemptValue(a.n))
				}
				a.emitted <- struct{}{}
			case <-ctx.Done():
				o.OnError(ctx.Err())
				return
			}
		}
	})
}

func attemptValue(n int) string { return fmt.Sprintf("attempt %d", n) }

func (m *attemptsModel) close() { m.reg.Close() }

// run makes the call and drives it to its end.
func (m *attemptsModel) run() {
	ctx, leave := context.WithCancel(context.Background())
	defer leave()
	m.leave = leave
	call := goCall(func() (string, error) { return m.call(ctx) })
	m.beginRound()
	var want callResult[string]
	for ended := false; !ended; {
		actions := []string{}
		// The next timer to come due: the hedge's delay, or a timeout.
		next := m.nextTimeout()
		hedgeNext := m.due != 0 && (next == 0 || m.due < next)
		answers := []string{"succeed", "fail"}
		if m.stream {
			answers = []string{"emit", "complete", "fail"}
		}
		for _, n := range slices.Sorted(maps.Keys(m.running)) {
			for _, w := range answers {
				actions = append(actions, fmt.Sprintf("%s %d", w, n))
			}
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
		// An attempt's answer is its word and its number.
		i := strings.LastIndexByte(action, ' ')
		word, number := action[:max(i, 0)], action[i+1:]
		n, _ := strconv.Atoi(number)
		switch {
		case action == "delay":
			m.delay()
		case action == "timeout":
			want, ended = m.timeOut(next)
		case action == "leave":
			want, ended = m.callerLeaves(), true
		case word == "delay, fail":
			m.delay()
			want, ended = m.fail(n)
		case word == "fail":
			want, ended = m.fail(n)
		default:
			want, ended = m.win(n, word), true
		}
		m.receiveHedges()
	}
	got := awaitCall(m.t, call)
	if got.err != nil || want.err != nil {
		// What a stream's caller has received before a failure may be
		// any part of its values.
		if !errors.Is(got.err, want.err) || !m.stream && got.v != want.v {
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

// win makes attempt n answer the race with word: a Command's success, or
// an ObservableCommand's first value or its completion without one. The
// others are cancelled, and the call's result is the winner's.
func (m *attemptsModel) win(n int, word string) callResult[string] {
	winner := m.running[n]
	delete(m.running, n)
	winner.answer <- word
	if word == "emit" {
		recv(m.t, winner.emitted, "the first value")
	}
	var want [][]string
	for _, a := range m.running {
		want = append(want, m.events(a, "CANCELLED"))
	}
	m.running = nil
	after := fmt.Sprintf("attempt %d won", n)
	switch {
	case word == "succeed":
		m.completions(append(want, m.events(winner, "SUCCESS")), after)
		return callResult[string]{v: attemptValue(n)}
	case word == "complete" && m.first:
		m.completions(append(want, m.events(winner, "SUCCESS")), after)
		return callResult[string]{err: observable.ErrEmpty}
	case word == "complete":
		m.completions(append(want, m.events(winner, "SUCCESS")), after)
		return callResult[string]{}
	case m.first:
		// First leaves at the value.
		m.completions(append(want, m.events(winner, "EMIT", "CANCELLED")), after)
		return callResult[string]{v: attemptValue(n)}
	}
	m.completions(want, after)
	return m.streamGoesOn(winner)
}

// streamGoesOn drives the stream that attempt a won with its first value
// to its end: its values are the stream's, and its failure is the
// fallback's to answer, after them, with no retry and no other attempt.
// As in Hystrix, the first value has disarmed the timeout: the attempt's
// deadline may pass with nothing recorded.
func (m *attemptsModel) streamGoesOn(a *modelAttempt) callResult[string] {
	first := attemptValue(a.n)
	after := fmt.Sprintf("attempt %d's stream", a.n)
	for {
		actions := []string{"emit, complete", "fail", "leave"}
		if a.deadline > m.now {
			actions = append(actions, "its deadline passes")
		}
		switch rapid.SampledFrom(actions).Draw(m.t, "the stream goes on") {
		case "its deadline passes":
			m.advance(a.deadline)
		case "emit, complete":
			a.answer <- "emit"
			a.answer <- "complete"
			m.completions([][]string{m.events(a, "EMIT", "EMIT", "SUCCESS")}, after+" completed")
			return callResult[string]{v: first + ", " + first + " again"}
		case "leave":
			m.leave()
			m.completions([][]string{m.events(a, "EMIT", "CANCELLED")}, "the caller left "+after)
			return callResult[string]{err: context.Canceled}
		default:
			a.answer <- "fail"
			if m.fallback {
				m.completions([][]string{m.events(a, "EMIT", "FAILURE", "FALLBACK_EMIT", "FALLBACK_SUCCESS")}, after+" failed")
				return callResult[string]{v: first + ", anonymous"}
			}
			m.completions([][]string{m.events(a, "EMIT", "FAILURE", "FALLBACK_MISSING")}, after+" failed")
			return callResult[string]{err: errBoom}
		}
	}
}

// fail makes attempt n fail, and says whether that ends the call, and
// with what.
func (m *attemptsModel) fail(n int) (callResult[string], bool) {
	a := m.running[n]
	delete(m.running, n)
	a.answer <- "fail"
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
			want = append(want, m.events(a, append([]string{outcome}, m.fallbackEvents()...)...))
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

// fallbackEvents are the events of a fallback's value: one value, which
// First of a stream leaves at.
func (m *attemptsModel) fallbackEvents() []string {
	switch {
	case !m.stream:
		return []string{"FALLBACK_SUCCESS"}
	case m.first:
		return []string{"FALLBACK_EMIT", "CANCELLED"}
	}
	return []string{"FALLBACK_EMIT", "FALLBACK_SUCCESS"}
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
