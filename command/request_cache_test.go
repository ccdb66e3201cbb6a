package command

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func itoa(id int) string { return strconv.Itoa(id) }

// completionsOf returns a channel that receives a copy of every
// Completion of r. It must be called before r runs anything.
func completionsOf(r *Registry) <-chan metricsstream.Completion {
	ch := make(chan metricsstream.Completion, 64)
	r.onCompletion = func(c *metricsstream.Completion) { ch <- *c }
	return ch
}

// cacheHits returns a channel that receives the key each time the hooks
// hear that the request cache serves an execution of key.
func cacheHits(r *Registry, key string) <-chan struct{} {
	ch := make(chan struct{}, 64)
	r.AddKeyHook(key, onCacheHit(func() { ch <- struct{}{} }))
	return ch
}

type onCacheHit func()

func (f onCacheHit) CacheHit(string)                { f() }
func (onCacheHit) Start(string)                     {}
func (onCacheHit) ExecutionStart(string)            {}
func (onCacheHit) ExecutionSuccess(string)          {}
func (onCacheHit) ExecutionError(string, error)     {}
func (onCacheHit) FallbackStart(string)             {}
func (onCacheHit) FallbackSuccess(string)           {}
func (onCacheHit) FallbackError(string, error)      {}
func (onCacheHit) Success(string)                   {}
func (onCacheHit) Error(string, FailureType, error) {}
func (onCacheHit) Unsubscribe(string)               {}

// queueNow subscribes to o on the calling goroutine and returns a Future of
// its result, so that the order of subscriptions is the order of calls.
func queueNow[T any](ctx context.Context, o observable.Observable[T]) *observable.Future[T] {
	return o.ToFutureOn(ctx, observable.Immediate)
}

// Hystrix's testRequestCache1: the second execution with the same cache
// key does not run; it is served from the cache and records
// [SUCCESS, RESPONSE_FROM_CACHE]; the metrics count the response once.
func TestRequestCache1(t *testing.T) {
	for _, isolation := range isolations {
		t.Run(isolation.String(), func(t *testing.T) {
			r, mc := newManualRegistry(t)
			var runs atomic.Int32
			c := New("RequestCache1", func(ctx context.Context, id int) (string, error) {
				runs.Add(1)
				return "user" + itoa(id), nil
			}, WithRegistry(r), WithConfig(Config{Isolation: isolation})).WithCacheKey(itoa)
			ctx := WithRequestContext(context.Background())

			v, err := c.Execute(ctx, 1)
			require.NoError(t, err)
			assert.Equal(t, "user1", v)
			v, err = c.Queue(ctx, 1).Get(ctx)
			require.NoError(t, err)
			assert.Equal(t, "user1", v)

			assert.Equal(t, int32(1), runs.Load())
			assert.Equal(t, []string{"RequestCache1[SUCCESS]", "RequestCache1[SUCCESS, RESPONSE_FROM_CACHE]"}, displays(RequestLogFrom(ctx)))
			assert.Equal(t, time.Duration(-1), RequestLogFrom(ctx).Executions()[1].ExecutionLatency, "a cache hit did not execute")

			mc.Advance(time.Second)
			m := c.Metrics()
			assert.Equal(t, int64(1), m.RollingCount(metricsstream.Success), "the response counts once")
			assert.Equal(t, int64(1), m.RollingCount(metricsstream.ResponseFromCache))
			assert.Equal(t, int64(1), m.HealthCounts().Total, "a cache hit is not counted in health")
		})
	}
}

// Hystrix's testRequestCache3: different cache keys execute; the same one
// is served from the cache.
func TestRequestCache3(t *testing.T) {
	r, _ := newManualRegistry(t)
	var runs atomic.Int32
	c := New("RequestCache3", func(ctx context.Context, id string) (string, error) {
		runs.Add(1)
		return id, nil
	}, WithRegistry(r), WithConfig(Config{Isolation: SemaphoreIsolation})).WithCacheKey(func(id string) string { return id })
	ctx := WithRequestContext(context.Background())

	for _, id := range []string{"A", "B", "A"} {
		v, err := c.Execute(ctx, id)
		require.NoError(t, err)
		assert.Equal(t, id, v)
	}
	assert.Equal(t, int32(2), runs.Load())
	assert.Equal(t, []string{"RequestCache3[SUCCESS]", "RequestCache3[SUCCESS]", "RequestCache3[SUCCESS, RESPONSE_FROM_CACHE]"},
		displays(RequestLogFrom(ctx)))
}

