package observable

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/startgrace"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// startedSingle reports on started each time its work is started by a
// subscription (not called), with its context's error then.
type startedSingle struct {
	started chan error
}

func newStartedSingle() *startedSingle {
	return &startedSingle{started: make(chan error, 1)}
}

// awaitStart returns the error of the work's context when it started,
// and fails the test if nothing starts it in ten seconds.
func (s *startedSingle) awaitStart(t *testing.T) error {
	t.Helper()
	select {
	case err := <-s.started:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("the work was never started")
		return nil
	}
}

func (s *startedSingle) Call(ctx context.Context) (int, error) { return 7, ctx.Err() }

func (s *startedSingle) SubscribeSingle(ctx context.Context, r SingleObserver[int]) {
	s.started <- ctx.Err()
	r.OnResult(7, ctx.Err())
}

func (*startedSingle) Async() bool    { return false }
func (*startedSingle) Joinable() bool { return true }

func TestWorkNobodyWaitsForIsStarted(t *testing.T) {
	s := newStartedSingle()
	f := FromSingle[int](s).ToFuture(context.Background())
	require.NoError(t, s.awaitStart(t)) // by the starter, after its grace
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	goleak.VerifyNone(t) // and the starter leaves once nothing comes
}

// A Get that takes its work over first starts the work queued after it on
// its processor, so that a caller that queued several executions has the
// others running while it runs the first; work queued before it is left
// to the starter's grace. (One processor, so that every push goes onto
// the same list.)
func TestATakeOverStartsTheWorkQueuedAfterIt(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	holdStarts(t)
	older, newer := newStartedSingle(), newStartedSingle()
	taken := &countingSingle{join: true}
	fOlder := FromSingle[int](older).ToFuture(context.Background())
	f := FromSingle[int](taken).ToFuture(context.Background())
	fNewer := FromSingle[int](newer).ToFuture(context.Background())

	_, err := f.Get(context.Background())
	require.NoError(t, err)
	assert.Equal(t, int32(1), taken.calls.Load(), "the Get called its work")
	require.NoError(t, newer.awaitStart(t), "the work queued after it was started")
	select {
	case <-older.started:
		t.Fatal("the work queued before it started before the starter's grace was over")
	default:
	}
	startgrace.Set(startgrace.Default)
	require.NoError(t, older.awaitStart(t))
	for _, f := range []*Future[int]{fOlder, fNewer} {
		v, err := f.Get(context.Background())
		require.NoError(t, err)
		assert.Equal(t, 7, v)
	}
}

// A caller that blocks on the Future, or ends it, and cannot take the work
// over starts it at once, whatever the starter's grace.
func TestWaitersThatCannotTakeOverStartTheWorkAtOnce(t *testing.T) {
	cases := []struct {
		name string
		wait func(*Future[int]) error
	}{
		{"Done", func(f *Future[int]) error {
			select {
			case <-f.Done():
				return nil
			case <-time.After(10 * time.Second):
				return errors.New("never done")
			}
		}},
		{"Get with a context that can end", func(f *Future[int]) error {
			_, err := f.Get(canceledLater(t))
			return err
		}},
		{"Cancel", func(f *Future[int]) error {
			f.Cancel()
			return nil
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			holdStarts(t)
			s := newStartedSingle()
			f := FromSingle[int](s).ToFuture(context.Background())
			require.NoError(t, c.wait(f))
			err := s.awaitStart(t)
			if c.name == "Cancel" {
				assert.ErrorIs(t, err, context.Canceled)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}

// A subscriber of ReplayNow that does not take the work over has the
// result once the starter starts it.
func TestReplayNowSubscriberHasTheResultTheStarterMakes(t *testing.T) {
	holdStarts(t)
	s := newStartedSingle()
	hot := FromSingle[int](s).SubscribeOn(NewGoroutine).ReplayNow(context.Background())
	rec := newRecorder[int]()
	hot.Subscribe(context.Background(), rec)
	startgrace.Set(startgrace.Default)
	s.awaitStart(t)
	rec.wait(t)
	rec.check(t, []int{7}, nil, true)
}
