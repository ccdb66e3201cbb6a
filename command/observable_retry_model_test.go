package command

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// An ObservableCommand's call with retries, driven one attempt at a time
// (an attempt succeeds, fails before a value, fails after one, times
// out; the caller leaves during an attempt or a backoff), in every way
// of executing it and both isolations, returns the values and error a
// model of the rules says, and records one Completion per attempt with
// the events the model says: no fallback and a retry for a failure
// before any value while attempts are left, the fallback after a value
// or for the last attempt, RETRIED on every retry.
func TestObservableCommandRetriesFollowTheModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := newStreamRetryModel(rt)
		defer m.reg.Close()
		m.run()
	})
}

// streamRetryModel is one call of an ObservableCommand whose key retries.
type streamRetryModel struct {
	t        *rapid.T
	clock    *clock.Manual
	reg      *Registry
	armed    chan time.Duration
	done     chan metricsstream.Completion
	entered  chan chan string // each attempt's channel for the test's word
	c        *ObservableCommand[int, bool]
	mode     obsMode
	attempts int
	timeout  time.Duration // 0 for none
	fallback bool
}

func newStreamRetryModel(rt *rapid.T) *streamRetryModel {
	m := &streamRetryModel{
		t:        rt,
		clock:    clock.NewManual(harnessStart),
		armed:    make(chan time.Duration, 4),
		done:     make(chan metricsstream.Completion, 16),
		entered:  make(chan chan string, 4),
		mode:     rapid.SampledFrom(obsModesWithFirst).Draw(rt, "mode"),
		attempts: rapid.IntRange(1, 3).Draw(rt, "attempts"),
		timeout:  rapid.SampledFrom([]time.Duration{0, 20 * time.Millisecond}).Draw(rt, "timeout"),
		fallback: rapid.Bool().Draw(rt, "fallback"),
	}
	m.reg = NewRegistry(WithClock(timerSpy{Manual: m.clock, armed: m.armed, backoffsOnly: true}))
	m.reg.onCompletion = func(c *metricsstream.Completion) { m.done <- *c }
	construct := func(context.Context, int) observable.Observable[bool] {
		return observable.Create(func(ctx context.Context, o observable.Observer[bool]) {
			word := make(chan string, 1)
			m.entered <- word
			select {
			case w := <-word:
				switch w {
				case "succeed":
					o.OnNext(true)
					o.OnNext(false)
					o.OnCompleted()
				case "fail":
					o.OnError(errBoom)
				case "emit, fail":
					o.OnNext(true)
					o.OnError(errBoom)
				}
			case <-ctx.Done():
				o.OnError(ctx.Err())
			}
		})
	}
	timeout := m.timeout
	if timeout == 0 {
		timeout = -1
	}
	m.c = NewObservable("Stream", construct, WithRegistry(m.reg), WithConfig(Config{
		Isolation: rapid.SampledFrom(bothIsolations).Draw(rt, "isolation"),
		Timeout:   timeout,
		Retry: RetryConfig{
			MaxAttempts: m.attempts,
			Backoff:     observable.Backoff{Initial: modelBackoff, Jitter: observable.NoJitter},
			Budget:      RetryBudget{MinConcurrency: 100},
		},
	}))
	if m.fallback {
		m.c = m.c.WithFallbackObservable(func(context.Context, int, error) observable.Observable[bool] {
			return observable.Just(false)
		})
	}
	return m
}

// run makes the call and drives it to its end.
func (m *streamRetryModel) run() {
	ctx, leave := context.WithCancel(context.Background())
	defer leave()
	first := m.mode.name == "ToObservable.First"
	call := goCall(func() ([]bool, error) { return m.mode.exec(ctx, m.c, 1) })
	var want callResult[[]bool]
	for round := 1; ; round++ {
		word := recv(m.t, m.entered, "an attempt to begin")
		actions := []string{"succeed", "fail", "emit, fail", "leave"}
		if m.timeout > 0 {
			actions = append(actions, "time out")
		}
		action := rapid.SampledFrom(actions).Draw(m.t, "attempt")
		outcome, retryable := "", false
		switch action {
		case "leave":
			leave()
			m.completion(round, "CANCELLED")
			want.err = context.Canceled
		case "succeed":
			word <- action
			want.v = []bool{true, false}
			if first {
				want.v = []bool{true}
				m.completion(round, "EMIT", "CANCELLED")
			} else {
				m.completion(round, "EMIT", "EMIT", "SUCCESS")
			}
		case "emit, fail":
			word <- action
			if first {
				want.v = []bool{true}
				m.completion(round, "EMIT", "CANCELLED")
				break
			}
			// After a value: no retry, the fallback follows it.
			want.v = []bool{true}
			outcome = "EMIT FAILURE"
		case "fail":
			word <- action
			outcome, retryable = "FAILURE", true
		case "time out":
			m.clock.Advance(m.timeout)
			outcome, retryable = "TIMEOUT", true
		}
		if outcome == "" {
			break
		}
		if retryable && round < m.attempts {
			m.completion(round, outcome)
			backoff := modelBackoff << (round - 1)
			if armed := recv(m.t, m.armed, "the backoff"); armed != backoff {
				m.t.Fatalf("a backoff of %v, the model says %v", armed, backoff)
			}
			if rapid.Bool().Draw(m.t, "the caller leaves during the backoff") {
				leave()
				want.err = context.Canceled
				break
			}
			go m.clock.Advance(backoff) // the retry runs on the timer's goroutine
			continue
		}
		switch {
		case m.fallback && first:
			// First leaves at the fallback's value.
			want.v = []bool{false}
			m.completion(round, outcome, "FALLBACK_EMIT", "CANCELLED")
		case m.fallback:
			want.v = append(want.v, false)
			m.completion(round, outcome, "FALLBACK_EMIT", "FALLBACK_SUCCESS")
		default:
			want.err = errBoom
			if outcome == "TIMEOUT" {
				want.err = ErrTimeout
			}
			m.completion(round, outcome, "FALLBACK_MISSING")
		}
		break
	}
	got := awaitCall(m.t, call)
	switch {
	case want.err != nil:
		if !errors.Is(got.err, want.err) {
			m.t.Fatalf("the call failed with %v, the model says %v", got.err, want.err)
		}
		// What a caller that left, or an Execute that failed, has
		// received before the end may be any part of want.v.
	case got.err != nil:
		m.t.Fatalf("the call failed with %v, the model says %v", got.err, want.v)
	case !slices.Equal(got.v, want.v):
		m.t.Fatalf("the call returned %v, the model says %v", got.v, want.v)
	}
	select {
	case c := <-m.done:
		m.t.Fatalf("an extra Completion: %v", eventNames(c.Events))
	default:
	}
	// The last attempt counts itself out of the retry budget just after
	// its Completion.
	waitFor(m.t, "no retry in flight", func() bool { return m.c.k.retrying.Load() == 0 })
}

// completion waits for attempt round's Completion and checks its events
// against events (each one or more names), in Hystrix's order, with
// RETRIED for a retry.
func (m *streamRetryModel) completion(round int, events ...string) {
	c := recv(m.t, m.done, "a Completion")
	want := slices.Clone(events)
	if round > 1 {
		want = append(want, "RETRIED")
	}
	if got := strings.Join(eventNames(c.Events), " "); got != strings.Join(want, " ") {
		m.t.Fatalf("attempt %d recorded %q, the model says %q", round, got, strings.Join(want, " "))
	}
}