// Hystrix's testNoRequestCache*: with the request cache off, every
// execution runs, with or without a request context.
func TestNoRequestCache(t *testing.T) {
	r, _ := newManualRegistry(t)
	var runs atomic.Int32
	c := New("NoRequestCache", func(ctx context.Context, id int) (int, error) {
		runs.Add(1)
		return id, nil
	}, WithRegistry(r), WithConfig(Config{Isolation: SemaphoreIsolation, RequestCacheDisabled: true})).WithCacheKey(itoa)
	ctx := WithRequestContext(context.Background())
	for range 3 {
		_, err := c.Execute(ctx, 1)
		require.NoError(t, err)
	}
	_, err := c.ToObservable(ctx, 1).Last(ctx)
	require.NoError(t, err)
	_, err = c.Execute(context.Background(), 1)
	require.NoError(t, err, "no request context is needed when the cache is off")
	assert.Equal(t, int32(5), runs.Load())
	assert.Equal(t, "NoRequestCache[SUCCESS][0ms]x4", RequestLogFrom(ctx).String())

	// Turned on live, the cache serves the next ones.
	require.NoError(t, r.Configure("NoRequestCache", Config{Isolation: SemaphoreIsolation}))
	_, err = c.Execute(ctx, 1)
	require.NoError(t, err)
	_, err = c.Execute(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, int32(6), runs.Load())
}

// Hystrix's testRequestCacheOnThreadRejectionThrowsException: a rejection
// is cached like any response.
func TestRequestCacheOnThreadRejectionThrowsException(t *testing.T) {
	r, _ := newManualRegistry(t)
	require.NoError(t, r.ConfigurePool("RejectionPool", PoolConfig{CoreSize: 1}))
	started, release := make(chan struct{}), make(chan struct{})
	hog := New("Hog", func(ctx context.Context, _ int) (int, error) {
		close(started)
		<-release
		return 0, nil
	}, WithRegistry(r), WithConfig(Config{Pool: "RejectionPool", Timeout: -1}))
	hogDone := make(chan struct{})
	go func() {
		defer close(hogDone)
		_, _ = hog.Execute(context.Background(), 0)
	}()
	<-started
	defer func() {
		close(release)
		<-hogDone
	}()

	c := New("RequestCacheThreadRejection", func(ctx context.Context, _ int) (int, error) {
		t.Error("run of a rejected command was called")
		return 0, nil
	}, WithRegistry(r), WithConfig(Config{Pool: "RejectionPool"})).WithCacheKey(itoa)
	ctx := WithRequestContext(context.Background())

	_, first := c.Execute(ctx, 1)
	require.ErrorIs(t, first, ErrPoolRejected)
	_, err := c.Execute(ctx, 1)
	assert.Same(t, first, err, "Execute from the cache")
	_, err = c.Queue(ctx, 1).Get(ctx)
	assert.Same(t, first, err, "Queue from the cache")
	_, err = c.ToObservable(ctx, 1).Last(ctx)
	assert.Same(t, first, err, "ToObservable from the cache")

	hit := "RequestCacheThreadRejection[THREAD_POOL_REJECTED, FALLBACK_MISSING, RESPONSE_FROM_CACHE]"
	assert.Equal(t, []string{"RequestCacheThreadRejection[THREAD_POOL_REJECTED, FALLBACK_MISSING]", hit, hit, hit},
		displays(RequestLogFrom(ctx)))
}

// Hystrix's testRequestCacheOnTimeoutThrowsException: a timeout is cached
// like any response.
func TestRequestCacheOnTimeoutThrowsException(t *testing.T) {
	for _, isolation := range isolations {
		t.Run(isolation.String(), func(t *testing.T) {
			r, mc := newManualRegistry(t)
			started := make(chan struct{}, 2)
			c := New("RequestCacheTimeout", func(ctx context.Context, _ int) (int, error) {
				started <- struct{}{}
				<-ctx.Done()
				return 0, ctx.Err()
			}, WithRegistry(r), WithConfig(Config{Isolation: isolation, Timeout: 50 * time.Millisecond})).WithCacheKey(itoa)
			ctx := WithRequestContext(context.Background())

			errc := make(chan error, 1)
			go func() {
				_, err := c.Execute(ctx, 1)
				errc <- err
			}()
			<-started // run waits on its context, whose timer is armed
			mc.Advance(50 * time.Millisecond)
			first := <-errc
			require.ErrorIs(t, first, ErrTimeout)

			_, err := c.Execute(ctx, 1)
			assert.Same(t, first, err)
			assert.Empty(t, started, "run ran once")
			assert.Equal(t, []string{"RequestCacheTimeout[TIMEOUT, FALLBACK_MISSING]", "RequestCacheTimeout[TIMEOUT, FALLBACK_MISSING, RESPONSE_FROM_CACHE]"},
				displays(RequestLogFrom(ctx)))
			assert.Equal(t, "RequestCacheTimeout[TIMEOUT, FALLBACK_MISSING][50ms], RequestCacheTimeout[TIMEOUT, FALLBACK_MISSING, RESPONSE_FROM_CACHE][0ms]",
				RequestLogFrom(ctx).String())
		})
	}
}

