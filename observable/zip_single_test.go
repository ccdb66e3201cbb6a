package observable

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// joinableAsync is an asynchronous, joinable Single of v, as a command in
// a worker pool is: a subscription answers on a goroutine of its own, a
// Call at once. It logs what it was asked into log, and sends the context
// of each subscription on subscribed.
type joinableAsync struct {
	v          int
	log        *callLog
	subscribed chan context.Context
	calls      atomic.Int32
}

func (s *joinableAsync) Call(ctx context.Context) (int, error) {
	s.calls.Add(1)
	s.log.add("a called")
	return s.v, ctx.Err()
}

func (s *joinableAsync) SubscribeSingle(ctx context.Context, r SingleObserver[int]) {
	s.log.add("a subscribed")
	s.subscribed <- ctx
	go func() {
		if err := ctx.Err(); err != nil {
			r.OnResult(0, err)
			return
		}
		r.OnResult(s.v, nil)
	}()
}

func (*joinableAsync) Async() bool    { return true }
func (*joinableAsync) Joinable() bool { return true }

// callLog is what the Singles of a test were asked, in order.
type callLog struct {
	mu      sync.Mutex
	entries []string
}

func (l *callLog) add(e string) {
	l.mu.Lock()
	l.entries = append(l.entries, e)
	l.mu.Unlock()
}

func (l *callLog) get() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.entries...)
}

// First of Zip2 of a joinable asynchronous a and a b that answers at once
// calls b, then a, on the caller's goroutine: two calls, no subscription.
func TestZip2CallTakesOverAJoinableAsynchronousA(t *testing.T) {
	holdStarts(t)
	log := new(callLog)
	a := &joinableAsync{v: 6, log: log, subscribed: make(chan context.Context, 1)}
	b := FromFunc(func(ctx context.Context) (int, error) {
		log.add("b called")
		return 7, nil
	})
	v, err := Zip2(FromSingle[int](a), b, func(x, y int) int { return x * y }).First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 42, v)
	assert.Equal(t, []string{"b called", "a called"}, log.get())
}

// A b that takes longer than the starter's grace has a running beside it:
// the starter subscribes a while b's call waits.
func TestZip2CallStartsAWhileASlowBRuns(t *testing.T) {
	log := new(callLog)
	a := &joinableAsync{v: 6, log: log, subscribed: make(chan context.Context, 1)}
	b := FromFunc(func(ctx context.Context) (int, error) {
		select {
		case <-a.subscribed: // b answers only once a runs
		case <-time.After(10 * time.Second):
			return 0, errBoom
		}
		log.add("b answered")
		return 7, nil
	})
	v, err := Zip2(FromSingle[int](a), b, func(x, y int) int { return x * y }).First(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 42, v)
	assert.Equal(t, []string{"a subscribed", "b answered"}, log.get())
	assert.Zero(t, a.calls.Load())
}

// A b that fails ends the zip with its error, and a, which nobody has
// started, is subscribed at once under the zip's ended context, as a
// subscriber that left before its work began: a command records it
// CANCELLED with nothing taken.
func TestZip2CallEndsAWhenBFails(t *testing.T) {
	holdStarts(t)
	log := new(callLog)
	a := &joinableAsync{v: 6, log: log, subscribed: make(chan context.Context, 1)}
	b := FromFunc(func(ctx context.Context) (int, error) { return 0, errBoom })
	_, err := Zip2(FromSingle[int](a), b, func(x, y int) int { return x * y }).First(context.Background())
	assert.ErrorIs(t, err, errBoom)
	ctx := <-a.subscribed
	assert.ErrorIs(t, ctx.Err(), context.Canceled)
	assert.Zero(t, a.calls.Load())
}

// ToFuture never blocks its caller, nor does ReplayNowOn(NewGoroutine):
// Zip2 of an asynchronous Single and a synchronous one must not run the
// synchronous one's work on the caller's goroutine, as a Single that says
// it is asynchronous would have it.
func TestToFutureOfZip2WithASynchronousSideDoesNotBlockTheCaller(t *testing.T) {
	for _, how := range []string{"ToFuture", "ReplayNowOn"} {
		t.Run(how, func(t *testing.T) {
			bStarted, release := make(chan struct{}), make(chan struct{})
			defer close(release)
			a := FromFunc(func(context.Context) (int, error) { return 6, nil }).SubscribeOn(NewGoroutine)
			b := FromFunc(func(context.Context) (int, error) {
				close(bStarted)
				<-release // b's work takes a while
				return 7, nil
			})
			zip := Zip2(a, b, func(x, y int) int { return x * y })
			returned := make(chan func() (int, error))
			go func() {
				switch how {
				case "ToFuture":
					f := zip.ToFuture(context.Background())
					returned <- func() (int, error) { return f.Get(context.Background()) }
				default:
					r := zip.ReplayNowOn(context.Background(), NewGoroutine)
					returned <- func() (int, error) { return r.First(context.Background()) }
				}
			}()
			waitDone(t, bStarted, "b")
			var get func() (int, error)
			select {
			case get = <-returned:
			case <-time.After(10 * time.Second): // a safety net, not a timing assertion
				t.Fatalf("%s blocked its caller until b's work was done", how)
			}
			release <- struct{}{}
			v, err := get()
			require.NoError(t, err)
			assert.Equal(t, 42, v)
		})
	}
}
