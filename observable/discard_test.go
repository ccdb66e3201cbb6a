package observable

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// ownedSingle is a Discarder Single of v: a Call answers at once; a
// subscription answers on a goroutine of its own once answer is closed
// (at once if answer is nil). It keeps the values it was asked to
// discard.
type ownedSingle struct {
	v           int
	err         error
	async       bool
	answer      chan struct{}
	onSubscribe func(ctx context.Context) // if not nil, called as a subscription begins
	onCall      func()                    // if not nil, called as Call begins

	calls     atomic.Int32
	discarded callLog // each value discarded, formatted
}

func (s *ownedSingle) Call(ctx context.Context) (int, error) {
	s.calls.Add(1)
	if s.onCall != nil {
		s.onCall()
	}
	if s.err != nil {
		return 0, s.err
	}
	return s.v, nil
}

func (s *ownedSingle) SubscribeSingle(ctx context.Context, r SingleObserver[int]) {
	if s.onSubscribe != nil {
		s.onSubscribe(ctx)
	}
	if !s.async {
		r.OnResult(s.Call(ctx))
		return
	}
	go func() {
		if s.answer != nil {
			<-s.answer
		}
		r.OnResult(s.Call(ctx)) // whatever ctx says: a value that comes late
	}()
}

func (s *ownedSingle) Async() bool { return s.async }

func (s *ownedSingle) Discard(v int) { s.discarded.add(fmt.Sprint(v)) }

func (s *ownedSingle) discards() []string { return s.discarded.get() }

// awaitDiscards waits until s has discarded n values.
func (s *ownedSingle) awaitDiscards(t *testing.T, n int) []string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for len(s.discards()) < n {
		if time.Now().After(deadline) {
			t.Fatalf("discarded %v; want %d values", s.discards(), n)
		}
		time.Sleep(50 * time.Microsecond)
	}
	return s.discards()
}

func mul(x, y int) int { return x * y }

// A Zip2 of Singles whose b fails discards a's value, however it is
// taken: First's calls, or a subscription.
func TestZip2DiscardsTheValueOfASideWhoseOtherFailed(t *testing.T) {
	for _, async := range []bool{false, true} {
		a := &ownedSingle{v: 6, async: async}
		b := &ownedSingle{err: errBoom, async: async}
		zip := Zip2(FromSingle[int](a), FromSingle[int](b), mul)

		_, err := zip.First(context.Background())
		require.ErrorIs(t, err, errBoom)
		assert.Equal(t, []string{"6"}, a.awaitDiscards(t, 1), "async %v: First", async)

		r := newRecorder[int]()
		zip.Subscribe(context.Background(), r)
		r.wait(t)
		r.check(t, nil, errBoom, false)
		assert.Equal(t, []string{"6", "6"}, a.awaitDiscards(t, 2), "async %v: a subscription", async)
		assert.Empty(t, b.discards())
	}
}

// A value that comes after the other side failed is discarded, and one
// that was paired is not.
func TestZip2DiscardsAValueThatComesAfterTheOtherFailed(t *testing.T) {
	a := &ownedSingle{v: 6, async: true, answer: make(chan struct{})}
	b := &ownedSingle{err: errBoom}
	r := newRecorder[int]()
	Zip2(FromSingle[int](a), FromSingle[int](b), mul).Subscribe(context.Background(), r)
	r.wait(t)
	r.check(t, nil, errBoom, false)
	assert.Empty(t, a.discards(), "a has not answered yet")
	close(a.answer)
	assert.Equal(t, []string{"6"}, a.awaitDiscards(t, 1))

	// b's value late, after a failed: both subscribed, a fails first.
	a = &ownedSingle{err: errBoom, async: true, answer: make(chan struct{})}
	b = &ownedSingle{v: 7, async: true, answer: make(chan struct{})}
	r = newRecorder[int]()
	Zip2(FromSingle[int](a), FromSingle[int](b), mul).Subscribe(context.Background(), r)
	close(a.answer) // b is subscribed: Subscribe has returned
	r.wait(t)
	r.check(t, nil, errBoom, false)
	close(b.answer)
	assert.Equal(t, []string{"7"}, b.awaitDiscards(t, 1))

	a, b = &ownedSingle{v: 6}, &ownedSingle{v: 7}
	v, err := Zip2(FromSingle[int](a), FromSingle[int](b), mul).First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 42, v)
	assert.Empty(t, a.discards(), "a paired value is the receiver's")
	assert.Empty(t, b.discards())
}

