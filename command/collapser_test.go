package command

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// batches records the calls of a batch function that answers "user<id>"
// for each id.
type batches struct {
	mu    sync.Mutex
	calls [][]int
}

func (b *batches) getUsers(ctx context.Context, ids []int) ([]string, error) {
	b.mu.Lock()
	b.calls = append(b.calls, append([]int(nil), ids...))
	b.mu.Unlock()
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = "user" + itoa(id)
	}
	return out, nil
}

func (b *batches) all() [][]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([][]int(nil), b.calls...)
}

// collapsedCounts returns the COLLAPSED count of every logged execution.
func collapsedCounts(l *RequestLog) []int {
	var n []int
	for _, e := range l.Executions() {
		n = append(n, e.Events.Count(metricsstream.Collapsed))
	}
	return n
}

func get[T any](t *testing.T, f *observable.Future[T]) T {
	t.Helper()
	v, err := f.Get(context.Background())
	require.NoError(t, err)
	return v
}

// Hystrix's testTwoRequests: two requests and one window make one batch
// command that served two collapsed requests.
func TestTwoRequests(t *testing.T) {
	r, mc := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r))
	ctx := WithRequestContext(context.Background())

	f1, f2 := c.Queue(ctx, 1), c.Queue(ctx, 2)
	mc.Advance(DefaultCollapserDelay)
	assert.Equal(t, "user1", get(t, f1))
	assert.Equal(t, "user2", get(t, f2))

	assert.Equal(t, [][]int{{1, 2}}, b.all())
	assert.Equal(t, "GetUserBatch[SUCCESS, COLLAPSED][0ms]", RequestLogFrom(ctx).String())
	assert.Equal(t, []int{2}, collapsedCounts(RequestLogFrom(ctx)))

	mc.Advance(time.Second)
	m := c.Metrics()
	assert.Same(t, m, r.Metrics().Collapser("GetUser", metricsstream.Config{}))
	assert.Equal(t, int64(1), m.RollingCount(metricsstream.CollapserBatchExecuted))
	assert.Equal(t, int64(2), m.RollingCount(metricsstream.CollapserAddedToBatch))
	assert.Equal(t, int64(2), c.BatchCommand().Metrics().RollingCount(metricsstream.Collapsed))
	assert.Equal(t, int64(1), c.BatchCommand().Metrics().RollingCount(metricsstream.Success))
	assert.Equal(t, "GetUserBatch", c.BatchCommand().Key())
}

// Hystrix's testMultipleBatches: a request after a batch ran goes into the
// next one.
func TestMultipleBatches(t *testing.T) {
	r, mc := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r))
	ctx := WithRequestContext(context.Background())
	f1, f2 := c.Queue(ctx, 1), c.Queue(ctx, 2)
	mc.Advance(DefaultCollapserDelay)
	assert.Equal(t, "user1", get(t, f1))
	assert.Equal(t, "user2", get(t, f2))
	f3 := c.Queue(ctx, 3)
	mc.Advance(DefaultCollapserDelay)
	assert.Equal(t, "user3", get(t, f3))
	assert.Equal(t, [][]int{{1, 2}, {3}}, b.all())
	assert.Equal(t, []int{2, 1}, collapsedCounts(RequestLogFrom(ctx)))
}

// Hystrix's testMaxRequestsInBatch: with a cap of 2, three requests make
// two batches. A full batch starts at once.
func TestMaxRequestsInBatch(t *testing.T) {
	r, mc := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r), WithCollapserConfig(CollapserConfig{MaxRequestsInBatch: 2}))
	ctx := WithRequestContext(context.Background())
	f1, f2, f3 := c.Queue(ctx, 1), c.Queue(ctx, 2), c.Queue(ctx, 3)
	assert.Equal(t, "user1", get(t, f1), "a full batch does not wait for its window")
	assert.Equal(t, "user2", get(t, f2))
	mc.Advance(DefaultCollapserDelay)
	assert.Equal(t, "user3", get(t, f3))
	assert.Equal(t, [][]int{{1, 2}, {3}}, b.all())
	assert.Equal(t, []int{2, 1}, collapsedCounts(RequestLogFrom(ctx)))
}

// Hystrix's testRequestsOverTime: each window batches what arrived in it.
func TestRequestsOverTime(t *testing.T) {
	r, mc := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r))
	ctx := WithRequestContext(context.Background())
	var fs []*observable.Future[string]
	for i, wait := range []time.Duration{5, 8, 6, 8, 10} {
		fs = append(fs, c.Queue(ctx, i+1))
		mc.Advance(wait * time.Millisecond)
	}
	for i, f := range fs {
		assert.Equal(t, "user"+itoa(i+1), get(t, f))
	}
	assert.Equal(t, [][]int{{1, 2}, {3, 4}, {5}}, b.all())
}

