package command

import (
	"cmp"
	"context"
	"sync"

	"github.com/rxhystrix/rxhystrix/observable"
)

// collapsedSingle is what a Collapser's ToObservable emits from: each
// call or subscription adds in to a batch, under the context ToObservable
// was given. As a Single, First calls it as Execute waits, and Observe's
// replay holds it; as a Discarder, the operators that drop its result
// hand it to the collapser's discard.
type collapsedSingle[In, Out any] struct {
	c   *Collapser[In, Out]
	ctx context.Context // ToObservable's
	in  In

	mu    sync.Mutex
	given *collapsedRequest[In, Out] // the request whose result a subscription was told, if only one was
	many  bool                       // subscriptions were told more than one result: Discard cannot tell whose
}

// Call adds in to a batch and waits for its result, leaving the batch if
// ctx or ToObservable's context ends first.
func (s *collapsedSingle[In, Out]) Call(ctx context.Context) (Out, error) {
	return s.c.await(s.ctx, ctx, s.in, s)
}

// SubscribeSingle adds in to a batch and tells r its result, or, if the
// subscription or ToObservable's context ends first, leaves the batch and
// tells r that context's error.
func (s *collapsedSingle[In, Out]) SubscribeSingle(ctx context.Context, r observable.SingleObserver[Out]) {
	var zero Out
	if err := cmp.Or(s.ctx.Err(), ctx.Err()); err != nil {
		r.OnResult(zero, err)
		return
	}
	traced, trace := s.c.traceRequest(s.ctx)
	req, fromCache, err := s.c.submit(traced, s.in)
	if err != nil {
		trace.finish(err, false)
		r.OnResult(zero, err)
		return
	}
	trace.servedFromCache(fromCache)
	d := watchDeparture(ctx, s.ctx, func() {
		req.b.leave(req)
		trace.finish(nil, true)
		r.OnResult(zero, cmp.Or(ctx.Err(), s.ctx.Err(), context.Canceled))
	})
	req.res.whenResolved(func() {
		if !d.stay() {
			return
		}
		v, err := req.b.take(req)
		if err == nil && s.c.discard != nil {
			s.gave(req)
		}
		trace.finish(err, false)
		r.OnResult(v, err)
	})
}

// Async reports true: the result comes from the batch's goroutine.
func (s *collapsedSingle[In, Out]) Async() bool { return true }

// Discard is an operator dropping v, a result a subscription was told:
// the request it came from is given back, and its result discarded once
// no other caller holds it or waits for it. Which request that is is
// known when s told one result, as the Observables of Queue and Observe
// do; a value from an Observable subscribed more than once is left as it
// is.
func (s *collapsedSingle[In, Out]) Discard(v Out) {
	s.mu.Lock()
	req := s.given
	s.mu.Unlock()
	if req != nil {
		req.b.release(req)
	}
}

// gave notes that a subscription was told req's result.
func (s *collapsedSingle[In, Out]) gave(req *collapsedRequest[In, Out]) {
	s.mu.Lock()
	if s.given == nil && !s.many {
		s.given = req
	} else {
		s.given, s.many = nil, true // nor is the first kept, with its result, for as long as s lives
	}
	s.mu.Unlock()
}

// await adds in to a batch and waits for its result, leaving the batch
// when ctx, or sub if not nil, ends first; a result that has come by
// then is the caller's. s, when not nil, is the Single called: it is
// told the request whose value it returns, as a subscription's is, so
// that an operator dropping the value gives it back (Discard).
func (c *Collapser[In, Out]) await(ctx, sub context.Context, in In, s *collapsedSingle[In, Out]) (v Out, err error) {
	var subDone <-chan struct{}
	if sub != nil {
		subDone = sub.Done()
		if err := sub.Err(); err != nil {
			return v, err
		}
	}
	if err := ctx.Err(); err != nil {
		return v, err
	}
	ctx, trace := c.traceRequest(ctx)
	left := false
	defer func() { trace.finish(err, left) }()
	r, fromCache, err := c.submit(ctx, in)
	if err != nil {
		return v, err
	}
	trace.servedFromCache(fromCache)
	select {
	case <-r.res.done:
		return c.took(r, s)
	case <-ctx.Done():
		err = ctx.Err()
	case <-subDone:
		err = sub.Err()
	}
	if r.res.isResolved() {
		return c.took(r, s)
	}
	r.b.leave(r)
	left = true
	return v, err
}

// took is a caller of r receiving its result, which is set; s, when not
// nil, is the Single whose Call the caller is, told the request of a
// value it returns.
func (c *Collapser[In, Out]) took(r *collapsedRequest[In, Out], s *collapsedSingle[In, Out]) (Out, error) {
	v, err := r.b.take(r)
	if err == nil && s != nil && c.discard != nil {
		s.gave(r)
	}
	return v, err
}
