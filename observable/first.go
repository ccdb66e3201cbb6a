package observable

import "context"

// First subscribes, returns the first value and stops the subscription.
// It returns ErrEmpty if the Observable completes without a value, the
// Observable's error if it fails first, and ctx's error if ctx ends first.
func (o Observable[T]) First(ctx context.Context) (T, error) {
	s := &firstSubscriber[T]{}
	s.init(ctx)
	o.run(s, s)
	return s.wait(ctx)
}

// firstSubscriber is subscription and observer in one allocation.
type firstSubscriber[T any] struct {
	scope
	value   T
	failure error
	ended   bool
}

func (s *firstSubscriber[T]) OnNext(v T)        { s.end(v, nil) }
func (s *firstSubscriber[T]) OnError(err error) { var zero T; s.end(zero, err) }
func (s *firstSubscriber[T]) OnCompleted()      { var zero T; s.end(zero, ErrEmpty) }

// end records the result unless the subscription has already ended.
func (s *firstSubscriber[T]) end(v T, err error) {
	if s.begin() {
		s.value, s.failure, s.ended = v, err, true
		s.finish(context.Canceled)
	}
}

// wait returns the result once the subscription has ended.
func (s *firstSubscriber[T]) wait(ctx context.Context) (T, error) {
	if s.state.Load() != scopeEnded {
		<-s.Done()
	}
	if !s.ended {
		var zero T
		if err := ctx.Err(); err != nil {
			return zero, err
		}
		return zero, context.Canceled
	}
	return s.value, s.failure
}