// Hystrix's testDuplicateArgumentsWithRequestCachingOn: requests with the
// same argument share one place in the batch and one result, whether
// arguments are keyed by value or by WithCacheKey.
func TestDuplicateArgumentsWithRequestCachingOn(t *testing.T) {
	for name, byKey := range map[string]bool{"by value": false, "by cache key": true} {
		t.Run(name, func(t *testing.T) {
			r, mc := newManualRegistry(t)
			b := &batches{}
			c := NewCollapser("Duplicates", b.getUsers, WithRegistry(r))
			if byKey {
				c = c.WithCacheKey(itoa)
			}
			ctx := WithRequestContext(context.Background())
			var fs []*observable.Future[string]
			for range 10 {
				fs = append(fs, c.ToObservable(ctx, 5).ToFutureOn(ctx, observable.Immediate))
			}
			mc.Advance(DefaultCollapserDelay)
			for _, f := range fs {
				assert.Equal(t, "user5", get(t, f))
			}
			assert.Equal(t, [][]int{{5}}, b.all())
			assert.Equal(t, []int{1}, collapsedCounts(RequestLogFrom(ctx)))
		})
	}
}

// Hystrix's testDuplicateArgumentsWithRequestCachingOff: with the cache
// off, the first request gets the value and the duplicates an error.
func TestDuplicateArgumentsWithRequestCachingOff(t *testing.T) {
	r, mc := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("Duplicates", b.getUsers, WithRegistry(r), WithCollapserConfig(CollapserConfig{RequestCacheDisabled: true}))
	ctx := WithRequestContext(context.Background())
	var fs []*observable.Future[string]
	for range 10 {
		fs = append(fs, c.Queue(ctx, 5))
	}
	mc.Advance(DefaultCollapserDelay)
	values, errs := 0, 0
	for _, f := range fs {
		v, err := f.Get(ctx)
		if err != nil {
			errs++
			assert.ErrorIs(t, err, ErrDuplicateArgument)
			assert.Equal(t, "collapser Duplicates: duplicate argument in collapser batch: [5]: turn the collapser's request cache on or keep duplicates out of the batch", err.Error())
			continue
		}
		values++
		assert.Equal(t, "user5", v)
	}
	assert.Equal(t, 1, values)
	assert.Equal(t, 9, errs)
}

// Hystrix's testUnsubscribeOnOneDoesntKillBatch: a request cancelled
// before its batch starts leaves it; the others are served.
func TestUnsubscribeOnOneDoesntKillBatch(t *testing.T) {
	r, mc := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r))
	ctx := WithRequestContext(context.Background())
	f1, f2 := c.Queue(ctx, 1), c.Queue(ctx, 2)
	f1.Cancel()
	mc.Advance(DefaultCollapserDelay)
	_, err := f1.Get(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, "user2", get(t, f2))
	assert.Equal(t, [][]int{{2}}, b.all())
	assert.Equal(t, []int{1}, collapsedCounts(RequestLogFrom(ctx)))

	// A batch every request left does not run.
	f3 := c.Queue(ctx, 3)
	f3.Cancel()
	mc.Advance(DefaultCollapserDelay)
	assert.Len(t, b.all(), 1)
}

// Hystrix's testRequestScope: each request context has its own batches.
func TestRequestScope(t *testing.T) {
	r, mc := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r))
	ctx1, ctx2 := WithRequestContext(context.Background()), WithRequestContext(context.Background())
	f1, f2 := c.Queue(ctx1, 1), c.Queue(ctx1, 2)
	f3, f4 := c.Queue(ctx2, 3), c.Queue(ctx2, 4)
	mc.Advance(DefaultCollapserDelay)
	for i, f := range []*observable.Future[string]{f1, f2, f3, f4} {
		assert.Equal(t, "user"+itoa(i+1), get(t, f))
	}
	assert.ElementsMatch(t, [][]int{{1, 2}, {3, 4}}, b.all())
	assert.Equal(t, []int{2}, collapsedCounts(RequestLogFrom(ctx1)))
	assert.Equal(t, []int{2}, collapsedCounts(RequestLogFrom(ctx2)))

	_, err := c.Execute(context.Background(), 1)
	assert.ErrorIs(t, err, ErrNoRequestContext, "a request scope needs a request context")
}