// Hystrix's testBasicExecutionWorksWithoutRequestVariable: a command
// without a cache key needs no request context, even once request
// contexts exist.
func TestBasicExecutionWorksWithoutRequestVariable(t *testing.T) {
	_ = WithRequestContext(context.Background()) // request contexts exist
	r, _ := newManualRegistry(t)
	c := New("NoRequestVariable", func(ctx context.Context, id int) (int, error) { return id, nil }, WithRegistry(r))
	v, err := c.Execute(context.Background(), 7)
	require.NoError(t, err)
	assert.Equal(t, 7, v)
	v, err = c.ToObservable(context.Background(), 8).Last(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 8, v)
}

// Hystrix's testCacheKeyExecutionRequiresRequestVariable: a cache key
// without a request context is an error, and nothing runs or is recorded.
func TestCacheKeyExecutionRequiresRequestVariable(t *testing.T) {
	r, mc := newManualRegistry(t)
	completions := completionsOf(r)
	c := New("CacheKeyNeedsRequest", func(ctx context.Context, id int) (int, error) {
		t.Error("run was called")
		return id, nil
	}, WithRegistry(r)).WithCacheKey(itoa)
	o := NewObservable("CacheKeyNeedsRequestObservable", func(ctx context.Context, id int) observable.Observable[int] {
		t.Error("construct was called")
		return observable.Just(id)
	}, WithRegistry(r)).WithCacheKey(itoa)
	ctx := context.Background()

	_, err := c.Execute(ctx, 1)
	require.ErrorIs(t, err, ErrNoRequestContext)
	assert.Equal(t, "CacheKeyNeedsRequest: request caching is not available: maybe the context needs WithRequestContext", err.Error())
	_, err = c.Queue(ctx, 1).Get(ctx)
	assert.ErrorIs(t, err, ErrNoRequestContext)
	_, err = c.ToObservable(ctx, 1).Last(ctx)
	assert.ErrorIs(t, err, ErrNoRequestContext)
	_, err = o.Execute(ctx, 1)
	assert.ErrorIs(t, err, ErrNoRequestContext)

	mc.Advance(time.Second)
	assert.Zero(t, c.Metrics().CumulativeCounts())
	assert.Empty(t, completions)
}

// Hystrix's testBadRequestExceptionViaQueueInThreadOnResponseFromCache: a
// bad request is cached and served as [BAD_REQUEST, RESPONSE_FROM_CACHE].
func TestBadRequestExceptionViaQueueInThreadOnResponseFromCache(t *testing.T) {
	r, _ := newManualRegistry(t)
	var runs atomic.Int32
	c := New("BadRequestCached", func(ctx context.Context, id int) (int, error) {
		runs.Add(1)
		return 0, BadRequest(errors.New("invalid"))
	}, WithRegistry(r)).WithCacheKey(itoa)
	ctx := WithRequestContext(context.Background())
	_, first := c.Execute(ctx, -1)
	require.True(t, IsBadRequest(first))
	_, err := c.Queue(ctx, -1).Get(ctx)
	assert.Same(t, first, err)
	assert.Equal(t, int32(1), runs.Load())
	assert.Equal(t, []string{"BadRequestCached[BAD_REQUEST]", "BadRequestCached[BAD_REQUEST, RESPONSE_FROM_CACHE]"}, displays(RequestLogFrom(ctx)))
}

// asyncCacheable returns a pool-isolated command with a cache key whose
// run signals started and waits for release (or its context's end).
func asyncCacheable(t *testing.T, r *Registry, key string) (c *Command[int, bool], runs *atomic.Int32, started chan struct{}, release chan struct{}, cancelled chan struct{}) {
	runs = new(atomic.Int32)
	started, release, cancelled = make(chan struct{}, 4), make(chan struct{}), make(chan struct{}, 4)
	c = New(key, func(ctx context.Context, _ int) (bool, error) {
		runs.Add(1)
		started <- struct{}{}
		select {
		case <-release:
			return true, nil
		case <-ctx.Done():
			cancelled <- struct{}{}
			return false, ctx.Err()
		}
	}, WithRegistry(r), WithConfig(Config{Timeout: -1})).WithCacheKey(itoa)
	return c, runs, started, release, cancelled
}

