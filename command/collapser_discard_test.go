package command

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/observable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gatedBatch is a batch function that answers "user<id>" for each id once
// released, whatever its context says, and len(ids)+extra results.
type gatedBatch struct {
	started chan struct{}
	release chan struct{}
	extra   int
}

func newGatedBatch(extra int) *gatedBatch {
	return &gatedBatch{started: make(chan struct{}, 1), release: make(chan struct{}), extra: extra}
}

func (g *gatedBatch) run(ctx context.Context, ids []int) ([]string, error) {
	g.started <- struct{}{}
	<-g.release
	out := make([]string, 0, len(ids)+g.extra)
	for _, id := range ids {
		out = append(out, "user"+itoa(id))
	}
	for i := range g.extra {
		out = append(out, "extra"+itoa(i))
	}
	return out, nil
}

// gatedCollapser is a global collapser of key, of g's batches with no
// timeout, whose discards d records.
func gatedCollapser(t *testing.T, key string, extra int) (c *Collapser[int, string], mc *clock.Manual, g *gatedBatch, d *discarded) {
	t.Helper()
	r, mc := newManualRegistry(t)
	g, d = newGatedBatch(extra), &discarded{}
	c = NewCollapser(key, g.run, WithRegistry(r), WithConfig(Config{Timeout: -1}),
		WithCollapserConfig(CollapserConfig{Scope: GlobalScope})).WithDiscard(d.discard)
	return c, mc, g, d
}

// startBatch closes the collecting window on another goroutine, since
// the batch runs on the goroutine that advances the clock, and waits for
// the batch function to begin; the returned channel is closed once the
// batch has ended.
func startBatch(t *testing.T, mc *clock.Manual, g *gatedBatch) <-chan struct{} {
	t.Helper()
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		mc.Advance(DefaultCollapserDelay)
	}()
	recv(t, g.started, "the batch to begin")
	return ended
}

// leaveQueued cancels the context a Queue was given and checks that its
// Future fails with it.
func leaveQueued(t *testing.T, cancel context.CancelFunc, f interface {
	Get(context.Context) (string, error)
}) {
	t.Helper()
	cancel()
	_, err := f.Get(context.Background())
	require.ErrorIs(t, err, context.Canceled)
}

// awaitDiscarded waits for the batch to end and for d to have discarded
// something, since a caller's leaving reaches the batch on
// context.AfterFunc's goroutine, maybe after the result came; then it
// checks that d discarded want.
func awaitDiscarded(t *testing.T, ended <-chan struct{}, d *discarded, want []string, msg string) {
	t.Helper()
	recv(t, ended, "the batch to end")
	waitFor(t, "a discard", func() bool { return len(d.values()) > 0 })
	assert.Equal(t, want, d.values(), msg)
}

func TestCollapserDiscardsResultsNoCallerReceives(t *testing.T) {

	// One caller, or two sharing the argument, leave the started batch.
	for _, leavers := range []int{1, 2} {
		t.Run(fmt.Sprintf("%d callers of an argument left its started batch", leavers), func(t *testing.T) {
			c, mc, g, d := gatedCollapser(t, fmt.Sprint("Left", leavers), 0)
			var cancels []context.CancelFunc
			var left []*observable.Future[string]
			for range leavers {
				ctx, cancel := context.WithCancel(context.Background())
				cancels, left = append(cancels, cancel), append(left, c.Queue(ctx, 1))
			}
			stays := c.Queue(context.Background(), 2)
			ended := startBatch(t, mc, g)
			for i, f := range left {
				leaveQueued(t, cancels[i], f)
			}
			close(g.release)
			assert.Equal(t, "user2", get(t, stays))
			awaitDiscarded(t, ended, d, []string{"user1"}, "only the result whose callers left, once")
		})
	}

	t.Run("one caller of a shared argument stayed", func(t *testing.T) {
		c, mc, g, d := gatedCollapser(t, "SharedStayed", 0)
		ctxA, cancelA := context.WithCancel(context.Background())
		fa, fb := c.Queue(ctxA, 1), c.Queue(context.Background(), 1)
		ended := startBatch(t, mc, g)
		leaveQueued(t, cancelA, fa)
		close(g.release)
		assert.Equal(t, "user1", get(t, fb))
		recv(t, ended, "the batch to end")
		assert.Empty(t, d.values(), "a result one caller received is the caller's")
	})

	t.Run("a wrong number of results", func(t *testing.T) {
		c, mc, g, d := gatedCollapser(t, "WrongCount", 1)
		f1, f2 := c.Queue(context.Background(), 1), c.Queue(context.Background(), 2)
		close(g.release)
		mc.Advance(DefaultCollapserDelay)
		for _, f := range []interface {
			Get(context.Context) (string, error)
		}{f1, f2} {
			_, err := f.Get(context.Background())
			require.ErrorIs(t, err, ErrBatchResultCount)
		}
		assert.Equal(t, []string{"user1", "user2", "extra0"}, d.values())
	})

	t.Run("a batch past its timeout", func(t *testing.T) {
		r, mc := newManualRegistry(t)
		g, d := newGatedBatch(0), &discarded{}
		c := NewCollapser("Late", g.run, WithRegistry(r), WithConfig(Config{Timeout: 100 * time.Millisecond}),
			WithCollapserConfig(CollapserConfig{Scope: GlobalScope})).WithDiscard(d.discard)
		f1, f2 := c.Queue(context.Background(), 1), c.Queue(context.Background(), 2)
		ended := startBatch(t, mc, g) // the window's goroutine waits for the batch command
		mc.Advance(100 * time.Millisecond)
		for _, f := range []interface {
			Get(context.Context) (string, error)
		}{f1, f2} {
			_, err := f.Get(context.Background())
			require.ErrorIs(t, err, ErrTimeout)
		}
		recv(t, ended, "the batch command to time out")
		close(g.release)
		waitFor(t, "both late results to be discarded", func() bool { return len(d.values()) == 2 })
		assert.ElementsMatch(t, []string{"user1", "user2"}, d.values())
	})

	t.Run("a subscriber left as its result came", func(t *testing.T) {
		c, mc, g, d := gatedCollapser(t, "Unsubscribed", 0)
		got := make(chan string, 1)
		sub := c.ToObservable(context.Background(), 1).SubscribeFunc(context.Background(), func(v string) { got <- v }, nil, nil)
		f2 := c.Queue(context.Background(), 2)
		ended := startBatch(t, mc, g)
		sub.Unsubscribe()
		close(g.release)
		assert.Equal(t, "user2", get(t, f2))
		recv(t, ended, "the batch to end")
		assert.Empty(t, got)
		assert.Equal(t, []string{"user1"}, d.values())
	})

	t.Run("nil", func(t *testing.T) {
		r, _ := newManualRegistry(t)
		c := NewCollapser("NilDiscard", new(batches).getUsers, WithRegistry(r))
		assert.PanicsWithValue(t, `command: WithDiscard of "NilDiscard" with nil f`, func() { c.WithDiscard(nil) })
	})
}

