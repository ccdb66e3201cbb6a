package observable

import (
	"context"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestHedgeStreamFollowsTheModel drives a hedged stream one step at a
// time, in random orders: the clock to the next hedge's delay, or an
// attempt's value, completion or failure. After each step it checks what
// the subscriber got, which attempts started and which were cancelled
// against a model of HedgeStreamOn's rules: a hedge starts at each delay
// while the race is open, at once on a failure under OnError; the first
// attempt to emit or complete is the stream, and the others are
// cancelled; a failure before any value loses, and ends the stream only
// when no attempt is left running; a hedge the permit refuses does not
// start, and after one refused at its delay no other does.
func TestHedgeStreamFollowsTheModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		newHedgeStreamModel(rt).run()
	})
}

type hedgeStreamModel struct {
	raceModel
	src    *streamAttemptsOf
	got    <-chan note
	winner int // -1 until an attempt emits or completes
	values int // the winner's values so far
	over   bool
}

func newHedgeStreamModel(rt *rapid.T) *hedgeStreamModel {
	src := newStreamAttempts()
	m := &hedgeStreamModel{
		raceModel: newRaceModel(rt, src.started, src.ended[:]),
		src:       src,
		winner:    -1,
	}
	m.max = rapid.IntRange(2, 3).Draw(rt, "attempts")
	p := HedgePolicy{MaxHedges: m.max - 1, Delay: delayOf(m.delay), OnError: m.onError, Permit: m.permit.Load}
	got := make(chan note, 8)
	go HedgeStreamOn(m.src.observable(), p, m.mc).SubscribeFunc(context.Background(),
		func(v int) { got <- note{v: v} },
		func(err error) { got <- note{err: err} },
		func() { got <- note{done: true} })
	m.got = got
	m.started()
	return m
}

func (m *hedgeStreamModel) run() {
	for step := 0; !m.over; step++ {
		var moves []string
		if m.due >= 0 {
			moves = append(moves, "delay")
		}
		for i, a := range m.attempts {
			if a != attemptRunning || m.winner >= 0 && m.winner != i {
				continue
			}
			if m.values < 3 {
				moves = append(moves, fmt.Sprintf("emit %d", i))
			}
			moves = append(moves, fmt.Sprintf("complete %d", i), fmt.Sprintf("fail %d", i))
		}
		if len(moves) == 0 {
			m.rt.Fatalf("the stream is not over, and nothing can move it: %v", m.attempts)
		}
		var move string
		var i int
		switch fmt.Sscanf(rapid.SampledFrom(moves).Draw(m.rt, "move"), "%s %d", &move, &i); move {
		case "delay":
			m.passDelay()
		case "emit":
			m.src.notes[i] <- note{v: step}
			m.commit(i)
			m.expect(note{v: step})
			m.values++
		case "complete":
			m.src.notes[i] <- note{done: true}
			m.commit(i)
			m.expect(note{done: true})
			m.end(i, nil)
		case "fail":
			m.fail(i, fmt.Errorf("attempt %d fails", i))
		}
	}
	// Over: no attempt starts any more.
	m.mc.Advance(time.Hour)
	if n := int(m.src.calls.Load()); n != len(m.attempts) {
		m.rt.Fatalf("%d attempts started, want %d", n, len(m.attempts))
	}
	select {
	case n := <-m.got:
		m.rt.Fatalf("the subscriber was told %+v after the end", n)
	default:
	}
}

// commit is attempt i emitting or completing: the first to do so wins,
// and every other attempt still running is cancelled.
func (m *hedgeStreamModel) commit(i int) {
	if m.winner >= 0 {
		return
	}
	m.winner, m.due = i, -1
	for j, a := range m.attempts {
		if j != i && a == attemptRunning {
			m.end(j, context.Canceled)
		}
	}
}

// fail is attempt i failing with err.
func (m *hedgeStreamModel) fail(i int, err error) {
	permitted := m.drawPermit()
	m.src.notes[i] <- note{err: err}
	if m.winner == i {
		m.expect(note{err: err})
		m.end(i, nil)
		return
	}
	m.end(i, nil)
	m.attempts[i] = attemptFailed
	switch {
	case m.onError && len(m.attempts) < m.max && permitted:
		m.started() // at once, and the wait for the next restarts
	case m.running() == 0:
		m.due = -1
		m.expect(note{err: err})
		m.over = true
	}
}

// expect checks the subscriber's next notification; a terminal one is
// the end of the stream.
func (m *hedgeStreamModel) expect(want note) {
	got := within(m.rt, m.got, fmt.Sprintf("notification %+v", want))
	if got.v != want.v || got.done != want.done || (got.err == nil) != (want.err == nil) ||
		got.err != nil && got.err.Error() != want.err.Error() {
		m.rt.Fatalf("the subscriber got %+v, want %+v", got, want)
	}
	if want.done || want.err != nil {
		m.over = true
	}
}
