package command

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// requestCacheKey identifies an entry of a request cache, as Hystrix's
// ValueCacheKey: a command key (or a collapser key) and a cache key.
type requestCacheKey struct {
	collapser     bool
	key, cacheKey string
}

// InvalidateCache removes from the request cache of ctx's request context
// the entry of the command key and cacheKey, as Hystrix's
// HystrixRequestCache.clear: the next execution of the key with that
// cache key runs again. An execution in flight goes on for the callers
// that wait for it. It reports whether there was an entry; without a
// request context there is none.
func InvalidateCache(ctx context.Context, key, cacheKey string) bool {
	rc := requestContextOf(ctx)
	if rc == nil {
		return false
	}
	_, ok := rc.cache.LoadAndDelete(requestCacheKey{key: key, cacheKey: cacheKey})
	return ok
}

// noRequestContext is the error of an execution of k that needs a request
// context and has none.
func (k *keyState) noRequestContext() error {
	return fmt.Errorf("%s: %w", k.key, ErrNoRequestContext)
}

// cachedResult is a command's entry in a request cache: one execution
// shared by the callers of a command key with the same cache key in one
// request context, as Hystrix's HystrixCachedObservable. The execution
// runs on a context of its own (with the first caller's values), so that
// it goes on while any caller waits for it; when every caller has left
// before it ended, it is cancelled and leaves the cache, so that the next
// caller runs the command again.
//
// Its values reach subscribers as they come, replayed to those who come
// later, as through the cache() of Hystrix's cached Observable: a stream
// served from the cache is a stream, not its values at its end. Execute,
// which waits for one value, waits for res.
type cachedResult[Out any] struct {
	rc     *requestContext
	id     requestCacheKey
	ctx    context.Context // of the shared execution
	cancel context.CancelFunc
	res    *pendingResult[Out]       // the last value and the error
	live   *observable.Subject[Out]  // every value, then the terminal event
	events metricsstream.EventCounts // the shared execution's; set before res resolves

	mu        sync.Mutex
	waiting   int  // callers that wait for the result
	abandoned bool // every caller left before the result: out of the cache
	// recorded says events holds an execution's; sealed that the result
	// is resolved, and events final: an attempt that ends later (a
	// hedge's loser) did not produce the value served.
	recorded, sealed bool
}

// joinCache returns the entry of id in rc with the caller counted among
// its waiters, and whether the caller made it and must start its
// execution. ok is false when the entry holds the values of another type
// (another command of the same key): the caller then runs uncached.
func joinCache[Out any](ctx context.Context, rc *requestContext, id requestCacheKey) (entry *cachedResult[Out], owner, ok bool) {
	for {
		if v, loaded := rc.cache.Load(id); loaded {
			entry, typed := v.(*cachedResult[Out])
			if !typed {
				return nil, false, false
			}
			if entry.join() {
				return entry, false, true
			}
			rc.cache.CompareAndDelete(id, v)
			continue
		}
		entry := &cachedResult[Out]{rc: rc, id: id, res: newPendingResult[Out](), live: observable.NewReplaySubject[Out](0), waiting: 1}
		entry.ctx, entry.cancel = context.WithCancel(context.WithoutCancel(ctx))
		if _, loaded := rc.cache.LoadOrStore(id, entry); loaded {
			entry.cancel()
			continue
		}
		return entry, true, true
	}
}

// join counts one more caller, unless the entry was abandoned.
func (c *cachedResult[Out]) join() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.abandoned {
		return false
	}
	c.waiting++
	return true
}

// leave is a caller going away before the result; the last one cancels
// the shared execution and takes the entry out of the cache.
func (c *cachedResult[Out]) leave() {
	c.mu.Lock()
	c.waiting--
	abandon := c.waiting == 0 && !c.res.isResolved()
	if abandon {
		c.abandoned = true
	}
	c.mu.Unlock()
	if abandon {
		c.rc.cache.CompareAndDelete(c.id, c)
		c.cancel()
	}
}

