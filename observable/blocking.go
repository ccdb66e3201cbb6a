package observable

import "context"

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
	c := &collector[T]{first: true}
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
	c := &collector[T]{}
	c.init(ctx)
	o.run(&c.scope, c)
	return c.wait()
}

// ToSlice subscribes and waits for the Observable to terminate. It returns
// every value in order (nil if there were none), or the values received
// before the Observable failed and its error, or nil and ctx's error if
// ctx is done first.
func (o Observable[T]) ToSlice(ctx context.Context) ([]T, error) {
	if s, ok := singleOf(o); ok {
		v, err := s.Call(orBackground(ctx))
		if err != nil {
			return nil, err
		}
		return []T{v}, nil
	}
	c := &sliceCollector[T]{}
	c.init(ctx)
	o.run(&c.scope, c)
	if !c.ended() {
		c.waitEnd()
	}
	if c.state.Load() != scopeDone {
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
}

func (c *collector[T]) OnNext(v T) {
	if c.first {
		if c.state.Load() == scopeLive {
			c.value, c.has = v, true
			c.endAs(scopeDone)
		}
		return
	}
	if c.live() {
		c.value, c.has = v, true
	}
}

func (c *collector[T]) OnError(err error) {
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
// observer.
func (c *collector[T]) OnResult(v T, err error) { c.take(v, err) }

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
type sliceCollector[T any] struct {
	scope
	buf     [4]T
	values  []T
	failure error
}

func (c *sliceCollector[T]) OnNext(v T) {
	if c.live() {
		if c.values == nil {
			c.values = c.buf[:0]
		}
		c.values = append(c.values, v)
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