// Hystrix's testGlobalScope: the requests of every caller share batches;
// the batch appears in the log of every request context that had a
// request in it.
func TestGlobalScope(t *testing.T) {
	r, mc := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r), WithCollapserConfig(CollapserConfig{Scope: GlobalScope}))
	ctx1, ctx2 := WithRequestContext(context.Background()), WithRequestContext(context.Background())
	f1, f2 := c.Queue(ctx1, 1), c.Queue(ctx1, 2)
	f3, f4 := c.Queue(ctx2, 3), c.Queue(context.Background(), 4)
	mc.Advance(DefaultCollapserDelay)
	for i, f := range []*observable.Future[string]{f1, f2, f3, f4} {
		assert.Equal(t, "user"+itoa(i+1), get(t, f))
	}
	assert.Equal(t, [][]int{{1, 2, 3, 4}}, b.all())
	assert.Equal(t, []int{4}, collapsedCounts(RequestLogFrom(ctx1)))
	assert.Equal(t, []int{4}, collapsedCounts(RequestLogFrom(ctx2)))
}

// In GlobalScope, a request of a second request context that shares the
// place of an equal argument of the first context's request is served by
// the batch: the batch belongs in both request logs, as in every request
// context with a request in a global batch.
func TestGlobalScopeLogsASharedPlaceInEveryRequestContext(t *testing.T) {
	r, mc := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r), WithCollapserConfig(CollapserConfig{Scope: GlobalScope}))
	ctx1, ctx2 := WithRequestContext(context.Background()), WithRequestContext(context.Background())
	f1, f2 := c.Queue(ctx1, 5), c.Queue(ctx2, 5)
	mc.Advance(DefaultCollapserDelay)
	assert.Equal(t, "user5", get(t, f1))
	assert.Equal(t, "user5", get(t, f2))
	assert.Equal(t, [][]int{{5}}, b.all())
	assert.Equal(t, []int{1}, collapsedCounts(RequestLogFrom(ctx1)))
	assert.Equal(t, []int{1}, collapsedCounts(RequestLogFrom(ctx2)), "ctx2's request was served by the batch")
}

// Hystrix's testRequestWithCommandShortCircuited: when the batch command's
// circuit is open every request fails with the short-circuit, and the
// batch function is not called.
func TestRequestWithCommandShortCircuited(t *testing.T) {
	r, mc := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r), WithConfig(Config{Breaker: breakerForcedOpen}))
	ctx := WithRequestContext(context.Background())
	o1, o2 := c.Observe(ctx, 1), c.Observe(ctx, 2)
	mc.Advance(DefaultCollapserDelay)
	for _, o := range []observable.Observable[string]{o1, o2} {
		_, err := o.First(ctx)
		assert.ErrorIs(t, err, ErrShortCircuited)
		var batchErr *BatchError
		require.ErrorAs(t, err, &batchErr)
		assert.Equal(t, 2, batchErr.Size)
		assert.Equal(t, "collapser GetUser: batch of 2 requests failed: GetUserBatch short-circuited and no fallback available", err.Error())
	}
	assert.Empty(t, b.all())
	assert.Equal(t, "GetUserBatch[SHORT_CIRCUITED, FALLBACK_MISSING, COLLAPSED][0ms]", RequestLogFrom(ctx).String())
}

// The batch command's fallback answers for the whole batch.
func TestCollapserBatchFallback(t *testing.T) {
	r, mc := newManualRegistry(t)
	c := NewCollapser("GetUser", func(ctx context.Context, ids []int) ([]string, error) {
		return nil, errors.New("down")
	}, WithRegistry(r)).WithFallback(func(ctx context.Context, ids []int, err error) ([]string, error) {
		out := make([]string, len(ids))
		for i := range out {
			out[i] = "anonymous"
		}
		return out, nil
	})
	ctx := WithRequestContext(context.Background())
	f1, f2 := c.Queue(ctx, 1), c.Queue(ctx, 2)
	mc.Advance(DefaultCollapserDelay)
	assert.Equal(t, "anonymous", get(t, f1))
	assert.Equal(t, "anonymous", get(t, f2))
	assert.Equal(t, "GetUserBatch[FAILURE, FALLBACK_SUCCESS, COLLAPSED][0ms]", RequestLogFrom(ctx).String())
}

// Hystrix's testErrorHandlingWhenMapToResponseFails: a batch that returns
// the wrong number of results fails every request, saying so; the batch
// command itself ran once.
func TestErrorHandlingWhenMapToResponseFails(t *testing.T) {
	r, mc := newManualRegistry(t)
	c := NewCollapser("GetUser", func(ctx context.Context, ids []int) ([]string, error) {
		return []string{"only one"}, nil
	}, WithRegistry(r))
	ctx := WithRequestContext(context.Background())
	f1, f2 := c.Queue(ctx, 1), c.Queue(ctx, 2)
	mc.Advance(DefaultCollapserDelay)
	for _, f := range []*observable.Future[string]{f1, f2} {
		_, err := f.Get(ctx)
		assert.ErrorIs(t, err, ErrBatchResultCount)
		assert.Equal(t, "collapser GetUser: batch of 2 requests failed: batch returned a wrong number of results: 1 results for 2 requests", err.Error())
	}
	assert.Equal(t, "GetUserBatch[SUCCESS, COLLAPSED][0ms]", RequestLogFrom(ctx).String())
}

