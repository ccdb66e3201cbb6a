package observable

import (
	"context"
	"runtime"
	"sync/atomic"
)

// First subscribes, waits for the first value and then stops the
// subscription, so the source sees its context done. It returns ErrEmpty
// if the Observable completes without a value, the Observable's error if
// it fails first, and ctx's error if ctx is done first.
func (o Observable[T]) First(ctx context.Context) (T, error) {
	if s, ok := singleOf(o); ok {
		return s.Call(orBackground(ctx))
	}
	if p, ok := firstProducerOf(o); ok {
		return produceFirst(p, orBackground(ctx))
	}
	c := &collector[T]{first: true, discard: discarderOf(o)}
	c.init(ctx)
	o.run(&c.scope, c)
	return c.wait()
}

// Last subscribes and waits for the Observable to terminate. It returns
// the last value, ErrEmpty if the Observable completed without a value,
// the Observable's error if it failed, and ctx's error if ctx is done
// first.
func (o Observable[T]) Last(ctx context.Context) (T, error) {
	if s, ok := singleOf(o); ok {
		return s.Call(orBackground(ctx))
	}
	c := &collector[T]{discard: discarderOf(o)}
	c.init(ctx)
	o.run(&c.scope, c)
	v, err := c.wait()
	if c.discard != nil && c.state.Load() != scopeDone {
		c.dropHeld() // ended before the source terminated, as ToSlice's
	}
	return v, err
}

// ToSlice subscribes and waits for the Observable to terminate. It returns
// every value in order (nil if there were none), or the values received
// before the Observable failed and its error, or nil and ctx's error if
// ctx is done first: the values received until then go to the Discard of
// o's [Discarder] Single or Producer, if it has one.
func (o Observable[T]) ToSlice(ctx context.Context) ([]T, error) {
	if s, ok := singleOf(o); ok {
		v, err := s.Call(orBackground(ctx))
		if err != nil {
			return nil, err
		}
		return []T{v}, nil
	}
	c := &sliceCollector[T]{discard: discarderOf(o)}
	c.init(ctx)
	o.run(&c.scope, c)
	if !c.ended() {
		c.waitEnd()
	}
	if c.state.Load() != scopeDone {
		c.dropValues()
		return nil, c.Err()
	}
	return c.values, c.failure
}

// collector is subscription and observer in one allocation for the calls
// that wait for one value: First, Last and Future.
//
// The source writes the result fields while the scope is live, then ends
// the scope with scopeDone; the waiter reads them only if the scope ended
// that way, so a cancellation that wins the race leaves them unread.
type collector[T any] struct {
	scope
	value   T
	failure error
	first   bool // end at the first value
	has     bool // value holds a value
	// busy marks a value or an error being written, with a discard, by
	// a collector that holds its last value (Last, Future): see
	// dropHeld. Beside first and has, in what would be padding: a Future
	// one size class larger made every Queue allocate 48 bytes more
	// (bench/peers rxhystrix-semaphore-queue, B/op).
	busy atomic.Bool
	// discard is the source's Discarder, or nil: it takes a value that
	// comes once the subscription has ended, one that a later value
	// replaces (Last), and the one held when the source fails or the
	// subscription ends before the source terminates.
	discard Discarder[T]
}

// discardHeldOnEnd arranges, for a collector that holds its last value
// and has a Discarder, and no waiter that sees the subscription end (a
// Future's), for the value held when the subscription ends before the
// source terminated to go to the Discarder. The hook is allocated only
// then.
func (c *collector[T]) discardHeldOnEnd() {
	if c.discard == nil || c.first {
		return
	}
	h := &heldDropper[T]{c: c}
	h.target = h
	c.addHook(&h.hook)
}

// heldDropper is the hook that drops the value a collector holds when its
// subscription ends before the source terminated.
type heldDropper[T any] struct {
	hook
	c *collector[T]
}

func (h *heldDropper[T]) scopeEnded(error) {
	if h.c.state.Load() != scopeDone {
		h.c.dropHeld()
	}
}

// dropHeld hands the value held by a subscription that ended before its
// source terminated to the Discarder. A write that saw the subscription
// live finishes before the value is read; a later one finds it ended and
// drops its own value.
func (c *collector[T]) dropHeld() {
	for c.busy.Load() {
		runtime.Gosched()
	}
	if c.has {
		c.drop(c.value)
	}
}