// wait waits for the result or the end of ctx, and reports whether the
// result came; a caller whose ctx ends first leaves.
func (c *cachedResult[Out]) wait(ctx context.Context) bool {
	select {
	case <-c.res.done:
		return true
	case <-ctx.Done():
		if c.res.isResolved() {
			return true
		}
		c.leave()
		return false
	}
}

// startShared runs the shared execution of entry with ex. It returns when
// the subscription does: at once under pool isolation, once run has
// returned under semaphore isolation.
func startShared[In, Out any](ex executor[In, Out], entry *cachedResult[Out], in In) {
	rec := &sharedRecorder[Out]{entry: entry, log: entry.rc.logFor(ex.state())}
	ex.observeRecorded(entry.ctx, in, rec).Subscribe(entry.ctx, &sharedObserver[Out]{entry: entry})
}

// sharedRecorder keeps the events of a shared execution for the callers
// the cache serves, and logs the execution.
type sharedRecorder[Out any] struct {
	entry *cachedResult[Out]
	log   *RequestLog
}

func (r *sharedRecorder[Out]) recordExecution(e Execution) {
	r.entry.setEvents(e.Events)
	e.CacheKey = r.entry.id.cacheKey
	if r.log != nil {
		r.log.add(e)
	}
}

// sharedObserver passes the values of a shared execution on to its
// entry's subscribers and resolves the entry.
type sharedObserver[Out any] struct {
	entry *cachedResult[Out]
	last  Out
}

func (o *sharedObserver[Out]) OnNext(v Out) {
	o.last = v
	o.entry.live.OnNext(v)
}

func (o *sharedObserver[Out]) OnError(err error) {
	var zero Out
	o.entry.resolve(zero, err)
}

func (o *sharedObserver[Out]) OnCompleted() { o.entry.resolve(o.last, nil) }

// setEvents keeps the events of an execution of the shared call, one of
// its attempts, for the callers the cache serves: the last to end before
// the result, unless it was cancelled, as a hedge's loser is, while
// another attempt answered.
func (c *cachedResult[Out]) setEvents(events metricsstream.EventCounts) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sealed || c.recorded && events[metricsstream.Cancelled] != 0 {
		return
	}
	c.events, c.recorded = events, true
}

func (c *cachedResult[Out]) resolve(last Out, err error) {
	c.mu.Lock()
	c.sealed = true
	c.mu.Unlock()
	c.res.resolve(last, err)
	if err != nil {
		c.live.OnError(err)
	} else {
		c.live.OnCompleted()
	}
	c.cancel() // the execution is over: release its context
}

// executeCached is Execute for a command whose request cache is on: the
// first caller of a cache key starts the shared execution, later ones
// wait for it and are served from the cache. ok is false when the cache
// cannot serve this command (see joinCache).
func executeCached[In, Out any](ctx context.Context, ex executor[In, Out], rc *requestContext, in In, cacheKey string) (v Out, err error, ok bool) {
	k := ex.state()
	entry, owner, ok := joinCache[Out](ctx, rc, requestCacheKey{key: k.key, cacheKey: cacheKey})
	if !ok {
		return v, nil, false
	}
	if owner {
		// A semaphore-isolated run holds this goroutine: the caller's
		// leaving must still be noticed meanwhile.
		stop := context.AfterFunc(ctx, entry.leave)
		startShared(ex, entry, in)
		// A caller that left before the result gets its own context's
		// error, as an uncached Execute does (runHere): under semaphore
		// isolation, one that left while the shared execution ran on its
		// goroutine, though the result is there for the callers who
		// stayed, and one whose leaving abandoned the shared execution
		// (its result is then that cancellation, context.Canceled).
		if left := !stop(); left || !entry.wait(ctx) {
			return v, ctx.Err(), true
		}
		v, err = entry.res.result()
		return v, err, true
	}
	start := k.registry.clock.Now()
	k.cacheHitHook()
	if !entry.wait(ctx) {
		recordCacheHit(ctx, nil, k, rc.logFor(k), entry.id.cacheKey, start, nil)
		return v, ctx.Err(), true
	}
	recordCacheHit(ctx, nil, k, rc.logFor(k), entry.id.cacheKey, start, &entry.events)
	v, err = entry.res.result()
	return v, err, true
}

