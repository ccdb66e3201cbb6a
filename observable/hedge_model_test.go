package observable

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// TestHedgeSingleFollowsTheModel drives a HedgeSingle's race one step at
// a time, in random orders: the clock to the next hedge's delay, or an
// attempt answering with a value, with a failure, or with an error its
// Wins names. The race is called (its first attempt on the caller's
// goroutine) or subscribed. After each step it checks the attempts
// started and cancelled, and the answer, against a model of the race's
// rules: a hedge starts at each delay while the race is open, at once on
// a failure under OnError; a value, or an error Wins names, ends the race
// and cancels the other attempts; a failure leaves the race to the
// attempts still running, and when none is, it (or another failure that
// came at about the same time) is the answer; a hedge the
// permit refuses does not start, and after one refused at its delay no
// other does.
func TestHedgeSingleFollowsTheModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		newHedgeSingleModel(rt).run()
	})
}

var errWins = errors.New("an answer that wins")

// singleAttempts is a Single whose calls each wait for a note sent on the
// channel of their number, or for their context's end, and report both.
type singleAttempts struct {
	calls   atomic.Int32
	started chan int
	notes   [4]chan note
	ended   [4]chan error
}

func newSingleAttempts() *singleAttempts {
	a := &singleAttempts{started: make(chan int, 4)}
	for i := range a.notes {
		a.notes[i] = make(chan note, 1)
		a.ended[i] = make(chan error, 1)
	}
	return a
}

func (a *singleAttempts) Call(ctx context.Context) (int, error) {
	n := int(a.calls.Add(1)) - 1
	a.started <- n
	select {
	case nt := <-a.notes[n]:
		a.ended[n] <- nil
		return nt.v, nt.err
	case <-ctx.Done():
		a.ended[n] <- ctx.Err()
		return 0, ctx.Err()
	}
}

func (a *singleAttempts) SubscribeSingle(ctx context.Context, r SingleObserver[int]) {
	r.OnResult(a.Call(ctx))
}

func (a *singleAttempts) Async() bool { return false }

type hedgeSingleModel struct {
	rt      *rapid.T
	mc      *clock.Manual
	src     *singleAttempts
	got     chan note
	max     int // attempts the policy allows: the first and its hedges
	delay   time.Duration
	onError bool
	permit  atomic.Bool

	now      time.Duration
	due      time.Duration // when the next hedge starts; -1 if none waits
	attempts []modelAttempt
	failures []string // what the attempts failed with
	over     bool
}

func newHedgeSingleModel(rt *rapid.T) *hedgeSingleModel {
	m := &hedgeSingleModel{
		rt:      rt,
		mc:      clock.NewManual(epoch),
		src:     newSingleAttempts(),
		delay:   time.Duration(rapid.IntRange(1, 5).Draw(rt, "delay")) * 10 * time.Millisecond,
		onError: rapid.Bool().Draw(rt, "onError"),
		got:     make(chan note, 1),
	}
	hedges := rapid.IntRange(0, 3).Draw(rt, "MaxHedges")
	m.max = max(hedges, 1) + 1 // 0 means 1
	h := &HedgeSingle[int]{
		Attempt: m.src,
		Policy:  &HedgePolicy{MaxHedges: hedges, Delay: delayOf(m.delay), OnError: m.onError, Permit: m.permit.Load},
		Clock:   m.mc,
		Wins:    func(err error) bool { return errors.Is(err, errWins) },
	}
	if rapid.Bool().Draw(rt, "called") {
		go func() {
			v, err := h.Call(context.Background())
			m.got <- note{v: v, err: err}
		}()
	} else {
		go h.SubscribeSingle(context.Background(), singleNote(m.got)) // its first attempt on this goroutine
	}
	m.started()
	return m
}

// singleNote passes a result on as a note.
type singleNote chan note

func (s singleNote) OnResult(v int, err error) { s <- note{v: v, err: err} }

func (m *hedgeSingleModel) started() {
	n := within(m.rt, m.src.started, "attempt starting")
	if n != len(m.attempts) {
		m.rt.Fatalf("attempt %d started, want %d", n, len(m.attempts))
	}
	m.attempts = append(m.attempts, attemptRunning)
	m.due = -1
	if len(m.attempts) < m.max {
		m.due = m.now + m.delay
	}
}

