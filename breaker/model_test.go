package breaker_test

import (
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// refModel is the state machine of the package doc written as plainly as
// possible: sequential, no atomics, no packing. The property test checks
// that a Breaker behaves as it does.
type refModel struct {
	cfg                 breaker.Config // with defaults applied
	now                 time.Duration  // since epoch
	state               breaker.State
	openedAt, lastAdmit time.Duration
	admitted, successes int
	episode             int           // counts OPEN -> HALF_OPEN transitions
	closes              int           // HALF_OPEN -> CLOSED transitions, each resetting the stream
	window              time.Duration // the sleep window of the latest opening, without its jitter
	jitter              time.Duration // the jitter of the latest opening
	run                 int           // failures in a row while Closed (ConsecutiveFailures)
	throttle            float64       // the rejection probability of the latest snapshot, while Closed
	rand                func() float64
}

// expire re-opens a HALF_OPEN model whose unreported trial is overdue.
func (m *refModel) expire() {
	timeout := m.cfg.HalfOpenTrialTimeout
	if m.state == breaker.HalfOpen && timeout > 0 && m.admitted > m.successes && m.now > m.lastAdmit+timeout {
		m.open(m.lastAdmit + timeout)
	}
}

// open opens the model as of at: a trip starts a sleep window of
// SleepWindow, and a re-opening one that is the window before times
// SleepWindowMultiplier, up to MaxSleepWindow, when that is set.
func (m *refModel) open(at time.Duration) {
	switch {
	case m.state != breaker.HalfOpen:
		m.window = m.cfg.SleepWindow
	case m.cfg.MaxSleepWindow != 0:
		m.window = min(time.Duration(float64(m.window)*m.cfg.SleepWindowMultiplier), m.cfg.MaxSleepWindow)
	}
	m.jitter = 0
	if m.cfg.SleepWindowJitter > 0 {
		m.jitter = time.Duration(m.rand() * float64(m.cfg.SleepWindowJitter))
	}
	m.state, m.openedAt, m.admitted, m.successes, m.throttle = breaker.Open, at, 0, 0, 0
}

func (m *refModel) sleepWindowOver() bool { return m.now > m.openedAt+m.window+m.jitter }

func (m *refModel) tick(hc metricsstream.HealthCounts) {
	m.expire()
	if m.state == breaker.Closed && hc.Total >= int64(m.cfg.RequestVolumeThreshold) &&
		hc.ErrorPercentage >= m.cfg.ErrorThresholdPercentage {
		m.open(m.now)
	}
	m.throttle = 0
	if m.state == breaker.Closed {
		m.throttle = m.cfg.ThrottleProbability(hc)
	}
}

func (m *refModel) attempt() bool {
	m.expire()
	switch m.state {
	case breaker.Closed:
		return m.throttle == 0 || m.rand() >= m.throttle
	case breaker.Open:
		if !m.sleepWindowOver() {
			return false
		}
		m.state, m.admitted, m.successes, m.lastAdmit = breaker.HalfOpen, 1, 0, m.now
		m.episode++
	case breaker.HalfOpen:
		if m.admitted >= m.cfg.HalfOpenTrials {
			return false
		}
		m.admitted++
		m.lastAdmit = m.now
	}
	return true
}

func (m *refModel) allow() bool {
	m.expire()
	switch m.state {
	case breaker.Open:
		return m.sleepWindowOver()
	case breaker.HalfOpen:
		return m.admitted < m.cfg.HalfOpenTrials
	}
	return true
}

func (m *refModel) success() {
	m.expire()
	m.run = 0
	if m.state != breaker.HalfOpen {
		return
	}
	m.successes++
	if m.successes >= m.cfg.HalfOpenTrials {
		m.state, m.admitted, m.successes, m.throttle = breaker.Closed, 0, 0, 0
		m.closes++
	}
}

func (m *refModel) nonSuccess() {
	m.expire()
	switch {
	case m.state == breaker.HalfOpen:
		m.open(m.now)
	case m.state == breaker.Closed && m.cfg.ConsecutiveFailures > 0:
		m.run++
		if m.run >= m.cfg.ConsecutiveFailures {
			m.run = 0
			m.open(m.now)
		}
	}
}

func (m *refModel) cancelled() {
	m.expire()
	if m.state == breaker.HalfOpen {
		m.open(m.now)
	}
}

func (m *refModel) ignored() {
	m.expire()
	if m.state == breaker.HalfOpen && m.admitted > 0 {
		m.admitted--
	}
}

// sequence returns a function that returns 0, 1/7, 2/7, ... 6/7, 0, ...:
// the breaker and the model each draw their jitter and their throttled
// rejections from one.
func sequence() func() float64 {
	n := 0
	return func() float64 {
		n++
		return float64(n%7) / 7
	}
}

// call is an execution AttemptExecution admitted.
type call struct {
	episode int           // the model's episode when admitted
	at      time.Duration // when admitted
}

// TestStateMachineAgainstModel drives random sequences of health
// snapshots, attempts, results (success, failure, cancellation,
// rejection, panic, bad request, never reported) and clock advances, and
// checks that the breaker agrees with the reference model and is never
// stuck HALF_OPEN: while HALF_OPEN, either another trial can be admitted,
// or a trial of this half-open episode is in flight, or a lost one has not
// yet run out of HalfOpenTrialTimeout.
func TestStateMachineAgainstModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := breaker.Config{
			RequestVolumeThreshold:   rapid.IntRange(1, 10).Draw(rt, "volume"),
			ErrorThresholdPercentage: rapid.IntRange(1, 100).Draw(rt, "threshold"),
			SleepWindow:              time.Duration(rapid.IntRange(1, 1000).Draw(rt, "sleepMs")) * time.Millisecond,
			HalfOpenTrials:           rapid.IntRange(0, 3).Draw(rt, "trials"),
			HalfOpenTrialTimeout: rapid.SampledFrom([]time.Duration{
				-1, 0, 300 * time.Millisecond, 2 * time.Second,
			}).Draw(rt, "trialTimeout"),
		}
		if grows := rapid.IntRange(0, 2).Draw(rt, "grows"); grows > 0 {
			cfg.MaxSleepWindow = cfg.SleepWindow * time.Duration(rapid.IntRange(1, 20).Draw(rt, "maxTimes"))
			cfg.SleepWindowMultiplier = []float64{0, 1.5}[grows-1]
		}
		cfg.SleepWindowJitter = rapid.SampledFrom([]time.Duration{0, 0, time.Millisecond, 700 * time.Millisecond}).Draw(rt, "jitter")
		cfg.ConsecutiveFailures = rapid.SampledFrom([]int{0, 0, 1, 3}).Draw(rt, "consecutiveFailures")
		cfg.ThrottleSuccessPercentage = rapid.SampledFrom([]int{0, 0, 50, 90}).Draw(rt, "throttleBelow")
		clk := clock.NewManual(epoch)
		h := newFakeHealth()
		b := breaker.New(cfg, h, breaker.WithClock(clk), breaker.WithRand(sequence()))
		defer b.Close()
		m := &refModel{cfg: b.Config(), rand: sequence()}
		var inflight, lost []call
		var latestTrial time.Duration // when the current episode last admitted a trial

		take := func(rt *rapid.T, calls *[]call) call {
			if len(*calls) == 0 {
				rt.Skip("no call")
			}
			i := rapid.IntRange(0, len(*calls)-1).Draw(rt, "call")
			c := (*calls)[i]
			*calls = append((*calls)[:i], (*calls)[i+1:]...)
			return c
		}

		rt.Repeat(map[string]func(*rapid.T){
			"snapshot": func(rt *rapid.T) {
				total := rapid.IntRange(0, 20).Draw(rt, "total")
				failures := rapid.IntRange(0, total).Draw(rt, "failures")
				hc := health(total-failures, failures, 0)
				h.emit(hc)
				m.tick(hc)
			},
			"attempt": func(rt *rapid.T) {
				want := m.attempt()
				if got := b.AttemptExecution(); got != want {
					rt.Fatalf("AttemptExecution() = %v; model says %v", got, want)
				}
				if want {
					inflight = append(inflight, call{episode: m.episode, at: m.now})
					if m.state == breaker.HalfOpen {
						latestTrial = m.now
					}
				}
			},
			"allow": func(rt *rapid.T) {
				if got, want := b.AllowRequest(), m.allow(); got != want {
					rt.Fatalf("AllowRequest() = %v; model says %v", got, want)
				}
			},
			"succeed": func(rt *rapid.T) {
				take(rt, &inflight)
				b.MarkSuccess()
				m.success()
			},
			"fail": func(rt *rapid.T) { // failure, timeout, rejection, panic
				take(rt, &inflight)
				b.MarkNonSuccess()
				m.nonSuccess()
			},
			"cancel": func(rt *rapid.T) {
				take(rt, &inflight)
				b.MarkCancelled()
				m.cancelled()
			},
			"badRequest": func(rt *rapid.T) {
				take(rt, &inflight)
				b.MarkIgnored()
				m.ignored()
			},
			"lose": func(rt *rapid.T) { // the caller never reports
				if m.cfg.HalfOpenTrialTimeout < 0 {
					rt.Skip("without a trial timeout a lost trial blocks the breaker, as in Hystrix")
				}
				lost = append(lost, take(rt, &inflight))
			},
			"advance": func(rt *rapid.T) {
				d := rapid.OneOf(
					rapid.Just(time.Nanosecond),
					rapid.Just(cfg.SleepWindow),
					rapid.Map(rapid.IntRange(0, 2500), func(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }),
				).Draw(rt, "advance")
				clk.Advance(d)
				m.now += d
			},
			"": func(rt *rapid.T) {
				m.expire()
				if got := b.State(); got != m.state {
					rt.Fatalf("State() = %v; model says %v", got, m.state)
				}
				if want := m.window + m.jitter; m.state != breaker.Closed && b.SleepWindow() != want {
					rt.Fatalf("SleepWindow() = %v; model says %v", b.SleepWindow(), want)
				}
				if got := b.ThrottleProbability(); got != m.throttle {
					rt.Fatalf("ThrottleProbability() = %v; model says %v", got, m.throttle)
				}
				if got, want := b.IsOpen(), m.state != breaker.Closed; got != want {
					rt.Fatalf("IsOpen() = %v; want %v", got, want)
				}
				if got := h.resetCount(); got != m.closes {
					rt.Fatalf("ResetStream called %d times; want one per close, %d", got, m.closes)
				}
				if got := h.live(); got != 1 {
					rt.Fatalf("%d live health subscriptions; want 1", got)
				}
				if m.state == breaker.HalfOpen && !b.AllowRequest() && !trialPending(m, inflight, lost, latestTrial) {
					rt.Fatalf("stuck HALF_OPEN: no trial can be admitted and none is pending (in flight %v, lost %v)", inflight, lost)
				}
			},
		})
	})
}

// trialPending reports whether a trial of the model's current half-open
// episode may still report: one is in flight, or one was lost and the
// episode's latest admission is no more than HalfOpenTrialTimeout ago (the
// breaker cannot tell which of its trials is the lost one, so it bounds
// the wait from the latest admission).
func trialPending(m *refModel, inflight, lost []call, latestTrial time.Duration) bool {
	for _, c := range inflight {
		if c.episode == m.episode {
			return true
		}
	}
	for _, c := range lost {
		if c.episode == m.episode && m.now-latestTrial <= m.cfg.HalfOpenTrialTimeout {
			return true
		}
	}
	return false
}