// Zip2 of a Single and a stream discards the Single's value when the
// stream ends without a partner for it.
func TestZip2OfAStreamDiscardsTheSinglesUnpairedValue(t *testing.T) {
	for _, c := range []struct {
		name   string
		stream Observable[int]
		err    error
	}{
		{"stream completes empty", Create(func(_ context.Context, o Observer[int]) { o.OnCompleted() }), nil},
		{"stream fails", Create(func(_ context.Context, o Observer[int]) { o.OnError(errBoom) }), errBoom},
	} {
		a := &ownedSingle{v: 6}
		r := newRecorder[int]()
		Zip2(FromSingle[int](a), c.stream, mul).Subscribe(context.Background(), r)
		r.wait(t)
		r.check(t, nil, c.err, c.err == nil)
		assert.Equal(t, []string{"6"}, a.discards(), c.name)
	}
	late := &ownedSingle{v: 6, async: true, answer: make(chan struct{})}
	r := newRecorder[int]()
	Zip2(FromSingle[int](late), Create(func(_ context.Context, o Observer[int]) { o.OnError(errBoom) }), mul).
		Subscribe(context.Background(), r)
	r.wait(t)
	r.check(t, nil, errBoom, false)
	close(late.answer) // after the zip failed
	assert.Equal(t, []string{"6"}, late.awaitDiscards(t, 1), "a value that comes after the zip ended")

	a := &ownedSingle{v: 6}
	r = newRecorder[int]()
	Zip2(FromSingle[int](a), Just(7, 8), mul).Subscribe(context.Background(), r)
	r.wait(t)
	r.check(t, []int{42}, nil, true)
	assert.Empty(t, a.discards(), "paired")
}

// Timeout discards a value its Single gives after the timeout, and
// passes on one given in time.
func TestTimeoutDiscardsALateValue(t *testing.T) {
	mc := clock.NewManual(epoch)
	late := &ownedSingle{v: 6, async: true, answer: make(chan struct{})}
	r := newRecorder[int]()
	FromSingle[int](late).TimeoutOn(time.Second, mc).Subscribe(context.Background(), r)
	mc.Advance(time.Second)
	r.check(t, nil, ErrTimeout, false)
	close(late.answer)
	assert.Equal(t, []string{"6"}, late.awaitDiscards(t, 1))

	inTime := &ownedSingle{v: 7}
	r = newRecorder[int]()
	FromSingle[int](inTime).TimeoutOn(time.Second, mc).Subscribe(context.Background(), r)
	r.check(t, []int{7}, nil, true)
	assert.Empty(t, inTime.discards())
}

// A hot replay of a Single whose every subscriber left before the
// result does not keep a value the Single gives as its cancellation
// reaches it: it is discarded, and later subscribers get Canceled.
func TestReplayNowDiscardsAValueThatComesOnceEverySubscriberLeft(t *testing.T) {
	late := &ownedSingle{v: 6, async: true, answer: make(chan struct{})}
	hot := FromSingle[int](late).ReplayNow(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := hot.First(ctx)
	require.ErrorIs(t, err, context.Canceled)
	close(late.answer)
	assert.Equal(t, []string{"6"}, late.awaitDiscards(t, 1))
	_, err = hot.First(context.Background())
	assert.ErrorIs(t, err, context.Canceled, "a later subscriber")

	kept := &ownedSingle{v: 7, async: true, answer: make(chan struct{})}
	hot = FromSingle[int](kept).ReplayNow(context.Background())
	got := make(chan int, 1)
	hot.SubscribeFunc(context.Background(), func(v int) { got <- v }, nil, nil)
	close(kept.answer)
	assert.Equal(t, 7, <-got, "a subscriber waits")
	v, err := hot.First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 7, v, "replayed")
	assert.Empty(t, kept.discards())
}

// A Future that has ended, cancelled or with its context done, refuses
// the value its Single gives after that: it is discarded.
func TestFutureDiscardsAValueThatComesOnceItEnded(t *testing.T) {
	cancelled := &ownedSingle{v: 6, async: true, answer: make(chan struct{})}
	f := FromSingle[int](cancelled).ToFuture(context.Background())
	f.Cancel()
	close(cancelled.answer)
	assert.Equal(t, []string{"6"}, cancelled.awaitDiscards(t, 1))
	_, err := f.Get(context.Background())
	assert.ErrorIs(t, err, context.Canceled)

	ctx, cancel := context.WithCancel(context.Background())
	left := &ownedSingle{v: 7, async: true, answer: make(chan struct{})}
	f = FromSingle[int](left).ToFutureOn(ctx, Immediate)
	cancel()
	_, err = f.Get(context.Background())
	require.ErrorIs(t, err, context.Canceled)
	close(left.answer)
	assert.Equal(t, []string{"7"}, left.awaitDiscards(t, 1))

	kept := &ownedSingle{v: 8, async: true, answer: make(chan struct{})}
	f = FromSingle[int](kept).ToFuture(context.Background())
	close(kept.answer)
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 8, v)
	assert.Empty(t, kept.discards())
}