// Callers of every kind (Execute, Queue, ToObservable, Observe) that
// leave at random moments, some sharing an argument, in batches that
// start as they fill up on goroutines of their own: each result a batch
// returns is received by some caller or discarded, once, never both.
func TestCollapserEveryResultIsReceivedOrDiscarded(t *testing.T) {
	for round := range 20 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			r, mc := newManualRegistry(t)
			var mu sync.Mutex
			var produced []string
			batch := func(ctx context.Context, ids []int) ([]string, error) {
				mu.Lock()
				defer mu.Unlock()
				out := make([]string, len(ids))
				for i, id := range ids {
					out[i] = fmt.Sprintf("%d#%d", id, len(produced))
					produced = append(produced, out[i])
				}
				return out, nil
			}
			d := &discarded{}
			c := NewCollapser("Account", batch, WithRegistry(r), WithConfig(Config{Timeout: -1}),
				WithCollapserConfig(CollapserConfig{Scope: GlobalScope, MaxRequestsInBatch: 4})).WithDiscard(d.discard)
			var received sync.Map
			var wg sync.WaitGroup
			for i := range 64 {
				ctx, cancel := context.WithCancel(context.Background())
				wg.Add(2)
				go func() {
					defer wg.Done()
					id := rand.IntN(8)
					var v string
					var err error
					switch i / 2 % 4 { // every way of calling, leaving or not
					case 0:
						v, err = c.Execute(ctx, id)
					case 1:
						v, err = c.Queue(ctx, id).Get(context.Background())
					case 2:
						v, err = c.ToObservable(ctx, id).First(ctx)
					default:
						v, err = c.Observe(ctx, id).First(ctx)
					}
					if err == nil {
						received.Store(v, true)
					}
				}()
				go func() {
					defer wg.Done()
					if i%2 == 0 {
						for range rand.IntN(200) {
							runtime.Gosched()
						}
						cancel()
					}
				}()
				defer cancel()
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			for waiting := true; waiting; {
				select {
				case <-done:
					waiting = false
				default:
					mc.Advance(DefaultCollapserDelay) // the last batch's window
					runtime.Gosched()
				}
			}
			account := func() (missing, both []string) {
				mu.Lock()
				defer mu.Unlock()
				gone := d.values()
				for _, v := range produced {
					_, got := received.Load(v)
					n := 0
					for _, g := range gone {
						if g == v {
							n++
						}
					}
					switch {
					case got && n > 0, n > 1:
						both = append(both, v)
					case !got && n == 0:
						missing = append(missing, v)
					}
				}
				return missing, both
			}
			waitFor(t, "every result to be received or discarded", func() bool { missing, _ := account(); return len(missing) == 0 })
			_, both := account()
			assert.Empty(t, both, "received and discarded, or discarded twice")
		})
	}
}