// Hystrix's testRequestThenCacheHitAndOriginalUnsubscribed: the shared
// execution goes on for the cache hit when the first caller leaves.
// Unlike Hystrix, which records CANCELLED on the first command object
// while its execution goes on, the execution is recorded once, with what
// happened to it.
func TestRequestThenCacheHitAndOriginalUnsubscribed(t *testing.T) {
	r, _ := newManualRegistry(t)
	completions := completionsOf(r)
	c, runs, started, release, _ := asyncCacheable(t, r, "OriginalUnsubscribed")
	ctx := WithRequestContext(context.Background())
	originalCtx, cancelOriginal := context.WithCancel(ctx)

	original := queueNow(originalCtx, c.ToObservable(originalCtx, 1))
	<-started
	fromCache := queueNow(ctx, c.ToObservable(ctx, 1))
	cancelOriginal()
	_, err := original.Get(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	close(release)

	v, err := fromCache.Get(ctx)
	require.NoError(t, err)
	assert.True(t, v)
	<-completions
	<-completions
	assert.Equal(t, int32(1), runs.Load())
	assert.Equal(t, []string{"OriginalUnsubscribed[SUCCESS]", "OriginalUnsubscribed[SUCCESS, RESPONSE_FROM_CACHE]"}, displays(RequestLogFrom(ctx)))
}

// Hystrix's testRequestThenCacheHitAndCacheHitUnsubscribed: a cache hit
// that leaves records [RESPONSE_FROM_CACHE, CANCELLED]; the first caller
// gets its value.
func TestRequestThenCacheHitAndCacheHitUnsubscribed(t *testing.T) {
	r, _ := newManualRegistry(t)
	completions := completionsOf(r)
	hits := cacheHits(r, "HitUnsubscribed")
	c, _, started, release, _ := asyncCacheable(t, r, "HitUnsubscribed")
	ctx := WithRequestContext(context.Background())

	original := queueNow(ctx, c.ToObservable(ctx, 1))
	<-started
	hitCtx, cancelHit := context.WithCancel(ctx)
	hitErr := make(chan error, 1)
	go func() {
		_, err := c.Execute(hitCtx, 1)
		hitErr <- err
	}()
	<-hits
	cancelHit()
	assert.ErrorIs(t, <-hitErr, context.Canceled)
	close(release)
	v, err := original.Get(ctx)
	require.NoError(t, err)
	assert.True(t, v)
	<-completions
	<-completions
	assert.ElementsMatch(t, []string{"HitUnsubscribed[SUCCESS]", "HitUnsubscribed[RESPONSE_FROM_CACHE, CANCELLED]"}, displays(RequestLogFrom(ctx)))
}

// Hystrix's testRequestThenTwoCacheHitsOriginalAndOneCacheHitUnsubscribed:
// the execution goes on while one caller waits.
func TestRequestThenTwoCacheHitsOriginalAndOneCacheHitUnsubscribed(t *testing.T) {
	r, _ := newManualRegistry(t)
	completions := completionsOf(r)
	c, runs, started, release, _ := asyncCacheable(t, r, "OneLeft")
	ctx := WithRequestContext(context.Background())
	originalCtx, cancelOriginal := context.WithCancel(ctx)
	hit1Ctx, cancelHit1 := context.WithCancel(ctx)

	original := queueNow(originalCtx, c.ToObservable(originalCtx, 1))
	<-started
	hit1 := queueNow(hit1Ctx, c.ToObservable(hit1Ctx, 1))
	hit2 := queueNow(ctx, c.ToObservable(ctx, 1))
	cancelOriginal()
	cancelHit1()
	_, err := original.Get(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	_, err = hit1.Get(ctx)
	assert.ErrorIs(t, err, context.Canceled)
	<-completions // hit1 left
	close(release)

	v, err := hit2.Get(ctx)
	require.NoError(t, err)
	assert.True(t, v)
	<-completions
	<-completions
	assert.Equal(t, int32(1), runs.Load())
	assert.ElementsMatch(t, []string{"OneLeft[RESPONSE_FROM_CACHE, CANCELLED]", "OneLeft[SUCCESS]", "OneLeft[SUCCESS, RESPONSE_FROM_CACHE]"},
		displays(RequestLogFrom(ctx)))
}

// Hystrix's testRequestThenTwoCacheHitsAllUnsubscribed: when every caller
// has left, the shared execution is cancelled, and it leaves the cache:
// the next caller runs the command again (Hystrix would keep the
// never-ending entry).
func TestRequestThenTwoCacheHitsAllUnsubscribed(t *testing.T) {
	r, _ := newManualRegistry(t)
	completions := completionsOf(r)
	c, runs, started, release, cancelled := asyncCacheable(t, r, "AllLeft")
	ctx := WithRequestContext(context.Background())

	var cancels []context.CancelFunc
	var futures []*observable.Future[bool]
	for range 3 {
		cctx, cancel := context.WithCancel(ctx)
		cancels = append(cancels, cancel)
		futures = append(futures, queueNow(cctx, c.ToObservable(cctx, 1)))
		if len(futures) == 1 {
			<-started
		}
	}
	for i, cancel := range cancels {
		cancel()
		_, err := futures[i].Get(ctx)
		assert.ErrorIs(t, err, context.Canceled)
	}
	<-cancelled // run's context was cancelled
	for range 3 {
		<-completions
	}
	assert.ElementsMatch(t, []string{"AllLeft[CANCELLED]", "AllLeft[RESPONSE_FROM_CACHE, CANCELLED]", "AllLeft[RESPONSE_FROM_CACHE, CANCELLED]"},
		displays(RequestLogFrom(ctx)))

	close(release)
	v, err := c.Execute(ctx, 1)
	require.NoError(t, err)
	assert.True(t, v)
	assert.Equal(t, int32(2), runs.Load(), "the abandoned execution left the cache")
}

// Concurrent identical requests share one execution, and the first caller
// leaving does not cancel it while others wait.
func TestRequestCacheConcurrentCallersShareOneExecution(t *testing.T) {
	for _, isolation := range isolations {
		t.Run(isolation.String(), func(t *testing.T) {
			r, _ := newManualRegistry(t)
			key := "Shared" + isolation.String()
			hits := cacheHits(r, key)
			var runs atomic.Int32
			started, release := make(chan struct{}), make(chan struct{})
			c := New(key, func(ctx context.Context, id int) (int, error) {
				runs.Add(1)
				close(started)
				select {
				case <-release:
					return id * 10, nil
				case <-ctx.Done():
					return 0, ctx.Err()
				}
			}, WithRegistry(r), WithConfig(Config{Isolation: isolation, Timeout: -1})).WithCacheKey(itoa)
			ctx := WithRequestContext(context.Background())
			firstCtx, cancelFirst := context.WithCancel(ctx)

			const callers = 8
			var wg sync.WaitGroup
			results := make(chan int, callers)
			firstErr := make(chan error, 1)
			wg.Go(func() {
				_, err := c.Execute(firstCtx, 4)
				firstErr <- err
			})
			<-started
			for range callers {
				wg.Go(func() {
					v, err := c.Execute(ctx, 4)
					assert.NoError(t, err)
					results <- v
				})
			}
			for range callers {
				<-hits
			}
			cancelFirst()
			if isolation == PoolIsolation {
				assert.ErrorIs(t, <-firstErr, context.Canceled, "a pool-isolated caller leaves at once")
			}
			close(release)
			wg.Wait()
			close(results)
			for v := range results {
				assert.Equal(t, 40, v)
			}
			assert.Equal(t, int32(1), runs.Load())
		})
	}
}

// InvalidateCache removes one entry: the next execution runs again.
func TestInvalidateCache(t *testing.T) {
	r, _ := newManualRegistry(t)
	var runs atomic.Int32
	c := New("Invalidate", func(ctx context.Context, id int) (int32, error) {
		return runs.Add(1), nil
	}, WithRegistry(r), WithConfig(Config{Isolation: SemaphoreIsolation})).WithCacheKey(itoa)
	ctx := WithRequestContext(context.Background())

	v, _ := c.Execute(ctx, 1)
	assert.Equal(t, int32(1), v)
	v, _ = c.Execute(ctx, 1)
	assert.Equal(t, int32(1), v, "served from the cache")
	assert.True(t, InvalidateCache(ctx, "Invalidate", "1"))
	assert.False(t, InvalidateCache(ctx, "Invalidate", "1"), "gone already")
	assert.False(t, InvalidateCache(ctx, "Invalidate", "2"))
	assert.False(t, InvalidateCache(context.Background(), "Invalidate", "1"), "no request context")
	v, _ = c.Execute(ctx, 1)
	assert.Equal(t, int32(2), v, "executed again")
	v, _ = c.Execute(ctx, 1)
	assert.Equal(t, int32(2), v)

	other := WithRequestContext(context.Background())
	v, _ = c.Execute(other, 1)
	assert.Equal(t, int32(3), v, "each request context has its own cache")
}

// An ObservableCommand's values are all replayed from the cache.
func TestRequestCacheObservableCommand(t *testing.T) {
	r, _ := newManualRegistry(t)
	var runs atomic.Int32
	c := NewObservable("CachedStream", func(ctx context.Context, n int) observable.Observable[int] {
		runs.Add(1)
		vs := make([]int, n)
		for i := range vs {
			vs[i] = i
		}
		return observable.Just(vs...)
	}, WithRegistry(r)).WithCacheKey(itoa)
	ctx := WithRequestContext(context.Background())

	vs, err := c.Execute(ctx, 3)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2}, vs)
	vs, err = c.ToObservable(ctx, 3).ToSlice(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2}, vs)
	vs, err = c.Queue(ctx, 3).Get(ctx)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2}, vs)
	assert.Equal(t, int32(1), runs.Load())
	assert.Equal(t, "CachedStream[EMITx3, SUCCESS][0ms], CachedStream[EMITx3, SUCCESS, RESPONSE_FROM_CACHE][0ms]x2", RequestLogFrom(ctx).String())
}