// An error of the batch fails every request with it.
func TestCollapserBatchError(t *testing.T) {
	r, mc := newManualRegistry(t)
	boom := errors.New("boom")
	c := NewCollapser("GetUser", func(ctx context.Context, ids []int) ([]string, error) { return nil, boom }, WithRegistry(r))
	ctx := WithRequestContext(context.Background())
	f1, f2 := c.Queue(ctx, 1), c.Queue(ctx, 2)
	mc.Advance(DefaultCollapserDelay)
	for _, f := range []*observable.Future[string]{f1, f2} {
		_, err := f.Get(ctx)
		assert.ErrorIs(t, err, boom)
		var cmdErr *Error
		require.ErrorAs(t, err, &cmdErr)
		assert.Equal(t, CommandFailure, cmdErr.Failure)
	}
}

// When the request context ends, the requests waiting in its batch fail
// with ErrRequestContextDone, the window's timer is stopped, and later
// requests fail at once.
func TestCollapserRequestScopeEnds(t *testing.T) {
	r, mc := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r))
	parent, end := context.WithCancel(context.Background())
	ctx := WithRequestContext(parent)
	before := mc.Pending()
	f1 := c.Queue(ctx, 1)
	f2 := c.Queue(context.WithoutCancel(ctx), 2) // a caller that would wait for ever
	require.Equal(t, before+1, mc.Pending(), "the window's timer")
	end()
	_, err := f1.Get(context.Background())
	assert.True(t, errors.Is(err, context.Canceled) || errors.Is(err, ErrRequestContextDone),
		"the caller's own context ended too, whichever is seen first: %v", err)
	_, err = f2.Get(context.Background())
	assert.ErrorIs(t, err, ErrRequestContextDone)
	assert.Equal(t, "collapser GetUser: request context ended before the request was executed", err.Error())
	assert.Equal(t, before, mc.Pending(), "the window's timer is stopped")

	_, err = c.Execute(context.WithoutCancel(ctx), 3)
	assert.ErrorIs(t, err, ErrRequestContextDone)
	mc.Advance(DefaultCollapserDelay)
	assert.Empty(t, b.all())
}

// A window that closes after the request context has ended, before the
// watcher of the scope has failed its batch (both are told on goroutines
// of their own), fails the batch as the watcher would: the batch does not
// run and is not counted.
func TestCollapserWindowClosingAfterTheScopeEndedRunsNoBatch(t *testing.T) {
	r, mc := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r))
	parent, end := context.WithCancel(context.Background())
	ctx := WithRequestContext(parent)
	f := c.Queue(context.WithoutCancel(ctx), 1) // a caller that stays
	bt := c.batcherOf(requestContextOf(ctx)).pending
	require.NotNil(t, bt)
	require.True(t, bt.unwatch(), "the watcher of the scope is not told: it has not run yet")
	end()
	mc.Advance(DefaultCollapserDelay)

	_, err := f.Get(context.Background())
	assert.ErrorIs(t, err, ErrRequestContextDone)
	assert.Empty(t, b.all())
	mc.Advance(time.Second)
	assert.Zero(t, c.Metrics().CumulativeCount(metricsstream.CollapserBatchExecuted))
	assert.Equal(t, metricsstream.EventTotals{}, c.BatchCommand().Metrics().CumulativeCounts())
}

// A full batch starts in submit and runs on a goroutine of its own; the
// request scope can end in between. Such a batch fails as a batch whose
// window closes after the scope ended does: it does not run, and is not
// counted as a batch (TestCollapserWindowClosingAfterTheScopeEndedRunsNoBatch).
// The order is played on the batcher directly, as no public call can
// hold the batch's goroutine back.
func TestCollapserFullBatchAfterTheScopeEndedIsNotCounted(t *testing.T) {
	r, mc := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r))
	parent, end := context.WithCancel(context.Background())
	ctx := WithRequestContext(parent)
	f := c.Queue(context.WithoutCancel(ctx), 1)
	bat := c.batcherOf(requestContextOf(ctx))
	bat.mu.Lock()
	bt := bat.pending
	bat.startLocked(bt) // as submit starts a batch that is full
	bat.mu.Unlock()
	end()
	bat.execute(bt) // the batch's goroutine runs only now

	_, err := f.Get(context.Background())
	assert.ErrorIs(t, err, ErrRequestContextDone)
	assert.Empty(t, b.all())
	mc.Advance(time.Second)
	assert.Zero(t, c.Metrics().CumulativeCount(metricsstream.CollapserBatchExecuted), "BATCH_EXECUTED")
	assert.Zero(t, c.Metrics().CumulativeCount(metricsstream.CollapserAddedToBatch), "ADDED_TO_BATCH")
}