// A pair completed after its subscriber left is not made: both values
// are discarded.
func TestZip2DiscardsBothValuesOfAPairNobodyWaitsFor(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	a := &ownedSingle{v: 6, async: true, answer: make(chan struct{})}
	b := &ownedSingle{v: 7, onCall: cancel} // the subscriber leaves as b answers
	made := false
	first := make(chan error, 1)
	go func() {
		_, err := Zip2(FromSingle[int](a), FromSingle[int](b), func(x, y int) int { made = true; return x * y }).First(ctx)
		first <- err
	}()
	require.ErrorIs(t, <-first, context.Canceled)
	close(a.answer) // a answers once First has given up
	assert.Equal(t, []string{"6"}, a.awaitDiscards(t, 1))
	assert.Equal(t, []string{"7"}, b.awaitDiscards(t, 1))
	assert.False(t, made, "the pair was made for nobody")
}

// A subscriber that leaves while a is being subscribed ends the join: b
// is not asked, and a value a gives later is discarded.
func TestZip2DiscardsWhatASideGivesAfterTheSubscriberLeft(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	a := &ownedSingle{v: 6, async: true, answer: make(chan struct{}), onSubscribe: func(ctx context.Context) {
		cancel()
		<-ctx.Done() // the join's scope has ended
	}}
	b := &ownedSingle{v: 7}
	r := newRecorder[int]()
	Zip2(FromSingle[int](a), FromSingle[int](b), mul).Subscribe(ctx, r)
	close(a.answer)
	assert.Equal(t, []string{"6"}, a.awaitDiscards(t, 1))
	assert.Zero(t, b.calls.Load(), "b asked after the subscriber left")
	values, _, _ := r.snapshot()
	assert.Empty(t, values)
}

// ownedProducer is a Discarder Producer whose subscription number n runs
// produce(n), whatever its context says. It keeps the values it was
// asked to discard.
type ownedProducer struct {
	produce   func(n int, ctx context.Context, o Observer[int])
	calls     atomic.Int32
	discarded callLog
}

func (p *ownedProducer) Produce(ctx context.Context, o Observer[int]) {
	p.produce(int(p.calls.Add(1))-1, ctx, o)
}

func (p *ownedProducer) Discard(v int) { p.discarded.add(fmt.Sprint(v)) }

// emitting returns a produce that emits vs and completes.
func emitting(vs ...int) func(int, context.Context, Observer[int]) {
	return func(_ int, _ context.Context, o Observer[int]) {
		for _, v := range vs {
			o.OnNext(v)
		}
		o.OnCompleted()
	}
}

// What a Discarder Producer emits once its subscription has ended goes
// back to its Discard: the values after the one First took, those past
// Take's count, and those that come after Unsubscribe. Last hands it
// each value a later one replaced.
func TestFromProducerDiscardsWhatComesAfterItsSubscriptionEnded(t *testing.T) {
	for _, c := range []struct {
		name      string
		take      func(Observable[int]) (int, error)
		v         int
		discarded []string
	}{
		{"First", func(o Observable[int]) (int, error) { return o.First(context.Background()) }, 1, []string{"2", "3"}},
		{"Last", func(o Observable[int]) (int, error) { return o.Last(context.Background()) }, 3, []string{"1", "2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := &ownedProducer{produce: emitting(1, 2, 3)}
			v, err := c.take(FromProducer[int](p))
			require.NoError(t, err)
			assert.Equal(t, c.v, v)
			assert.Equal(t, c.discarded, p.discarded.get())
		})
	}
	t.Run("Take", func(t *testing.T) {
		p := &ownedProducer{produce: emitting(1, 2, 3)}
		vs, err := FromProducer[int](p).Take(2).ToSlice(context.Background())
		require.NoError(t, err)
		assert.Equal(t, []int{1, 2}, vs)
		assert.Equal(t, []string{"3"}, p.discarded.get())
	})
	t.Run("Unsubscribe", func(t *testing.T) {
		emit := make(chan int)
		done := make(chan struct{})
		p := &ownedProducer{produce: func(_ int, _ context.Context, o Observer[int]) {
			go func() {
				defer close(done)
				for v := range emit {
					o.OnNext(v)
				}
			}()
		}}
		var got callLog
		seen := make(chan struct{}, 1)
		sub := FromProducer[int](p).SubscribeFunc(context.Background(), func(v int) {
			got.add(fmt.Sprint(v))
			seen <- struct{}{}
		}, nil, nil)
		emit <- 1
		<-seen // 1 is received before the subscription ends
		sub.Unsubscribe()
		emit <- 2
		close(emit)
		<-done
		assert.Equal(t, []string{"1"}, got.get())
		assert.Equal(t, []string{"2"}, p.discarded.get())
	})
	t.Run("nothing while the subscription lives", func(t *testing.T) {
		p := &ownedProducer{produce: emitting(1, 2)}
		vs, err := FromProducer[int](p).ToSlice(context.Background())
		require.NoError(t, err)
		assert.Equal(t, []int{1, 2}, vs)
		assert.Empty(t, p.discarded.get())
	})
}

