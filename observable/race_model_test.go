package observable

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// raceModel is what the models of a hedge's race share, for a stream
// (TestHedgeStreamFollowsTheModel) or a Single (TestHedgeSingleFollowsTheModel):
// the attempts started, the clock, the wait for the next hedge and the
// permit's answers.
type raceModel struct {
	rt      *rapid.T
	mc      *clock.Manual
	starts  <-chan int   // the number of each attempt that starts
	ended   []chan error // each attempt's end: its context's error, or nil
	max     int          // attempts the policy allows: the first and its hedges
	delay   time.Duration
	onError bool
	// permit is what the policy's Permit answers next, drawn before each
	// step that may ask it.
	permit atomic.Bool

	now      time.Duration // since epoch
	due      time.Duration // when the next hedge starts; -1 if none waits
	attempts []modelAttempt
}

func newRaceModel(rt *rapid.T, starts <-chan int, ended []chan error) raceModel {
	return raceModel{
		rt:      rt,
		mc:      clock.NewManual(epoch),
		starts:  starts,
		ended:   ended,
		delay:   time.Duration(rapid.IntRange(1, 5).Draw(rt, "delay")) * 10 * time.Millisecond,
		onError: rapid.Bool().Draw(rt, "onError"),
	}
}

// The states of an attempt in the model.
type modelAttempt int

const (
	attemptRunning modelAttempt = iota
	attemptFailed               // failed before the race ended: out of it
	attemptEnded                // cancelled, or the winner at its end
)

// within receives from ch, failing the check if nothing comes in time.
func within[T any](rt *rapid.T, ch <-chan T, what string) T {
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		rt.Fatalf("no %s", what)
		panic("unreachable")
	}
}

// started is the model's next attempt starting now: the race arms the
// wait for the hedge after it, if another may start.
func (m *raceModel) started() {
	n := within(m.rt, m.starts, "attempt starting")
	if n != len(m.attempts) {
		m.rt.Fatalf("attempt %d started, want %d", n, len(m.attempts))
	}
	m.attempts = append(m.attempts, attemptRunning)
	m.due = -1
	if len(m.attempts) < m.max {
		m.due = m.now + m.delay
	}
}

// passDelay moves the clock to the next hedge's delay: it starts, unless
// the permit refuses it, and then no hedge waits any more.
func (m *raceModel) passDelay() {
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
	case n := <-m.starts:
		m.rt.Fatalf("attempt %d started, which the permit refused", n)
	case <-time.After(time.Millisecond):
	}
}

// drawPermit draws what the permit answers the next hedge.
func (m *raceModel) drawPermit() bool {
	permitted := rapid.Float64Range(0, 1).Draw(m.rt, "permit") < 0.8
	m.permit.Store(permitted)
	return permitted
}

// running counts the attempts still running.
func (m *raceModel) running() int {
	n := 0
	for _, a := range m.attempts {
		if a == attemptRunning {
			n++
		}
	}
	return n
}

// end checks that attempt i has stopped: cancelled (err
// context.Canceled), or having sent its last notification (nil).
func (m *raceModel) end(i int, want error) {
	if got := within(m.rt, m.ended[i], fmt.Sprintf("end of attempt %d", i)); got != want {
		m.rt.Fatalf("attempt %d ended with %v, want %v", i, got, want)
	}
	m.attempts[i] = attemptEnded
}