// A stream served from the request cache is a stream, as through the
// cache() of Hystrix's cached Observable: its subscribers get each value
// as it comes, a later one the values so far at once, and a stream that
// has not ended serves its first value to First, which leaves it. Before,
// the cache handed its subscribers the values only at the stream's end.
func TestRequestCacheServesAStreamAsItComes(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			r, _ := newManualRegistry(t)
			var runs atomic.Int32
			more := make(chan struct{})
			c := NewObservable("Feed", func(ctx context.Context, _ int) observable.Observable[int] {
				runs.Add(1)
				return observable.Create(func(ctx context.Context, o observable.Observer[int]) {
					o.OnNext(1)
					select {
					case <-more:
						o.OnNext(2)
						o.OnCompleted()
					case <-ctx.Done():
						o.OnError(ctx.Err())
					}
				})
			}, WithRegistry(r), WithConfig(Config{Isolation: iso, Timeout: -1})).WithCacheKey(itoa)
			ctx := WithRequestContext(context.Background())

			// Each subscription on a goroutine of its own: under semaphore
			// isolation the first runs the stream on it.
			type subscriber struct {
				values chan int
				end    chan error
			}
			subscribe := func() subscriber {
				s := subscriber{make(chan int, 2), make(chan error, 1)}
				go c.ToObservable(ctx, 0).SubscribeFunc(ctx, func(v int) { s.values <- v },
					func(err error) { s.end <- err }, func() { s.end <- nil })
				return s
			}
			first := subscribe()
			assert.Equal(t, 1, recv(t, first.values, "the first value, the stream running"))
			second := subscribe()
			assert.Equal(t, 1, recv(t, second.values, "the first value, replayed"))
			close(more)
			for _, s := range []subscriber{first, second} {
				assert.Equal(t, 2, recv(t, s.values, "the second value"))
				assert.NoError(t, recv(t, s.end, "the completion"))
			}
			assert.Equal(t, int32(1), runs.Load())
			assert.Equal(t, "Feed[EMITx2, SUCCESS][0ms], Feed[EMITx2, SUCCESS, RESPONSE_FROM_CACHE][0ms]", RequestLogFrom(ctx).String())

			// A stream that never ends: First takes its first value, and,
			// its only subscriber gone, the stream is cancelled.
			v, err := c.ToObservable(ctx, 1).First(ctx)
			require.NoError(t, err)
			assert.Equal(t, 1, v)
			waitFor(t, "the stream cancelled", func() bool { return c.Metrics().ConcurrentExecutions() == 0 })
		})
	}
}