// The last caller of a request can leave in the moment after its result
// is set and before anything it waits on tells it (between Execute's
// look at the result and its leaving, or while the result's callbacks
// run): whichever of that caller and the batch looks last discards the
// result, once. No interleaving of the public calls reliably reaches that
// moment, so the two orders are played on a request directly.
func TestCollapserResultLeftAsItCameIsDiscardedOnce(t *testing.T) {
	r, _ := newManualRegistry(t)
	newRequest := func() (*batcher[int, string], *collapsedRequest[int, string], *discarded) {
		d := &discarded{}
		c := NewCollapser("LeftAsItCame", new(batches).getUsers, WithRegistry(r),
			WithCollapserConfig(CollapserConfig{Scope: GlobalScope})).WithDiscard(d.discard)
		b := c.global
		req := &collapsedRequest[int, string]{b: b, arg: 1, waiters: 1, res: newPendingResult[string](),
			batch: &batch[int, string]{started: true, live: 1}}
		req.res.resolve("user1", nil)
		return b, req, d
	}
	batchLooks := func(b *batcher[int, string], req *collapsedRequest[int, string]) {
		b.mu.Lock()
		b.discardOrphanUnlock(req) // as execute looks after resolving
	}

	t.Run("the batch looks first", func(t *testing.T) {
		b, req, d := newRequest()
		batchLooks(b, req)
		assert.Empty(t, d.values(), "a caller still waits")
		b.leave(req)
		assert.Equal(t, []string{"user1"}, d.values())
		assert.True(t, req.abandoned, "the request cache no longer serves it")
	})
	t.Run("the caller leaves first", func(t *testing.T) {
		b, req, d := newRequest()
		b.leave(req)
		assert.Equal(t, []string{"user1"}, d.values())
		batchLooks(b, req)
		assert.Equal(t, []string{"user1"}, d.values(), "once")
	})
	t.Run("a caller received it", func(t *testing.T) {
		b, req, d := newRequest()
		req.waiters++
		v, err := b.take(req)
		require.NoError(t, err)
		assert.Equal(t, "user1", v)
		b.leave(req)
		batchLooks(b, req)
		assert.Empty(t, d.values())
	})
}

// An Observable of ToObservable subscribed twice cannot tell which of
// its results an operator drops: Discard leaves it alone, while one
// subscribed once gives its result back.
func TestCollapserObservableSubscribedTwiceLeavesADroppedResultAlone(t *testing.T) {
	c, mc, g, d := gatedCollapser(t, "Twice", 0)
	close(g.release)
	// Each subscription in a batch of its own: a request of its own.
	subscribe := func(o observable.Observable[string], n int) *collapsedSingle[int, string] {
		got := make(chan string, 1)
		for range n {
			o.SubscribeFunc(context.Background(), func(v string) { got <- v }, nil, nil)
			mc.Advance(DefaultCollapserDelay)
			recv(t, g.started, "the batch") // so that the next batch can tell it began
			assert.Equal(t, "user1", recv(t, got, "a subscriber's result"))
		}
		s, _ := o.AsSingle()
		return s.(*collapsedSingle[int, string])
	}

	subscribe(c.ToObservable(context.Background(), 1), 2).Discard("user1")
	assert.Empty(t, d.values(), "told twice: whose is it?")

	subscribe(c.ToObservable(context.Background(), 1), 1).Discard("user1")
	assert.Equal(t, []string{"user1"}, d.values(), "told once")
}

// Zip2 is one of the operators WithDiscard names: a result of
// ToObservable's Observable, subscribed once, that Zip2 drops because
// its other side failed goes back, and is discarded. First of a Zip2
// whose first side is asynchronous calls the second side's Single on
// the caller's goroutine (Call): that result goes back too.
func TestCollapserResultDroppedByZipAfterCallIsDiscarded(t *testing.T) {
	r, mc := newManualRegistry(t)
	d := &discarded{}
	b := NewCollapser("ZipB", new(batches).getUsers, WithRegistry(r),
		WithCollapserConfig(CollapserConfig{Scope: GlobalScope, Delay: time.Millisecond})).WithDiscard(d.discard)
	failed := errors.New("the other side failed")
	a := NewCollapser("ZipA", func(context.Context, []int) ([]string, error) { return nil, failed },
		WithRegistry(r), WithCollapserConfig(CollapserConfig{Scope: GlobalScope}))

	zipped := observable.Zip2(a.ToObservable(context.Background(), 1), b.ToObservable(context.Background(), 1),
		func(x, y string) string { return x + y })
	done := make(chan error, 1)
	go func() {
		_, err := zipped.First(context.Background())
		done <- err
	}()
	waitFor(t, "both requests to be queued", func() bool { return mc.Pending() >= 2 })
	mc.Advance(time.Millisecond) // b's batch answers "user1"
	mc.Advance(DefaultCollapserDelay)
	err := recv(t, done, "the zip to fail")
	require.ErrorIs(t, err, failed)
	assert.Equal(t, []string{"user1"}, d.values(), "the result Zip2 dropped is discarded")
}