// cachedObservable is ToObservable for a command whose request cache is
// on: each subscription joins the entry of the cache key, starting its
// execution if it is the first, and receives the values of the shared
// execution as they come and its terminal event. It subscribes to them
// before it starts the execution, which under semaphore isolation runs
// on its goroutine, so that a stream that never ends is served too.
func cachedObservable[In, Out any](ex executor[In, Out], rc *requestContext, callerCtx context.Context, in In, cacheKey string) observable.Observable[Out] {
	k := ex.state()
	return observable.Create(func(subCtx context.Context, o observable.Observer[Out]) {
		var entry *cachedResult[Out]
		var owner bool
		ok := callerCtx.Err() == nil
		if ok {
			entry, owner, ok = joinCache[Out](callerCtx, rc, requestCacheKey{key: k.key, cacheKey: cacheKey})
		}
		if !ok {
			// The entry holds another type's values, or the caller has
			// left already: an execution of the subscriber's own, which
			// in the second case ends CANCELLED with nothing run. A
			// shared one would run on this goroutine under semaphore
			// isolation before the caller's leaving reached it.
			var rec executionRecorder
			if log := rc.logFor(k); log != nil {
				rec = log
			}
			ex.observeRecorded(callerCtx, in, rec).Subscribe(subCtx, o)
			return
		}
		served := &servedObserver[Out]{down: o}
		if _, ok := ex.(*Command[In, Out]); ok {
			// A Command's one value is its result: told with the end,
			// as a Single tells it, so that a subscriber that leaves on
			// it (First) has not left the entry before its result.
			served.single = true
		}
		var start time.Time
		if !owner {
			start = k.registry.clock.Now()
			k.cacheHitHook()
			served.hit = func() { recordCacheHit(subCtx, callerCtx, k, rc.logFor(k), entry.id.cacheKey, start, &entry.events) }
		}
		served.d = watchDeparture(subCtx, callerCtx, func() {
			entry.leave()
			if !owner {
				recordCacheHit(subCtx, callerCtx, k, rc.logFor(k), entry.id.cacheKey, start, nil)
			}
			served.left(subCtx, callerCtx)
		})
		entry.live.Observable().Subscribe(subCtx, served)
		if owner {
			startShared(ex, entry, in)
		}
	})
}

// servedObserver is one subscriber of a cache entry. It tells the
// subscriber the entry's values and its terminal event; or, when the
// caller's context ends first, that context's error, as an execution of
// the subscriber's own would end (CANCELLED). That error comes on
// another goroutine than the values, so, like a subscription's terminal
// event, it waits for a value being told (valueTeller).
type servedObserver[Out any] struct {
	down observable.Observer[Out]
	d    *departure
	hit  func() // records the cache hit; nil for the subscriber whose execution it is
	// single holds back the value of a Command, its result, until the
	// end: last, once has is set.
	single bool
	has    bool
	last   Out

	mu     sync.Mutex
	ended  bool // the terminal event is told or due
	teller valueTeller
}

func (s *servedObserver[Out]) OnNext(v Out) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	if s.single {
		s.last, s.has = v, true
		s.mu.Unlock()
		return
	}
	s.teller.begin()
	s.mu.Unlock()
	s.down.OnNext(v)
	s.mu.Lock()
	due := s.teller.done()
	s.mu.Unlock()
	if due != nil {
		s.tell(due.err)
	}
}

func (s *servedObserver[Out]) OnError(err error) {
	if s.stays() {
		s.end(err)
	}
}