// A subscriber whose caller's context (the one ToObservable was given)
// ends before the shared stream does gets that context's error, as the
// subscriber of an execution of its own would, while the others go on;
// before, it got nothing and waited for ever.
func TestRequestCacheSubscriberWhoseCallerLeftGetsItsError(t *testing.T) {
	for _, owner := range []bool{true, false} {
		t.Run(fmt.Sprintf("owner=%v", owner), func(t *testing.T) {
			r, _ := newManualRegistry(t)
			c := NewObservable("Feed", func(ctx context.Context, _ int) observable.Observable[int] {
				return observable.Create(func(ctx context.Context, o observable.Observer[int]) {
					go func() {
						o.OnNext(1)
						<-ctx.Done()
						o.OnError(ctx.Err())
					}()
				})
			}, WithRegistry(r), WithConfig(Config{Timeout: -1})).WithCacheKey(itoa)
			req := WithRequestContext(context.Background())
			callers := [2]context.Context{}
			cancels := [2]context.CancelFunc{}
			results := [2]<-chan callResult[[]int]{}
			for i := range callers {
				callers[i], cancels[i] = context.WithCancel(req)
				values := make(chan int, 1)
				results[i] = goCall(func() ([]int, error) {
					return c.ToObservable(callers[i], 0).DoOnNext(func(v int) { values <- v }).ToSlice(context.Background())
				})
				assert.Equal(t, 1, recv(t, values, "the first value"))
			}
			leaving, staying := 1, 0 // the subscriber the cache served leaves
			if owner {
				leaving, staying = 0, 1
			}
			cancels[leaving]()
			res := awaitCall(t, results[leaving])
			assert.ErrorIs(t, res.err, context.Canceled)
			assert.Equal(t, []int{1}, res.v)
			select {
			case res := <-results[staying]:
				t.Fatalf("the other subscriber ended too: %v", res)
			default:
			}
			cancels[staying]()
			res = awaitCall(t, results[staying])
			assert.ErrorIs(t, res.err, context.Canceled)
			waitFor(t, "the stream cancelled", func() bool { return c.Metrics().ConcurrentExecutions() == 0 })
		})
	}
}