// A caller that leaves a started batch does not stop it while others
// wait; when every caller has left, the batch command's context is
// cancelled.
func TestCollapserCallersLeaveStartedBatch(t *testing.T) {
	r, mc := newManualRegistry(t)
	newCollapser := func(key string) (c *Collapser[int, string], started, release, cancelled chan struct{}) {
		started, release, cancelled = make(chan struct{}, 1), make(chan struct{}), make(chan struct{}, 1)
		c = NewCollapser(key, func(ctx context.Context, ids []int) ([]string, error) {
			started <- struct{}{}
			select {
			case <-release:
				return make([]string, len(ids)), nil
			case <-ctx.Done():
				cancelled <- struct{}{}
				return nil, ctx.Err()
			}
		}, WithRegistry(r), WithConfig(Config{Timeout: -1}), WithCollapserConfig(CollapserConfig{Scope: GlobalScope}))
		return c, started, release, cancelled
	}

	t.Run("one caller left", func(t *testing.T) {
		c, started, release, _ := newCollapser("OneLeft")
		ctx1, cancel1 := context.WithCancel(context.Background())
		f1, f2 := c.Queue(ctx1, 1), c.Queue(context.Background(), 2)
		advanced := make(chan struct{})
		go func() {
			defer close(advanced)
			mc.Advance(DefaultCollapserDelay)
		}()
		<-started
		cancel1()
		_, err := f1.Get(context.Background())
		assert.ErrorIs(t, err, context.Canceled)
		close(release)
		v, err := f2.Get(context.Background())
		require.NoError(t, err)
		assert.Equal(t, "", v)
		<-advanced
	})

	t.Run("every caller left", func(t *testing.T) {
		c, started, _, cancelled := newCollapser("AllLeft")
		ctx3, cancel3 := context.WithCancel(context.Background())
		ctx4, cancel4 := context.WithCancel(context.Background())
		f3, f4 := c.Queue(ctx3, 3), c.Queue(ctx4, 4)
		advanced := make(chan struct{})
		go func() {
			defer close(advanced)
			mc.Advance(DefaultCollapserDelay)
		}()
		<-started
		cancel3()
		cancel4()
		<-cancelled
		_, err := f3.Get(context.Background())
		assert.ErrorIs(t, err, context.Canceled)
		_, err = f4.Get(context.Background())
		assert.ErrorIs(t, err, context.Canceled)
		<-advanced
	})
}

// Hystrix's testRequestCache1 of the collapser: within a request context,
// a request whose cache key was asked for before is served from the
// request cache, in the same batch or after it ran.
func TestCollapserRequestCache1(t *testing.T) {
	r, mc := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r)).WithCacheKey(itoa)
	ctx := WithRequestContext(context.Background())
	f1, f2 := c.Queue(ctx, 1), c.Queue(ctx, 1)
	mc.Advance(DefaultCollapserDelay)
	assert.Equal(t, "user1", get(t, f1))
	assert.Equal(t, "user1", get(t, f2))
	f3 := c.Queue(ctx, 1)
	mc.Advance(DefaultCollapserDelay)
	assert.Equal(t, "user1", get(t, f3))
	v, err := c.Execute(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, "user1", v)

	assert.Equal(t, [][]int{{1}}, b.all())
	assert.Equal(t, []int{1}, collapsedCounts(RequestLogFrom(ctx)))
	mc.Advance(time.Second)
	assert.Equal(t, int64(3), c.Metrics().RollingCount(metricsstream.CollapserResponseFromCache))
	assert.Equal(t, int64(1), c.Metrics().RollingCount(metricsstream.CollapserAddedToBatch))

	other := WithRequestContext(context.Background())
	f4 := c.Queue(other, 1)
	mc.Advance(DefaultCollapserDelay)
	assert.Equal(t, "user1", get(t, f4))
	assert.Len(t, b.all(), 2, "another request context has its own cache")
}

