package observable

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
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

type hedgeSingleModel struct {
	raceModel
	src      *attempts // each answers with its number, or fails
	got      <-chan note
	failures []string // what the attempts failed with
	over     bool
}

func newHedgeSingleModel(rt *rapid.T) *hedgeSingleModel {
	src := newAttempts()
	m := &hedgeSingleModel{raceModel: newRaceModel(rt, src.started, src.ended[:]), src: src}
	hedges := rapid.IntRange(0, 3).Draw(rt, "MaxHedges")
	m.max = max(hedges, 1) + 1 // 0 means 1
	one, _ := src.observable().AsSingle()
	h := &HedgeSingle[int]{
		Attempt: one,
		Policy:  &HedgePolicy{MaxHedges: hedges, Delay: delayOf(m.delay), OnError: m.onError, Permit: m.permit.Load},
		Clock:   m.mc,
		Wins:    func(err error) bool { return errors.Is(err, errWins) },
	}
	if rapid.Bool().Draw(rt, "called") {
		m.got = callAside(func() (int, error) { return h.Call(context.Background()) })
	} else {
		got := make(chan note, 1)
		go h.SubscribeSingle(context.Background(), singleNote(got)) // its first attempt on this goroutine
		m.got = got
	}
	m.started()
	return m
}

// singleNote passes a result on as a note.
type singleNote chan note

func (s singleNote) OnResult(v int, err error) { s <- note{v: v, err: err} }

func (m *hedgeSingleModel) run() {
	for !m.over {
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
			m.ends(i, nil, note{v: i})
		case "wins":
			err := fmt.Errorf("attempt %d: %w", i, errWins)
			m.ends(i, err, note{v: i, err: err})
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

// ends is attempt i answering with what ends the race (err nil: its
// number): every other attempt still running is cancelled, and the race
// answers so.
func (m *hedgeSingleModel) ends(i int, err error, answer note) {
	m.src.answers[i] <- err
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
	m.src.answers[i] <- err
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

func (m *hedgeSingleModel) expect(want note) {
	got := within(m.rt, m.got, fmt.Sprintf("answer %+v", want))
	if got.v != want.v || (got.err == nil) != (want.err == nil) || got.err != nil && got.err.Error() != want.err.Error() {
		m.rt.Fatalf("the race answered %+v, want %+v", got, want)
	}
	m.over, m.due = true, -1
}