// Commands of one key with different value types do not share entries:
// the second runs uncached rather than being served the wrong type.
func TestRequestCacheKeyWithAnotherValueType(t *testing.T) {
	r, _ := newManualRegistry(t)
	a := New("TwoTypes", func(ctx context.Context, id int) (int, error) { return id, nil }, WithRegistry(r), WithConfig(Config{Isolation: SemaphoreIsolation})).WithCacheKey(itoa)
	b := New("TwoTypes", func(ctx context.Context, id int) (string, error) { return "s" + itoa(id), nil }, WithRegistry(r)).WithCacheKey(itoa)
	ctx := WithRequestContext(context.Background())
	v, err := a.Execute(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, 1, v)
	s, err := b.Execute(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, "s1", s)
	s, err = b.ToObservable(ctx, 1).Last(ctx)
	require.NoError(t, err)
	assert.Equal(t, "s1", s)
	assert.Equal(t, "TwoTypes[SUCCESS][0ms]x3", RequestLogFrom(ctx).String())
}

// The cache-hit hook and notifier fire as Hystrix's onCacheHit and
// RESPONSE_FROM_CACHE notification.
func TestRequestCacheHookAndNotifier(t *testing.T) {
	r, _ := newManualRegistry(t)
	hits := cacheHits(r, "Notified")
	var fromCache atomic.Int32
	r.AddKeyEventNotifier("Notified", EventNotifierFunc(func(key string, e metricsstream.EventType) {
		if e == metricsstream.ResponseFromCache {
			fromCache.Add(1)
		}
	}))
	c := New("Notified", func(ctx context.Context, id int) (int, error) { return id, nil }, WithRegistry(r), WithConfig(Config{Isolation: SemaphoreIsolation})).WithCacheKey(itoa)
	ctx := WithRequestContext(context.Background())
	_, _ = c.Execute(ctx, 1)
	assert.Empty(t, hits)
	_, _ = c.Execute(ctx, 1)
	assert.Len(t, hits, 1)
	assert.Equal(t, int32(1), fromCache.Load())
}

// First of a cached Command's Observable takes its value and leaves: the
// execution has its value then, and must stay in the cache for the next
// caller, as it does for Execute.
func TestRequestCacheFirstOfToObservableKeepsTheEntry(t *testing.T) {
	for _, iso := range isolations {
		t.Run(iso.String(), func(t *testing.T) {
			r, _ := newManualRegistry(t)
			var runs atomic.Int32
			c := New("FirstCached"+iso.String(), func(ctx context.Context, id int) (int32, error) {
				return runs.Add(1), nil
			}, WithRegistry(r), WithConfig(Config{Isolation: iso, Timeout: -1})).WithCacheKey(itoa)
			ctx := WithRequestContext(context.Background())

			v, err := c.ToObservable(ctx, 1).First(ctx)
			require.NoError(t, err)
			assert.Equal(t, int32(1), v)
			v, err = c.ToObservable(ctx, 1).First(ctx)
			require.NoError(t, err)
			assert.Equal(t, int32(1), v, "served from the cache")
			v, err = c.Execute(ctx, 1)
			require.NoError(t, err)
			assert.Equal(t, int32(1), v, "served from the cache")
			assert.Equal(t, int32(1), runs.Load())
			key := "FirstCached" + iso.String()
			assert.Equal(t, []string{key + "[SUCCESS]", key + "[SUCCESS, RESPONSE_FROM_CACHE]", key + "[SUCCESS, RESPONSE_FROM_CACHE]"},
				displays(RequestLogFrom(ctx)))
		})
	}
}

// A hedged command served from the request cache: the cache hit shows the
// events of the execution whose value it serves, not those of a loser
// that ended after it.
func TestRequestCacheHitOfAHedgedCallShowsTheWinner(t *testing.T) {
	h, spy := newSpiedHarness(t)
	var calls atomic.Int32
	c := New("HedgedCached", func(ctx context.Context, id int) (string, error) {
		if calls.Add(1) == 1 {
			<-ctx.Done() // the first run hangs until cancelled
			return "", ctx.Err()
		}
		return "hedge", nil
	}, WithRegistry(h.reg), WithConfig(Config{
		Isolation: SemaphoreIsolation,
		Timeout:   -1,
		Hedge:     HedgeConfig{MaxHedges: 1, Delay: 50 * time.Millisecond},
	})).WithCacheKey(itoa)
	ctx := WithRequestContext(context.Background())

	call := goCall(func() (string, error) { return c.Execute(ctx, 1) })
	assert.Equal(t, 50*time.Millisecond, recv(t, spy.armed, "the hedge's timer"))
	waitFor(t, "the first run", func() bool { return calls.Load() == 1 })
	h.clock.Advance(50 * time.Millisecond)
	res := awaitCall(t, call)
	require.NoError(t, res.err)
	assert.Equal(t, "hedge", res.v)
	assert.ElementsMatch(t, [][]string{evs("SUCCESS", "HEDGED"), evs("CANCELLED")}, [][]string{h.events(), h.events()})

	v, err := c.Execute(ctx, 1)
	require.NoError(t, err)
	assert.Equal(t, "hedge", v)
	assert.Equal(t, evs("RESPONSE_FROM_CACHE"), h.events())
	log := displays(RequestLogFrom(ctx))
	require.Len(t, log, 3)
	assert.Equal(t, "HedgedCached[SUCCESS, RESPONSE_FROM_CACHE, HEDGED]", log[2], "the hit shows the execution it served")
}