// Execute, Queue, Observe and ToObservable all go through the batches.
func TestCollapserExecutionStyles(t *testing.T) {
	r, mc := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r), WithCollapserConfig(CollapserConfig{Delay: time.Millisecond}))
	ctx := WithRequestContext(context.Background())
	before := mc.Pending()
	exec := make(chan string, 1)
	go func() {
		v, err := c.Execute(ctx, 1)
		assert.NoError(t, err)
		exec <- v
	}()
	require.NoError(t, mc.BlockUntil(ctx, before+1))
	f := c.Queue(ctx, 2)
	o := c.Observe(ctx, 3)
	cold := c.ToObservable(ctx, 4)
	sub := cold.ToFutureOn(ctx, observable.Immediate)
	mc.Advance(time.Millisecond)
	assert.Equal(t, "user1", <-exec)
	assert.Equal(t, "user2", get(t, f))
	v, err := o.First(ctx)
	require.NoError(t, err)
	assert.Equal(t, "user3", v)
	assert.Equal(t, "user4", get(t, sub))
	assert.Len(t, b.all(), 1)
	assert.ElementsMatch(t, []int{1, 2, 3, 4}, b.all()[0])

	// ToObservable is cold: each subscription is a request.
	later := cold.ToFutureOn(ctx, observable.Immediate)
	mc.Advance(time.Millisecond)
	assert.Equal(t, "user4", get(t, later))
	assert.Equal(t, []int{4}, b.all()[1])
}

// Arguments that cannot be map keys each take their own place.
func TestCollapserArgumentsWithoutKeys(t *testing.T) {
	r, mc := newManualRegistry(t)
	var calls [][][]int
	c := NewCollapser("Sums", func(ctx context.Context, in [][]int) ([]int, error) {
		calls = append(calls, in)
		out := make([]int, len(in))
		for i, xs := range in {
			for _, x := range xs {
				out[i] += x
			}
		}
		return out, nil
	}, WithRegistry(r), WithCollapserConfig(CollapserConfig{Scope: GlobalScope, RequestCacheDisabled: true}))
	f1, f2 := c.Queue(context.Background(), []int{1, 2}), c.Queue(context.Background(), []int{1, 2})
	mc.Advance(DefaultCollapserDelay)
	assert.Equal(t, 3, get(t, f1))
	assert.Equal(t, 3, get(t, f2))
	require.Len(t, calls, 1)
	assert.Len(t, calls[0], 2)

	// An interface argument holding a value that cannot be a key.
	a := NewCollapser("Anys", func(ctx context.Context, in []any) ([]int, error) { return make([]int, len(in)), nil },
		WithRegistry(r), WithCollapserConfig(CollapserConfig{Scope: GlobalScope}))
	g1, g2 := a.Queue(context.Background(), []int{1}), a.Queue(context.Background(), 7)
	mc.Advance(DefaultCollapserDelay)
	get(t, g1)
	get(t, g2)

	// A struct with an interface field holding such a value.
	type holder struct{ X any }
	h := NewCollapser("Holders", func(ctx context.Context, in []holder) ([]int, error) { return make([]int, len(in)), nil },
		WithRegistry(r), WithCollapserConfig(CollapserConfig{Scope: GlobalScope}))
	h1, h2 := h.Queue(context.Background(), holder{[]int{1}}), h.Queue(context.Background(), holder{1})
	h3 := h.Queue(context.Background(), holder{1})
	mc.Advance(DefaultCollapserDelay)
	get(t, h1)
	get(t, h2)
	get(t, h3)
}

// The collapser reports its properties to its metrics for the dashboard.
func TestCollapserStatus(t *testing.T) {
	r, _ := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r), WithCollapserConfig(CollapserConfig{MaxRequestsInBatch: 50, Delay: 5 * time.Millisecond}))
	s := c.Metrics().Snapshot()
	assert.True(t, s.RequestCacheEnabled)
	assert.Equal(t, 50, s.MaxRequestsInBatch)
	assert.Equal(t, 5*time.Millisecond, s.TimerDelay)
	assert.Equal(t, CollapserConfig{MaxRequestsInBatch: 50, Delay: 5 * time.Millisecond, BatchCommandKey: "GetUserBatch"}, c.Config())
	assert.Equal(t, "GetUser", c.Key())

	named := NewCollapser("Named", b.getUsers, WithRegistry(r), WithCollapserConfig(CollapserConfig{BatchCommandKey: "Users"}))
	assert.Equal(t, "Users", named.BatchCommand().Key())
}

func TestNewCollapserValidation(t *testing.T) {
	b := &batches{}
	assert.PanicsWithValue(t, `command: NewCollapser("GetUser"): batch is nil`, func() {
		NewCollapser[int, string]("GetUser", nil)
	})
	assert.PanicsWithValue(t, "command: NewCollapser: key is empty", func() { NewCollapser("", b.getUsers) })
	assert.PanicsWithValue(t, "command: CollapserConfig.MaxRequestsInBatch: -1 is negative", func() {
		WithCollapserConfig(CollapserConfig{MaxRequestsInBatch: -1})
	})
	assert.ErrorIs(t, CollapserConfig{Delay: -1}.Validate(), ErrInvalidConfig)
	// A batch command's key that cannot be a key is named as the field,
	// not later by New as a key the caller never gave it.
	assert.PanicsWithValue(t, `command: CollapserConfig.BatchCommandKey: "\xff" is not valid UTF-8`, func() {
		WithCollapserConfig(CollapserConfig{BatchCommandKey: "\xff"})
	})
	assert.ErrorIs(t, CollapserConfig{BatchCommandKey: "\xff"}.Validate(), ErrInvalidConfig)
	assert.Panics(t, func() { NewCollapser("GetUser", b.getUsers).WithCacheKey(nil) })
	assert.Panics(t, func() { NewCollapser("GetUser", b.getUsers).WithFallback(nil) })
}

