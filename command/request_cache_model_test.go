package command

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// Subscribers of one cache key of an ObservableCommand, joining and
// leaving (unsubscribing, or their caller's context ending) in a random
// order while the shared stream emits and ends, get what a model of
// Hystrix's cached Observable says: one execution while anyone waits for
// it, each value as it comes, the values so far at once for a subscriber
// that joins late, the terminal event to every subscriber still there,
// the caller's context's error to one whose caller left, and, when the
// last one leaves before the end, the execution CANCELLED and the next
// subscriber's execution a new one.
func TestRequestCacheSharesAStreamAsTheModelSays(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		m := newCacheModel(rt)
		defer m.reg.Close()
		for step := range rapid.IntRange(1, 12).Draw(rt, "steps") {
			m.step(step)
		}
		for len(m.subs) > 0 {
			m.leave(m.subs[0]) // none stays subscribed past the test
		}
	})
}

// cacheModel is the cache key's subscribers and shared stream.
type cacheModel struct {
	t       *rapid.T
	reg     *Registry
	done    chan metricsstream.Completion
	streams chan chan string // each execution's channel for the test's words
	c       *ObservableCommand[int, int]
	req     context.Context

	entry *cacheEntryModel // the key's entry in the cache, nil if none
	subs  []*cacheSubscriber
}

// cacheEntryModel is what the model knows of the shared execution.
type cacheEntryModel struct {
	words  chan string
	values []int
	ended  bool
	err    error // the terminal event's, once ended
}

// cacheSubscriber is one subscription to the command's ToObservable.
type cacheSubscriber struct {
	n      int
	served bool // by the cache: it records RESPONSE_FROM_CACHE at its end
	sub    observable.Subscription
	leave  context.CancelFunc // ends the context its ToObservable was given
	values chan int
	end    chan error
}

func newCacheModel(rt *rapid.T) *cacheModel {
	m := &cacheModel{
		t:       rt,
		reg:     NewRegistry(WithClock(clock.NewManual(requestT0))),
		done:    make(chan metricsstream.Completion, 16),
		streams: make(chan chan string, 4),
	}
	m.reg.onCompletion = func(c *metricsstream.Completion) { m.done <- *c }
	m.c = NewObservable("Shared", func(context.Context, int) observable.Observable[int] {
		return observable.Create(func(ctx context.Context, o observable.Observer[int]) {
			words := make(chan string, 1)
			m.streams <- words
			for n := 1; ; n++ {
				select {
				case w := <-words:
					switch w {
					case "emit":
						o.OnNext(n)
					case "complete":
						o.OnCompleted()
						return
					default:
						o.OnError(errBoom)
						return
					}
				case <-ctx.Done():
					o.OnError(ctx.Err())
					return
				}
			}
		})
	}, WithRegistry(m.reg), WithConfig(Config{
		Isolation: rapid.SampledFrom(bothIsolations).Draw(rt, "isolation"),
		Timeout:   -1,
	})).WithCacheKey(itoa)
	m.req = WithRequestContext(context.Background())
	return m
}

// step draws and makes one step.
func (m *cacheModel) step(step int) {
	actions := []string{"join"}
	for _, s := range m.subs {
		actions = append(actions, fmt.Sprintf("leave %d", s.n), fmt.Sprintf("caller leaves %d", s.n))
	}
	if m.entry != nil && !m.entry.ended {
		actions = append(actions, "emit", "complete", "fail")
	}
	action := rapid.SampledFrom(actions).Draw(m.t, fmt.Sprintf("step %d", step))
	switch {
	case action == "join":
		m.join(step)
	case strings.HasPrefix(action, "leave"), strings.HasPrefix(action, "caller leaves"):
		i := strings.LastIndexByte(action, ' ')
		n, _ := strconv.Atoi(action[i+1:])
		s := m.subs[slices.IndexFunc(m.subs, func(s *cacheSubscriber) bool { return s.n == n })]
		if strings.HasPrefix(action, "leave") {
			m.leave(s)
		} else {
			m.callerLeaves(s)
		}
	case action == "emit":
		m.entry.words <- "emit"
		v := len(m.entry.values) + 1
		m.entry.values = append(m.entry.values, v)
		for _, s := range m.subs {
			if got := recv(m.t, s.values, "a value"); got != v {
				m.t.Fatalf("subscriber %d got %d, the model says %d", s.n, got, v)
			}
		}
	default:
		m.entry.words <- action
		m.entry.ended = true
		want := [][]string{m.emits("SUCCESS")}
		if action == "fail" {
			m.entry.err = errBoom
			want = [][]string{m.emits("FAILURE", "FALLBACK_MISSING")}
		}
		for _, s := range m.subs {
			m.ends(s)
			want = append(want, s.hit())
		}
		m.completions(want, "the stream ended")
		m.subs = nil // the entry stays: later subscribers are served from it
	}
}