// The first caller of a cache key, whose Execute runs the shared
// execution, gets its own context's error when that context's deadline
// passes while run runs, context.DeadlineExceeded and not the
// context.Canceled with which its leaving cancelled the shared execution,
// as Execute's documentation promises and as an uncached Execute does
// (TestCallerPastItsDeadlineGetsDeadlineExceeded).
func TestCachedOwnerPastItsDeadlineGetsDeadlineExceeded(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			started := make(chan struct{}, 1)
			c := New("CachedPastDeadline", func(ctx context.Context, id int) (string, error) {
				started <- struct{}{}
				<-ctx.Done()
				return "", ctx.Err()
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso})).WithCacheKey(itoa)
			req := WithRequestContext(context.Background())
			ctx := &expiringContext{Context: req, done: make(chan struct{})}
			call := goCall(func() (string, error) { return c.Execute(ctx, 1) })
			recv(t, started, "the run to start")
			ctx.expire()
			res := awaitCall(t, call)
			assert.ErrorIs(t, res.err, context.DeadlineExceeded)
			assert.NotErrorIs(t, res.err, context.Canceled)
		})
	}
}

// A subscription to a cached command's Observable whose caller's context
// (the one ToObservable was given) has ended runs nothing, as one to an
// uncached command's does (core.subscribe: CANCELLED with nothing taken),
// and as Execute does: under semaphore isolation the cache ran the
// shared execution on the subscribing goroutine before the caller's
// leaving, told on another goroutine, could reach it.
func TestCachedSubscriptionOfALeftCallerRunsNothing(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			r, _ := newManualRegistry(t)
			ran := make(chan struct{}, 1)
			key := "CachedLeftCaller" + iso.String()
			c := New(key, func(ctx context.Context, id int) (int, error) {
				ran <- struct{}{}
				return id, nil
			}, WithRegistry(r), WithConfig(Config{Isolation: iso, Timeout: -1})).WithCacheKey(itoa)
			req := WithRequestContext(context.Background())
			caller, cancel := context.WithCancel(req)
			cancel()

			_, err := c.ToObservable(caller, 1).Last(context.Background())
			assert.ErrorIs(t, err, context.Canceled)
			select {
			case <-ran:
				t.Error("run ran for a caller that had left")
			default:
			}
			waitFor(t, "the execution logged", func() bool { return RequestLogFrom(req).Len() == 1 })
			assert.Equal(t, []string{key + "[CANCELLED]"}, displays(RequestLogFrom(req)))
		})
	}
}

// A cached command's first caller, whose shared execution runs on its
// goroutine under semaphore isolation, gets its own context's error when
// it leaves while run runs, as a pool-isolated one does and as an
// uncached Execute does; the callers who stayed get the result.
func TestCachedOwnerWhoLeftGetsItsError(t *testing.T) {
	for _, iso := range bothIsolations {
		t.Run(iso.String(), func(t *testing.T) {
			h := newHarness(t)
			key := "CachedOwnerLeft" + iso.String()
			hits := cacheHits(h.reg, key)
			entered := make(chan struct{}, 1)
			release := make(chan struct{})
			c := New(key, func(ctx context.Context, id int) (string, error) {
				entered <- struct{}{}
				<-release
				return userName(id), nil
			}, WithRegistry(h.reg), WithConfig(Config{Isolation: iso, Timeout: -1})).WithCacheKey(itoa)
			req := WithRequestContext(context.Background())
			ownerCtx, cancel := context.WithCancel(req)
			owner := goCall(func() (string, error) { return c.Execute(ownerCtx, 1) })
			recv(t, entered, "run to start")
			hit := goCall(func() (string, error) { return c.Execute(req, 1) })
			recv(t, hits, "the cache hit")
			cancel()
			var o callResult[string]
			if iso == PoolIsolation {
				o = awaitCall(t, owner) // it leaves at once
				close(release)
			} else {
				notReturned(t, owner) // run holds its goroutine
				close(release)
				o = awaitCall(t, owner)
			}
			assert.ErrorIs(t, o.err, context.Canceled, "the owner left before the result")
			assert.Empty(t, o.v)
			r := awaitCall(t, hit)
			require.NoError(t, r.err)
			assert.Equal(t, userName(1), r.v)
		})
	}
}