// A batch command's key that retries or hedges makes its attempts as any
// call of a Command does, each an execution of the whole batch that
// counts its requests.
func TestCollapserBatchRetriesAndHedgesAsItsKeySays(t *testing.T) {
	t.Run("retry", func(t *testing.T) {
		h, spy := newSpiedHarness(t)
		b := &batches{}
		var calls atomic.Int32
		c := NewCollapser("GetUser", func(ctx context.Context, ids []int) ([]string, error) {
			if calls.Add(1) == 1 {
				return nil, errBoom
			}
			return b.getUsers(ctx, ids)
		}, WithRegistry(h.reg), WithConfig(Config{
			Isolation: SemaphoreIsolation,
			Retry:     RetryConfig{MaxAttempts: 2, Backoff: exactBackoff},
		}))
		ctx := WithRequestContext(context.Background())
		f1, f2 := c.Queue(ctx, 1), c.Queue(ctx, 2)
		go h.clock.Advance(DefaultCollapserDelay) // the batch runs on the window's timer
		assert.Equal(t, 100*time.Millisecond, recv(t, spy.armed, "the backoff"))
		h.clock.Advance(100 * time.Millisecond)
		assert.Equal(t, "user1", get(t, f1))
		assert.Equal(t, "user2", get(t, f2))
		assert.Equal(t, [][]int{{1, 2}}, b.all())
		assert.Equal(t, "GetUserBatch[FAILURE, COLLAPSED][0ms], GetUserBatch[SUCCESS, COLLAPSED, RETRIED][0ms]",
			RequestLogFrom(ctx).String())
		assert.Equal(t, []int{2, 2}, collapsedCounts(RequestLogFrom(ctx)))
	})
	t.Run("hedge", func(t *testing.T) {
		h, spy := newSpiedHarness(t)
		b := &batches{}
		var calls atomic.Int32
		c := NewCollapser("GetUser", func(ctx context.Context, ids []int) ([]string, error) {
			if calls.Add(1) == 1 {
				<-ctx.Done() // the first execution hangs until the hedge wins
				return nil, ctx.Err()
			}
			return b.getUsers(ctx, ids)
		}, WithRegistry(h.reg), WithConfig(Config{
			Isolation: PoolIsolation,
			Timeout:   -1,
			Hedge:     HedgeConfig{MaxHedges: 1, Delay: 10 * time.Millisecond},
		}))
		ctx := WithRequestContext(context.Background())
		f1, f2 := c.Queue(ctx, 1), c.Queue(ctx, 2)
		go h.clock.Advance(DefaultCollapserDelay)
		assert.Equal(t, 10*time.Millisecond, recv(t, spy.armed, "the hedge's delay"))
		waitFor(t, "the first execution's run", func() bool { return calls.Load() == 1 })
		h.clock.Advance(10 * time.Millisecond)
		assert.Equal(t, "user1", get(t, f1))
		assert.Equal(t, "user2", get(t, f2))
		assert.Equal(t, [][]int{{1, 2}}, b.all())
		waitFor(t, "the loser's Completion", func() bool { return len(RequestLogFrom(ctx).Executions()) == 2 })
		assert.ElementsMatch(t, []string{"SUCCESS COLLAPSED COLLAPSED HEDGED", "CANCELLED COLLAPSED COLLAPSED"}, loggedEvents(RequestLogFrom(ctx)))
		assert.Equal(t, []int{2, 2}, collapsedCounts(RequestLogFrom(ctx)))
	})
}

// loggedEvents returns the events of every logged execution, one string
// each.
func loggedEvents(l *RequestLog) []string {
	var s []string
	for _, e := range l.Executions() {
		s = append(s, strings.Join(eventNames(e.Events), " "))
	}
	return s
}