func (s *servedObserver[Out]) OnCompleted() {
	if s.stays() {
		s.mu.Lock()
		v, has := s.last, s.has && !s.ended
		s.mu.Unlock()
		if has {
			s.down.OnNext(v)
		}
		s.end(nil)
	}
}

// stays reports whether the subscriber is still there at the end, and if
// so records its cache hit.
func (s *servedObserver[Out]) stays() bool {
	if !s.d.stay() {
		return false // the subscriber left first
	}
	if s.hit != nil {
		s.hit()
	}
	return true
}

// left is the subscriber's departure from the entry: when it is the
// caller's context that ended, the subscriber, still subscribed, is told
// its error.
func (s *servedObserver[Out]) left(sub, caller context.Context) {
	if err := caller.Err(); err != nil && sub.Err() == nil {
		s.end(err)
	}
}

// end tells the terminal event, err or the completion if nil, once: now,
// or after the value being told.
func (s *servedObserver[Out]) end(err error) {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return
	}
	s.ended = true
	telling := s.teller.leave(err)
	s.mu.Unlock()
	if !telling {
		s.tell(err)
	}
}

func (s *servedObserver[Out]) tell(err error) {
	if err != nil {
		s.down.OnError(err)
		return
	}
	s.down.OnCompleted()
}

// recordCacheHit records an execution of k that the request cache served
// under cacheKey to a caller whose contexts are subCtx and callerCtx (nil
// for a call), as Hystrix's cleanUpAfterResponseFromCache: the request
// log and the trace show the events of the execution that produced the
// response (served) and RESPONSE_FROM_CACHE, or RESPONSE_FROM_CACHE and
// CANCELLED when the caller left first (served is nil); the metrics count
// RESPONSE_FROM_CACHE alone, so that a response counts once in health and
// in the rolling counts; the notifiers hear RESPONSE_FROM_CACHE.
func recordCacheHit(subCtx, callerCtx context.Context, k *keyState, log *RequestLog, cacheKey string, start time.Time, served *metricsstream.EventCounts) {
	now := k.registry.clock.Now()
	tracer := k.registry.tracer.Load()
	var shown metricsstream.EventCounts // what the log and the trace show, made only for them
	if log != nil || tracer != nil {
		shown = cacheHitEvents(served)
	}
	if log != nil {
		log.add(Execution{Command: k.key, Events: shown, ExecutionLatency: -1, CacheKey: cacheKey})
	}
	c := metricsstream.Completion{
		CommandKey:       k.key,
		GroupKey:         k.config.Load().Group,
		ExecutionLatency: -1,
		TotalLatency:     now.Sub(start),
		End:              now,
	}
	c.Events[metricsstream.ResponseFromCache] = 1
	// The notifiers hear of the event before its Completion is published,
	// as of every other event (EventNotifier).
	if global, local := k.registry.plugins.p.Load(), k.plugins.p.Load(); global != nil || local != nil {
		notify(global, local, k.key, metricsstream.ResponseFromCache)
	}
	k.markAlone(&c)
	if tracer != nil {
		c.Events = shown
		traceCacheHit(tracer, valuesOf(subCtx, callerCtx), &c, start)
	}
}

// cacheHitEvents are the events of a cache hit as the request log shows
// them: those of the execution served (RESPONSE_FROM_CACHE and CANCELLED
// when served is nil, the caller having left first) and
// RESPONSE_FROM_CACHE.
func cacheHitEvents(served *metricsstream.EventCounts) metricsstream.EventCounts {
	var events metricsstream.EventCounts
	if served != nil {
		events = *served
	} else {
		events[metricsstream.Cancelled] = 1
	}
	events[metricsstream.ResponseFromCache] = 1
	return events
}

// cacheHitHook tells the hooks of k that the request cache serves an
// execution.
func (k *keyState) cacheHitHook() {
	if global, local := k.registry.plugins.p.Load(), k.plugins.p.Load(); global != nil || local != nil {
		callHooks(global, local, func(h ExecutionHook) { h.CacheHit(k.key) })
	}
}
