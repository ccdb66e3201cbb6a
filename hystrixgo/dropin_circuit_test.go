package hystrix

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/command"
)

// A name's circuit opens, lets a trial through and closes as the model of
// the package doc's rules says (circuitModel), for any thresholds and
// sleep window and any sequence of calls that succeed, fail, panic, time
// out or are left by their caller, with the clock moving between them:
// each call runs or is short-circuited as the model says, and IsOpen
// agrees with it after every step.
func TestDropInCircuitFollowsTheModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		e, mc, restore := swapEngine()
		defer restore()
		sleep := time.Duration(rapid.IntRange(2, 3000).Draw(rt, "SleepWindow")) * time.Millisecond
		m := &circuitModel{
			volume:  int64(rapid.IntRange(1, 4).Draw(rt, "RequestVolumeThreshold")),
			percent: drawErrorPercentThreshold(rt),
			sleep:   sleep,
			// Shorter than the sleep window, so that a trial always
			// reports before the breaker would give up on it.
			timeout: time.Duration(rapid.IntRange(1, int(min(2000, sleep/time.Millisecond-1))).Draw(rt, "Timeout")) * time.Millisecond,
		}
		name := fmt.Sprintf("circuit-%d", dropInChecks.Add(1))
		ConfigureCommand(name, CommandConfig{
			Timeout:                int(m.timeout / time.Millisecond),
			RequestVolumeThreshold: int(m.volume),
			SleepWindow:            int(m.sleep / time.Millisecond),
			ErrorPercentThreshold:  m.percent,
		})
		cb, _ := e.circuit(name) // made now: its health buckets start at t0
		rt.Repeat(map[string]func(*rapid.T){
			"advance": func(rt *rapid.T) {
				d := m.drawAdvance(rt)
				mc.Advance(d)
				m.advance(d)
			},
			"call": func(rt *rapid.T) {
				end := rapid.SampledFrom(circuitCallEnds).Draw(rt, "end")
				runs := m.attempt()
				ran, err := callEnding(rt, mc, name, end, m.timeout)
				if ran != runs {
					rt.Fatalf("at %v (%v, opened at %v): run called %v; want %v", m.now, m.state, m.openedAt, ran, runs)
				}
				if !runs {
					if err != ErrCircuitOpen {
						rt.Fatalf("a short-circuited call answered %v", err)
					}
					return
				}
				if end == runEndTimesOut {
					m.advance(m.timeout)
				}
				if wrong := checkCallError(end, err); wrong != nil {
					rt.Fatalf("%v", wrong)
				}
				m.report(end)
			},
			"": func(rt *rapid.T) {
				if got, want := cb.IsOpen(), m.state != circuitClosed; got != want {
					rt.Fatalf("at %v (health from %v, opened at %v): IsOpen %v; want %v (%v)", m.now, m.resetAt, m.openedAt, got, want, m.state)
				}
			},
		})
	})
}

// drawErrorPercentThreshold draws a threshold from 1 to 100, often one
// at or just past the percentage of a few failures in a few requests,
// where truncating the percentage and rounding it part.
func drawErrorPercentThreshold(rt *rapid.T) int {
	if rapid.Bool().Draw(rt, "anyThreshold") {
		return rapid.IntRange(1, 100).Draw(rt, "ErrorPercentThreshold")
	}
	requests := rapid.IntRange(1, 6).Draw(rt, "ofRequests")
	failures := rapid.IntRange(1, requests).Draw(rt, "failures")
	return min(100*failures/requests+rapid.IntRange(0, 1).Draw(rt, "past"), 100)
}

// The ends of an admitted call the circuit test draws.
var circuitCallEnds = []runEnd{runEndSucceeds, runEndFails, runEndPanics, runEndTimesOut, runEndCallerLeavesMidRun}

// callEnding calls name with a run that ends as end says, and returns
// whether run was called and what the caller got. A run that times out
// waits for the clock to pass timeout; it returns, giving its slot back,
// once the caller has its answer.
func callEnding(rt *rapid.T, mc interface{ Advance(time.Duration) }, name string, end runEnd, timeout time.Duration) (ran bool, err error) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	defer close(release)
	ranCh := make(chan struct{}, 1)
	run := func(ctx context.Context) error {
		ranCh <- struct{}{}
		switch end {
		case runEndFails:
			return errRun
		case runEndPanics:
			panic("run boom")
		case runEndTimesOut:
			started <- struct{}{}
			<-release
		case runEndCallerLeavesMidRun:
			started <- struct{}{}
			<-ctx.Done()
			return ctx.Err()
		}
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	answer := make(chan error, 1)
	go func() { answer <- DoC(ctx, name, run, nil) }()
	select {
	case <-started:
		if end == runEndTimesOut {
			mc.Advance(timeout)
		} else {
			cancel()
		}
		err = await(rt, answer)
	case err = <-answer: // run returned at once, or was never called
	}
	return len(ranCh) == 1, err
}