// A request made to a RequestScope collapser after its request context
// ended fails with ErrRequestContextDone, as the error's doc says, even
// when the request cache holds a result of its cache key: the scope is
// over, and the cache does not stand in for it.
func TestCollapserRequestAfterScopeEndedIsNotServedFromCache(t *testing.T) {
	r, mc := newManualRegistry(t)
	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r)).WithCacheKey(itoa)
	parent, end := context.WithCancel(context.Background())
	ctx := WithRequestContext(parent)
	f := c.Queue(ctx, 1)
	mc.Advance(DefaultCollapserDelay)
	assert.Equal(t, "user1", get(t, f))
	end()

	_, err := c.Execute(context.WithoutCancel(ctx), 1)
	assert.ErrorIs(t, err, ErrRequestContextDone)
	_, err = c.Execute(context.WithoutCancel(ctx), 2)
	assert.ErrorIs(t, err, ErrRequestContextDone)
	mc.Advance(time.Second)
	assert.Zero(t, c.Metrics().CumulativeCount(metricsstream.CollapserResponseFromCache))
}

// WithCollapserConfig configures a collapser made by NewCollapser: New
// and NewObservable, which make no collapser, refuse it instead of
// dropping it silently (a caller who meant a collapser would otherwise
// get a plain command, its window, cap and scope gone unnoticed).
// NewCollapser still takes it.
func TestWithCollapserConfigIsRefusedByNewAndNewObservable(t *testing.T) {
	r, mc := newManualRegistry(t)
	cfg := WithCollapserConfig(CollapserConfig{MaxRequestsInBatch: 2})
	assert.PanicsWithValue(t, `command: New("GetUser"): WithCollapserConfig configures a collapser: give it to NewCollapser`, func() {
		New("GetUser", func(ctx context.Context, id int) (string, error) { return "", nil }, WithRegistry(r), cfg)
	})
	assert.PanicsWithValue(t, `command: NewObservable("GetUsers"): WithCollapserConfig configures a collapser: give it to NewCollapser`, func() {
		NewObservable("GetUsers", func(ctx context.Context, id int) observable.Observable[string] {
			return observable.Just("")
		}, WithRegistry(r), cfg)
	})

	b := &batches{}
	c := NewCollapser("GetUser", b.getUsers, WithRegistry(r), cfg)
	assert.Equal(t, 2, c.Config().MaxRequestsInBatch)
	ctx := WithRequestContext(context.Background())
	f1, f2 := c.Queue(ctx, 1), c.Queue(ctx, 2)
	assert.Equal(t, "user1", get(t, f1))
	assert.Equal(t, "user2", get(t, f2))
	mc.Advance(DefaultCollapserDelay)
	assert.Equal(t, [][]int{{1, 2}}, b.all())
}

// hookedClock is a manual clock that runs a hook, once, at the next
// reading of its time after the test arms it.
type hookedClock struct {
	*clock.Manual
	hook atomic.Pointer[func()]
}

func (c *hookedClock) Now() time.Time {
	if h := c.hook.Swap(nil); h != nil {
		(*h)()
	}
	return c.Manual.Now()
}

// A request scope that ends as its batch starts, after execute saw it
// alive: the batch is counted (BATCH_EXECUTED, ADDED_TO_BATCH) only as
// an execution of the batch command begins, which records its requests
// (COLLAPSED), so the two always pair. Here the scope ends at the first
// reading of the clock after execute's look, as the batch command's
// execution begins: it is CANCELLED, and the batch function never runs.
// The collapser counted the batch before the batch command looked, and
// counted one when the scope ending there left no execution.
func TestCollapserCountsABatchOnlyAsItsCommandExecutes(t *testing.T) {
	hc := &hookedClock{Manual: clock.NewManual(requestT0)}
	r := NewRegistry(WithClock(hc))
	t.Cleanup(r.Close)
	ran := 0
	c := NewCollapser("ScopeEndsAsBatchStarts", func(ctx context.Context, ids []int) ([]string, error) {
		ran++
		return make([]string, len(ids)), nil
	}, WithRegistry(r))
	parent, end := context.WithCancel(context.Background())
	ctx := WithRequestContext(parent)
	f := c.Queue(context.WithoutCancel(ctx), 1) // the caller stays; its scope ends
	endScope := func() { end() }
	hc.hook.Store(&endScope)
	hc.Advance(DefaultCollapserDelay)
	_, err := f.Get(context.Background())
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrRequestContextDone), "%v", err)
	assert.Zero(t, ran)

	hc.Advance(time.Minute)
	m, cm := c.Metrics(), c.BatchCommand().Metrics()
	assert.Equal(t, int64(1), cm.CumulativeCount(metricsstream.Cancelled), "the batch command's execution began, and found its scope ended")
	assert.Equal(t, cm.CumulativeCount(metricsstream.Collapsed), m.CumulativeCount(metricsstream.CollapserAddedToBatch),
		"every request counted ADDED_TO_BATCH is a COLLAPSED of a batch command execution")
	assert.Equal(t, cm.CumulativeCount(metricsstream.Cancelled), m.CumulativeCount(metricsstream.CollapserBatchExecuted),
		"the batch is counted as the batch command's one execution")
}