func (c *collector[T]) OnNext(v T) {
	if c.first {
		// The value is published only by the end it makes: one that
		// comes as the context ends is nobody's.
		if c.state.Load() != scopeLive || !c.keep(v) {
			c.drop(v)
		}
		return
	}
	if c.discard == nil {
		if c.live() {
			c.value, c.has = v, true
		}
		return
	}
	c.busy.Store(true)
	live := c.live()
	old, replaced := c.value, c.has && live
	if live {
		c.value, c.has = v, true
	}
	c.busy.Store(false)
	if replaced {
		c.drop(old) // Last keeps only the last
	}
	if !live {
		c.drop(v)
	}
}

// keep makes v First's result, and reports whether it is: false if the
// subscription ended meanwhile.
func (c *collector[T]) keep(v T) bool {
	c.value, c.has = v, true
	return c.endAs(scopeDone)
}

// drop hands v, which nobody receives, to the source's Discarder, if any.
func (c *collector[T]) drop(v T) {
	if c.discard != nil {
		c.discard.Discard(v)
	}
}

func (c *collector[T]) OnError(err error) {
	if c.discard != nil && !c.first {
		// The value held is nobody's: it goes back, once, here or, if
		// the subscription ends meanwhile, by dropHeld.
		c.busy.Store(true)
		if c.state.Load() != scopeLive {
			c.busy.Store(false)
			return
		}
		var zero T
		held, had := c.value, c.has
		c.value, c.has, c.failure = zero, false, err
		c.busy.Store(false)
		c.endAs(scopeDone)
		if had {
			c.drop(held)
		}
		return
	}
	if c.state.Load() == scopeLive {
		var zero T
		c.value, c.failure = zero, err
		c.endAs(scopeDone)
	}
}

func (c *collector[T]) OnCompleted() {
	if c.state.Load() == scopeLive {
		if !c.has {
			c.failure = ErrEmpty
		}
		c.endAs(scopeDone)
	}
}

// OnResult is a Single's result, for a collector that is a Single's
// observer: a value that comes once the collector has ended goes to the
// Single's Discarder, if it has one.
func (c *collector[T]) OnResult(v T, err error) {
	if !c.take(v, err) && err == nil {
		c.drop(v)
	}
}

// take ends the collector with a Single's result, and reports whether it
// did: false if the collector had ended (its context done), and the
// result is nobody's.
func (c *collector[T]) take(v T, err error) bool {
	if c.state.Load() != scopeLive {
		return false
	}
	c.value, c.failure, c.has = v, err, err == nil
	return c.endAs(scopeDone)
}

// wait blocks until the subscription has ended and returns its result.
func (c *collector[T]) wait() (T, error) {
	if !c.ended() {
		c.waitEnd()
	}
	return c.result()
}

// result returns the result of an ended subscription.
func (c *collector[T]) result() (T, error) {
	if c.state.Load() != scopeDone {
		var zero T
		return zero, c.Err()
	}
	return c.value, c.failure
}

// sliceCollector collects every value. Its first few values go to buf, in
// the same allocation.
//
// With a source that is a Discarder, the values of a subscription that
// ends before its source terminates go to its Discard, handed over by the
// source's goroutine: appending marks the collector busy before it asks
// whether the subscription is live, and the waiter, which has seen it
// end, takes the values once the collector is not busy. One of the two
// sees the other's write: the append that asked in time finishes before
// the waiter reads, and a later one finds the subscription ended.
type sliceCollector[T any] struct {
	scope
	buf     [4]T
	values  []T
	failure error
	discard Discarder[T] // the source's, or nil
	busy    atomic.Bool  // a value is being appended
}

func (c *sliceCollector[T]) OnNext(v T) {
	if c.discard == nil {
		if c.live() {
			c.add(v)
		}
		return
	}
	c.busy.Store(true)
	live := c.live()
	if live {
		c.add(v)
	}
	c.busy.Store(false)
	if !live {
		c.discard.Discard(v)
	}
}

func (c *sliceCollector[T]) add(v T) {
	if c.values == nil {
		c.values = c.buf[:0]
	}
	c.values = append(c.values, v)
}

// dropValues hands the values of a subscription that ended before its
// source terminated to the source's Discarder, if it has one.
func (c *sliceCollector[T]) dropValues() {
	if c.discard == nil {
		return
	}
	for c.busy.Load() {
		runtime.Gosched()
	}
	for _, v := range c.values {
		c.discard.Discard(v)
	}
}

func (c *sliceCollector[T]) OnError(err error) {
	if c.state.Load() == scopeLive {
		c.failure = err
		c.endAs(scopeDone)
	}
}

func (c *sliceCollector[T]) OnCompleted() { c.endAs(scopeDone) }

// orBackground returns ctx, or context.Background for a nil ctx.
func orBackground(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}