// join subscribes: the first subscriber of the key, or the first since
// its entry was abandoned, starts an execution, on a goroutine of its own
// (under semaphore isolation the stream runs there), and has joined once
// the stream has begun; a later one joins as it subscribes, and gets the
// values so far at once, and the end if the stream has ended.
func (m *cacheModel) join(n int) {
	s := &cacheSubscriber{n: n, values: make(chan int, 16), end: make(chan error, 1)}
	ctx, leave := context.WithCancel(m.req)
	s.leave = leave
	o := m.c.ToObservable(ctx, 0)
	if m.entry == nil {
		o = o.SubscribeOn(observable.NewGoroutine)
	}
	s.sub = o.SubscribeFunc(context.Background(),
		func(v int) { s.values <- v }, func(err error) { s.end <- err }, func() { s.end <- nil })
	if m.entry == nil {
		m.entry = &cacheEntryModel{words: recv(m.t, m.streams, "an execution to start")}
		m.subs = append(m.subs, s)
		return
	}
	s.served = true
	for _, v := range m.entry.values {
		if got := recv(m.t, s.values, "a value replayed"); got != v {
			m.t.Fatalf("subscriber %d got %d replayed, the model says %d", n, got, v)
		}
	}
	if m.entry.ended {
		m.ends(s)
		m.completions([][]string{s.hit()}, fmt.Sprintf("subscriber %d was served the end", n))
		return
	}
	m.subs = append(m.subs, s)
}

// leave unsubscribes s, which gets nothing more.
func (m *cacheModel) leave(s *cacheSubscriber) {
	s.sub.Unsubscribe()
	m.left(s, fmt.Sprintf("subscriber %d left", s.n))
	select {
	case v := <-s.values:
		m.t.Fatalf("subscriber %d got %d after it left", s.n, v)
	case err := <-s.end:
		m.t.Fatalf("subscriber %d got its end (%v) after it left", s.n, err)
	default:
	}
}

// callerLeaves ends the context s's ToObservable was given: s gets its
// error, and leaves as if it had unsubscribed.
func (m *cacheModel) callerLeaves(s *cacheSubscriber) {
	s.leave()
	if err := recv(m.t, s.end, "the caller's error"); !errors.Is(err, context.Canceled) {
		m.t.Fatalf("subscriber %d ended with %v, the model says %v", s.n, err, context.Canceled)
	}
	m.left(s, fmt.Sprintf("the caller of subscriber %d left", s.n))
}

// left takes s out of the entry's subscribers: the last ends the
// execution, CANCELLED, and the entry.
func (m *cacheModel) left(s *cacheSubscriber, after string) {
	m.subs = slices.DeleteFunc(m.subs, func(o *cacheSubscriber) bool { return o == s })
	want := [][]string{s.hit()}
	if len(m.subs) == 0 {
		want = append(want, m.emits("CANCELLED")) // the last: the execution ends
		m.entry = nil
	}
	m.completions(want, after)
}

// ends checks that s got the stream's terminal event.
func (m *cacheModel) ends(s *cacheSubscriber) {
	err := recv(m.t, s.end, "the end")
	if !errors.Is(err, m.entry.err) || (err == nil) != (m.entry.err == nil) {
		m.t.Fatalf("subscriber %d ended with %v, the model says %v", s.n, err, m.entry.err)
	}
}

// hit is the Completion a subscriber the cache served records at its
// end, none for the one whose execution it is.
func (s *cacheSubscriber) hit() []string {
	if !s.served {
		return nil
	}
	return []string{"RESPONSE_FROM_CACHE"}
}

// emits is the entry's events so far, then more.
func (m *cacheModel) emits(more ...string) []string {
	var events []string
	for range m.entry.values {
		events = append(events, "EMIT")
	}
	return append(events, more...)
}

// completions waits for the Completions in want (a nil is none) and
// checks their events, in any order, and that no other follows.
func (m *cacheModel) completions(want [][]string, after string) {
	want = slices.DeleteFunc(want, func(w []string) bool { return w == nil })
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
	select {
	case c := <-m.done:
		m.t.Fatalf("after %s: an extra Completion %v", after, eventNames(c.Events))
	default:
	}
}
