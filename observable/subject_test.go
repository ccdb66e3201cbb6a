package observable

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSubjectKinds(t *testing.T) {
	cases := []struct {
		name       string
		subject    *Subject[int]
		early      []int // received by a subscriber present from the start
		late       []int // received by a subscriber that came after 1 and 2
		afterClose []int // received by a subscriber that came after OnCompleted
	}{
		{"publish", NewPublishSubject[int](), []int{1, 2, 3}, []int{3}, nil},
		{"zero", &Subject[int]{}, []int{1, 2, 3}, []int{3}, nil},
		{"behavior", NewBehaviorSubject(0), []int{0, 1, 2, 3}, []int{2, 3}, nil},
		{"replay all", NewReplaySubject[int](0), []int{1, 2, 3}, []int{1, 2, 3}, []int{1, 2, 3}},
		{"replay 2", NewReplaySubject[int](2), []int{1, 2, 3}, []int{1, 2, 3}, []int{2, 3}},
		{"replay 1", NewReplaySubject[int](1), []int{1, 2, 3}, []int{2, 3}, []int{3}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			early, late, afterClose := newRecorder[int](), newRecorder[int](), newRecorder[int]()
			c.subject.Observable().Subscribe(ctx, early)
			c.subject.OnNext(1)
			c.subject.OnNext(2)
			c.subject.Observable().Subscribe(ctx, late)
			c.subject.OnNext(3)
			c.subject.OnCompleted()
			c.subject.OnNext(4) // ignored after the terminal event
			c.subject.Observable().Subscribe(ctx, afterClose)
			early.check(t, c.early, nil, true)
			late.check(t, c.late, nil, true)
			afterClose.check(t, c.afterClose, nil, true)
		})
	}
}

func TestSubjectError(t *testing.T) {
	for name, s := range map[string]*Subject[int]{
		"publish":  NewPublishSubject[int](),
		"behavior": NewBehaviorSubject(7),
		"replay":   NewReplaySubject[int](0),
	} {
		t.Run(name, func(t *testing.T) {
			s.OnNext(1)
			s.OnError(errBoom)
			s.OnCompleted() // ignored
			r := newRecorder[int]()
			s.Observable().Subscribe(context.Background(), r)
			want := []int(nil)
			if name == "replay" {
				want = []int{1}
			}
			r.check(t, want, errBoom, false)
		})
	}
}

func TestSubjectUnsubscribedObserverReceivesNothing(t *testing.T) {
	s := NewPublishSubject[int]()
	stay, leave := newRecorder[int](), newRecorder[int]()
	s.Observable().Subscribe(context.Background(), stay)
	sub := s.Observable().Subscribe(context.Background(), leave)
	s.OnNext(1)
	sub.Unsubscribe()
	s.OnNext(2)
	s.OnCompleted()
	stay.check(t, []int{1, 2}, nil, true)
	leave.check(t, []int{1}, nil, false)
	s.mu.Lock()
	assert.Empty(t, s.subs, "the subscriber left the Subject")
	s.mu.Unlock()
}

func TestSubjectConcurrentProducersAndSubscribers(t *testing.T) {
	s := NewReplaySubject[int](0)
	const producers, each = 4, 250
	var recorders []*recorder[int]
	var mu sync.Mutex
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				s.OnNext(p*each + i)
			}
		})
	}
	for range 4 {
		wg.Go(func() {
			r := newRecorder[int]()
			mu.Lock()
			recorders = append(recorders, r)
			mu.Unlock()
			s.Observable().Subscribe(context.Background(), r)
		})
	}
	wg.Wait()
	s.OnCompleted()
	var order []int
	for i, r := range recorders {
		r.wait(t)
		values, _, _ := r.snapshot()
		assert.Equal(t, seq(0, producers*each), sorted(values), "subscriber %d", i)
		r.check(t, values, nil, true)
		if i == 0 {
			order = values
		} else {
			assert.Equal(t, order, values, "every subscriber sees the same order")
		}
	}
}

func TestSubjectReentrantOnNextIsQueued(t *testing.T) {
	s := NewPublishSubject[int]()
	var got []int
	s.Observable().SubscribeFunc(context.Background(), func(v int) {
		got = append(got, v)
		if v < 3 {
			s.OnNext(v + 1) // delivered after this call returns, not inside it
		}
		got = append(got, -v)
	}, nil, nil)
	s.OnNext(1)
	assert.Equal(t, []int{1, -1, 2, -2, 3, -3}, got)
}

func TestSubjectAsObserver(t *testing.T) {
	s := NewReplaySubject[int](0)
	Just(1, 2).Subscribe(context.Background(), s)
	got, err := s.Observable().ToSlice(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []int{1, 2}, got)
}

func TestSubjectFirstWaitsForAValue(t *testing.T) {
	s := NewPublishSubject[int]()
	result := make(chan int)
	go func() {
		v, _ := s.Observable().First(context.Background())
		result <- v
	}()
	// Keep emitting until the waiting subscriber has subscribed.
	for i := 1; ; i++ {
		s.OnNext(i)
		select {
		case v := <-result:
			assert.Positive(t, v)
			return
		default:
		}
	}
}

// A subscription to a Subject ends when the Subject terminates, and then
// leaves nothing hooked into the scope it was made in: inside a
// long-lived FlatMap whose inner Observables are replays of running
// sources (ReplayNow, Cache), every finished inner would otherwise stay
// hooked, with its observers, into the FlatMap's scope.
func TestSubjectSubscriptionLeavesNothingHookedOnceTerminated(t *testing.T) {
	outer := NewPublishSubject[int]()
	var shared *scope
	var inner *Subject[int]
	r := newRecorder[int]()
	sub := FlatMap(outer.Observable(), func(v int) Observable[int] {
		inner = NewPublishSubject[int]()
		return Concat(DeferContext(func(ctx context.Context) Observable[int] {
			shared = ctx.(*scope)
			return Empty[int]()
		}), inner.Observable())
	}).Subscribe(context.Background(), r)
	defer sub.Unsubscribe()

	outer.OnNext(0)
	inner.OnNext(0)
	inner.OnCompleted()
	before := countHooks(shared)
	for i := 1; i <= 100; i++ {
		outer.OnNext(i)
		inner.OnNext(i)
		inner.OnCompleted()
	}
	assert.Equal(t, before, countHooks(shared), "hooks left in the FlatMap's scope by 100 finished subscriptions")
	values, _, _ := r.snapshot()
	assert.Len(t, values, 101)
}

// A Subject told OnError(nil) has no error to pass on: its subscribers'
// First and ToSlice would report success (First a zero value, where an
// empty stream gives ErrEmpty). It refuses the nil at once, as Error does
// (and RxJava's subjects do).
func TestSubjectOnErrorWithNilErrPanics(t *testing.T) {
	for name, s := range map[string]*Subject[int]{
		"publish":  NewPublishSubject[int](),
		"behavior": NewBehaviorSubject(0),
		"replay":   NewReplaySubject[int](1),
	} {
		mustPanicWith(t, "nil err", func() { s.OnError(nil) })
		// The Subject has not terminated: a real error still reaches a
		// subscriber.
		r := newRecorder[int]()
		s.Observable().Subscribe(context.Background(), r)
		s.OnError(errBoom)
		r.wait(t)
		_, err, _ := r.snapshot()
		assert.ErrorIs(t, err, errBoom, name)
	}
}