// A hedged stream of a Discarder Producer hands it the values of the
// attempt that lost: here the first attempt, which emits once the hedge
// has won and its own context has ended.
func TestHedgeStreamDiscardsTheValuesOfAnAttemptThatLost(t *testing.T) {
	mc := clock.NewManual(epoch)
	release := make(chan struct{})
	loserDone := make(chan struct{})
	p := &ownedProducer{produce: func(n int, ctx context.Context, o Observer[int]) {
		if n == 1 {
			o.OnNext(10)
			o.OnCompleted()
			return
		}
		go func() {
			defer close(loserDone)
			<-release
			o.OnNext(5)
			o.OnNext(6)
			o.OnCompleted()
		}()
	}}
	o := HedgeStreamOn(FromProducer[int](p), HedgePolicy{Delay: delayOf(time.Second)}, mc)
	hedgeWins(t, mc, o)
	close(release)
	<-loserDone
	assert.Equal(t, []string{"5", "6"}, p.discarded.get())
}

// hedgeWins collects o, whose hedge starts a second after its first
// attempt, once mc has moved past that second, and checks that the
// stream is the hedge's: 10.
func hedgeWins(t *testing.T, mc *clock.Manual, o Observable[int]) {
	t.Helper()
	got := make(chan []int, 1)
	go func() {
		vs, _ := o.ToSlice(context.Background())
		got <- vs
	}()
	require.NoError(t, mc.BlockUntil(context.Background(), 1))
	mc.Advance(time.Second)
	assert.Equal(t, []int{10}, <-got, "the hedge won")
}

// The same of a Discarder Single, whose loser answers once the hedge has
// won: the attempt's subscription hands the late value to the Single.
func TestHedgeStreamOfASingleDiscardsTheValueOfTheAttemptThatLost(t *testing.T) {
	mc := clock.NewManual(epoch)
	s := &firstAnswersLate{release: make(chan struct{}), lateDone: make(chan struct{})}
	o := HedgeStreamOn(FromSingle[int](s), HedgePolicy{Delay: delayOf(time.Second)}, mc)
	hedgeWins(t, mc, o)
	close(s.release)
	<-s.lateDone
	assert.Equal(t, []string{"5"}, s.discards())
}

// firstAnswersLate is a Discarder Single whose first subscription answers
// 5 once release is closed, whatever its context says, and whose others
// answer 10 at once.
type firstAnswersLate struct {
	ownedSingle
	subscriptions     atomic.Int32
	release, lateDone chan struct{}
}

func (s *firstAnswersLate) SubscribeSingle(ctx context.Context, r SingleObserver[int]) {
	if s.subscriptions.Add(1) > 1 {
		r.OnResult(10, nil)
		return
	}
	go func() {
		defer close(s.lateDone)
		<-s.release
		r.OnResult(5, nil)
	}()
}

func (s *firstAnswersLate) Async() bool { return true }

// ToSlice hands back what it collected, and Last the value it held, when
// their context ends before the source terminates.
func TestToSliceAndLastDiscardWhatTheyHeldWhenTheirContextEnded(t *testing.T) {
	for name, take := range map[string]func(context.Context, Observable[int]) error{
		"ToSlice": func(ctx context.Context, o Observable[int]) error {
			vs, err := o.ToSlice(ctx)
			assert.Nil(t, vs)
			return err
		},
		"Last": func(ctx context.Context, o Observable[int]) error {
			v, err := o.Last(ctx)
			assert.Zero(t, v)
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			collected := make(chan struct{})
			p := &ownedProducer{produce: func(_ int, _ context.Context, o Observer[int]) {
				o.OnNext(1)
				o.OnNext(2)
				close(collected)
			}}
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				<-collected
				cancel()
			}()
			assert.ErrorIs(t, take(ctx, FromProducer[int](p)), context.Canceled)
			assert.Equal(t, []string{"1", "2"}, p.discarded.get())
		})
	}
}