// checkCallError returns what is wrong with the error of a call that ran
// and ended as end says.
func checkCallError(end runEnd, err error) error {
	var want error
	switch end {
	case runEndFails:
		want = errRun
	case runEndTimesOut:
		want = ErrTimeout
	case runEndCallerLeavesMidRun:
		want = context.Canceled
	case runEndPanics:
		if p := (*command.PanicError)(nil); !errors.As(err, &p) {
			return fmt.Errorf("a run that panicked answered %v", err)
		}
		return nil
	}
	if err != want {
		return fmt.Errorf("a run that %v answered %v; want %v", end, err, want)
	}
	return nil
}

// circuitState is the state of circuitModel.
type circuitState int

const (
	circuitClosed circuitState = iota
	circuitOpen
	circuitHalfOpen
)

func (s circuitState) String() string { return [...]string{"closed", "open", "half-open"}[s] }

// circuitModel is the package doc's circuit of one name: Hystrix 1.5's
// breaker on health counts of the 10s rolling window, taken every 250ms.
// Times are durations since the circuit was made.
//
//   - At each 250ms boundary since the health counts last started over, a
//     closed circuit opens if the closed buckets of the window hold at
//     least RequestVolumeThreshold requests that succeeded, failed or
//     timed out (a panic fails), and ErrorPercentThreshold percent of
//     them, truncated, did not succeed. A call its caller left counts for
//     neither, nor does a short-circuited one.
//   - An open circuit short-circuits every call until more than
//     SleepWindow has passed since it opened; then one call is the trial.
//   - A trial that succeeds closes the circuit and starts the health
//     counts over, its own success counted in the new ones; any other
//     end opens it again as of that end.
type circuitModel struct {
	volume         int64
	percent        int
	sleep, timeout time.Duration

	now, resetAt, openedAt time.Duration
	state                  circuitState
	records                []circuitRecord // since resetAt
}

type circuitRecord struct {
	at     time.Duration
	failed bool
}

// The package doc's health buckets: 250ms wide, 40 of them in the 10s
// rolling window.
const (
	modelHealthInterval = 250 * time.Millisecond
	modelHealthBuckets  = 10 * time.Second / modelHealthInterval
)

// bucket is the health bucket of t, numbered from resetAt.
func (m *circuitModel) bucket(t time.Duration) int64 {
	return int64((t - m.resetAt) / modelHealthInterval)
}

// trips reports whether the health counts taken at boundary b open a
// closed circuit.
func (m *circuitModel) trips(b time.Duration) bool {
	var total, failed int64
	for _, r := range m.records {
		if k := m.bucket(r.at); k < m.bucket(b) && k >= m.bucket(b)-int64(modelHealthBuckets) {
			total++
			if r.failed {
				failed++
			}
		}
	}
	// Hystrix's HealthCounts computes the percentage in doubles and
	// truncates it.
	return total > 0 && total >= m.volume && int(float64(failed)/float64(total)*100) >= m.percent
}

// advance moves the clock by d, through every health boundary on the way.
func (m *circuitModel) advance(d time.Duration) {
	to := m.now + d
	for b := m.resetAt + time.Duration(m.bucket(m.now)+1)*modelHealthInterval; b <= to && m.state == circuitClosed; b += modelHealthInterval {
		if m.trips(b) {
			m.state, m.openedAt = circuitOpen, b
		}
	}
	m.now = to
}

// attempt reports whether a call now runs, and makes it the trial if the
// sleep window is over.
func (m *circuitModel) attempt() bool {
	switch m.state {
	case circuitClosed:
		return true
	case circuitOpen:
		if m.now-m.openedAt > m.sleep {
			m.state = circuitHalfOpen
			return true
		}
	}
	return false
}

// report is a call that ran ending as end says, now.
func (m *circuitModel) report(end runEnd) {
	success := end == runEndSucceeds
	if m.state == circuitHalfOpen {
		if success {
			m.state, m.resetAt, m.records = circuitClosed, m.now, nil
		} else {
			m.state, m.openedAt = circuitOpen, m.now
		}
	}
	if end != runEndCallerLeavesMidRun {
		m.records = append(m.records, circuitRecord{m.now, !success})
	}
}

// drawAdvance draws a move of the clock: within a health bucket, to
// around its end, to around the end of the sleep window, or by seconds,
// up to more than the rolling window.
func (m *circuitModel) drawAdvance(rt *rapid.T) time.Duration {
	near := func(t time.Duration) time.Duration {
		return max(t-m.now+time.Duration(rapid.IntRange(-1, 1).Draw(rt, "nearBy")), 1)
	}
	switch rapid.IntRange(0, 3).Draw(rt, "advanceKind") {
	case 0:
		return time.Duration(rapid.Int64Range(1, int64(modelHealthInterval)).Draw(rt, "advanceBy"))
	case 1:
		return near(m.resetAt + time.Duration(m.bucket(m.now)+1)*modelHealthInterval)
	case 2:
		return near(m.openedAt + m.sleep)
	}
	return time.Duration(rapid.IntRange(1, 12).Draw(rt, "seconds")) * time.Second
}