func (m *hedgeSingleModel) run() {
	for step := 0; !m.over; step++ {
		var moves []string
		if m.due >= 0 {
			moves = append(moves, "delay")
		}
		for i, a := range m.attempts {
			if a == attemptRunning {
				moves = append(moves, fmt.Sprintf("answer %d", i), fmt.Sprintf("fail %d", i), fmt.Sprintf("wins %d", i))
			}
		}
		if len(moves) == 0 {
			m.rt.Fatalf("the race is open, and nothing can end it: %v", m.attempts)
		}
		var move string
		var i int
		switch fmt.Sscanf(rapid.SampledFrom(moves).Draw(m.rt, "move"), "%s %d", &move, &i); move {
		case "delay":
			m.passDelay()
		case "answer":
			m.ends(i, note{v: 100 + step})
		case "wins":
			m.ends(i, note{err: fmt.Errorf("attempt %d: %w", i, errWins)})
		case "fail":
			m.fail(i, fmt.Errorf("attempt %d fails", i))
		}
	}
	m.mc.Advance(time.Hour) // over: no attempt starts any more
	if n := int(m.src.calls.Load()); n != len(m.attempts) {
		m.rt.Fatalf("%d attempts started, want %d", n, len(m.attempts))
	}
	select {
	case n := <-m.got:
		m.rt.Fatalf("the race answered %+v after its end", n)
	default:
	}
}

func (m *hedgeSingleModel) passDelay() {
	permitted := m.drawPermit()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := m.mc.BlockUntil(ctx, 1); err != nil {
		m.rt.Fatalf("no timer for the hedge due at %v: %v", m.due, err)
	}
	m.mc.Advance(m.due - m.now)
	m.now = m.due
	if permitted {
		m.started()
		return
	}
	m.due = -1
	select {
	case n := <-m.src.started:
		m.rt.Fatalf("attempt %d started, which the permit refused", n)
	case <-time.After(time.Millisecond):
	}
}

func (m *hedgeSingleModel) drawPermit() bool {
	permitted := rapid.Float64Range(0, 1).Draw(m.rt, "permit") < 0.8
	m.permit.Store(permitted)
	return permitted
}

// ends is attempt i answering with what ends the race: every other
// attempt still running is cancelled, and the race answers so.
func (m *hedgeSingleModel) ends(i int, answer note) {
	m.src.notes[i] <- answer
	m.end(i, nil)
	for j, a := range m.attempts {
		if a == attemptRunning {
			m.end(j, context.Canceled)
		}
	}
	m.expect(answer)
}

// fail is attempt i failing with err: out of the race, which starts a
// hedge at once under OnError, if it may, and answers err if no attempt
// is left running.
func (m *hedgeSingleModel) fail(i int, err error) {
	permitted := m.drawPermit()
	m.src.notes[i] <- note{err: err}
	m.end(i, nil)
	m.attempts[i] = attemptFailed
	m.failures = append(m.failures, err.Error())
	switch {
	case m.onError && len(m.attempts) < m.max && permitted:
		m.started()
	case m.running() == 0:
		// The last failure the race was told of; failures that come
		// close together reach it in either order.
		got := within(m.rt, m.got, "the race's failure")
		if got.err == nil || !slices.Contains(m.failures, got.err.Error()) {
			m.rt.Fatalf("the race answered %+v, want one of the failures %v", got, m.failures)
		}
		m.over, m.due = true, -1
	}
}

func (m *hedgeSingleModel) running() int {
	n := 0
	for _, a := range m.attempts {
		if a == attemptRunning {
			n++
		}
	}
	return n
}

func (m *hedgeSingleModel) expect(want note) {
	got := within(m.rt, m.got, fmt.Sprintf("answer %+v", want))
	if got.v != want.v || (got.err == nil) != (want.err == nil) || got.err != nil && got.err.Error() != want.err.Error() {
		m.rt.Fatalf("the race answered %+v, want %+v", got, want)
	}
	m.over, m.due = true, -1
}

func (m *hedgeSingleModel) end(i int, want error) {
	if got := within(m.rt, m.src.ended[i], fmt.Sprintf("end of attempt %d", i)); got != want {
		m.rt.Fatalf("attempt %d ended with %v, want %v", i, got, want)
	}
	m.attempts[i] = attemptEnded
}