// discardingObserver is an Observer that is a Discarder: it tells discard
// each value handed to Discard.
type discardingObserver struct {
	funcObserver[int]
	discard chan int
}

func (o discardingObserver) Discard(v int) { o.discard <- v }

// A value that comes once a subscription has ended goes to its observer's
// Discard, when the observer is a Discarder: an observer that takes
// values for somebody else gives it back.
func TestSubscribeHandsAValueThatComesAfterTheEndToADiscarderObserver(t *testing.T) {
	late := &ownedSingle{v: 6, async: true, answer: make(chan struct{})}
	obs := discardingObserver{
		funcObserver: funcObserver[int]{next: func(v int) { t.Errorf("OnNext(%d) once the subscription had ended", v) }},
		discard:      make(chan int, 1),
	}
	sub := FromSingle[int](late).Subscribe(context.Background(), obs)
	sub.Unsubscribe()
	close(late.answer)
	select {
	case v := <-obs.discard:
		assert.Equal(t, 6, v)
	case <-time.After(10 * time.Second):
		t.Fatal("the late value never reached the observer's Discard")
	}
	<-sub.Done()
	assert.Empty(t, late.discards(), "the value is the observer's to give back, not the Single's")
}

// A value that comes once a subscription has ended goes to the Discard of
// the Single it came from, when the observer is not a Discarder.
func TestSubscribeHandsAValueThatComesAfterTheEndToTheSingle(t *testing.T) {
	late := &ownedSingle{v: 6, async: true, answer: make(chan struct{})}
	sub := FromSingle[int](late).Subscribe(context.Background(), funcObserver[int]{
		next: func(v int) { t.Errorf("OnNext(%d) once the subscription had ended", v) },
	})
	sub.Unsubscribe()
	close(late.answer)
	assert.Equal(t, []string{"6"}, late.awaitDiscards(t, 1))
}

// Last and a Future hold the latest value of a Discarder Producer until
// the source terminates: when it fails instead, nobody receives that
// value, which goes back to the Producer's Discard as every value Last
// drops does.
func TestLastDiscardsTheValueItHeldWhenTheSourceFails(t *testing.T) {
	p := &ownedProducer{produce: func(_ int, _ context.Context, o Observer[int]) {
		o.OnNext(1)
		o.OnNext(2)
		o.OnError(errBoom)
	}}
	v, err := FromProducer[int](p).Last(context.Background())
	require.ErrorIs(t, err, errBoom)
	assert.Zero(t, v)
	assert.Equal(t, []string{"1", "2"}, p.discarded.get(), "the value replaced, and the one held")

	p = &ownedProducer{produce: p.produce}
	v, err = FromProducer[int](p).ToFutureOn(context.Background(), Immediate).Get(context.Background())
	require.ErrorIs(t, err, errBoom)
	assert.Zero(t, v)
	assert.Equal(t, []string{"1", "2"}, p.discarded.get(), "a Future's too")
}

// A Future cancelled once it holds a value hands it back.
func TestFutureDiscardsTheValueItHeldWhenCancelled(t *testing.T) {
	p := &ownedProducer{produce: func(_ int, _ context.Context, o Observer[int]) { o.OnNext(3) }}
	f := FromProducer[int](p).ToFutureOn(context.Background(), Immediate)
	f.Cancel()
	_, err := f.Get(context.Background())
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, []string{"3"}, p.discarded.get())
}

// A value of a Discarder Single queued in a Zip2 for a partner that has
// not come is "left without a partner ... the subscriber left before the
// pair was made" (Discarder) once the subscriber leaves: it goes back to
// the Single then, even though the other source, which sees its context
// end, says nothing more (a Create's events after its end are dropped).
func TestZip2DiscardsAQueuedValueWhenTheSubscriberLeaves(t *testing.T) {
	for _, c := range []struct {
		name  string
		other Observable[int]
	}{
		{"Never", Never[int]()},
		{"Create that fails at its end", Create(func(ctx context.Context, o Observer[int]) {
			go func() {
				<-ctx.Done()
				o.OnError(ctx.Err())
			}()
		})},
	} {
		a := &ownedSingle{v: 6}
		r := newRecorder[int]()
		sub := Zip2(FromSingle[int](a), c.other, mul).Subscribe(context.Background(), r)
		assert.Empty(t, a.discards(), "%s: waiting for a partner", c.name)
		sub.Unsubscribe()
		assert.Equal(t, []string{"6"}, a.awaitDiscards(t, 1), c.name)
		r.check(t, nil, nil, false)
	}
}
