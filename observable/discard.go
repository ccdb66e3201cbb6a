package observable

// Discarder is implemented by a [Single], or a [Producer], whose values
// hold something to release (rows, a response body, a connection) when
// nobody receives them, as the Observable of a command made with
// WithDiscard does. An operator that has taken a value from such a Single
// or Producer and drops it hands it to Discard, once:
//
//   - [FromProducer], for a value the Producer emits once its
//     subscription has ended;
//   - [Observable.Hedge] and [Observable.HedgeOn], for the value of an
//     attempt that lost the race;
//   - [HedgeStreamOn], for a value of an attempt that lost the race, and
//     one the winner emits once the subscription has ended;
//   - [Observable.First], for a value that comes as its context ends,
//     and [Observable.Last], for each value a later one replaced;
//   - [Observable.ToSlice], for the values it had collected when its
//     context ended;
//   - [Zip2], for a value of a Discarder Single (not a Producer's)
//     left without a partner: the other side
//     failed or completed first, or the subscriber left before the pair
//     was made (the pair is then not made);
//   - [Observable.Timeout], for a value that comes after the timeout, or
//     once its subscriber has left before it;
//   - [Observable.ReplayNow] and [Observable.ReplayNowOn], for a value
//     that comes once every subscriber has left, which is not replayed
//     (the subscribers that come later get context.Canceled);
//   - [Observable.ToFuture] and [Observable.ToFutureOn], for a value that
//     comes once the Future was cancelled or its context ended;
//   - [Observable.Subscribe], for a value that comes once the
//     subscription has ended: to the observer's Discard if the observer
//     is a Discarder too (one that takes values for somebody else, as a
//     Producer's own subscription does, so gives them back), and to the
//     Observable's Single's or Producer's otherwise.
//
// What an operator passes on is its receiver's: a value emitted
// downstream, a Future's or First's result, and what an operator makes
// of a value (Map's value, Zip2's pair), which only the operator's
// function knows how to release. So a pair that Zip2 made and that its
// subscriber no longer wants is not discarded.
type Discarder[T any] interface {
	// Discard releases v, a value the Single or Producer gave that nobody
	// received.
	// It is called outside the operator's locks, on the goroutine that
	// drops v.
	Discard(v T)
}

// discarderOf returns the Discarder of o, its Single or its Producer, or
// nil if it has none.
func discarderOf[T any](o Observable[T]) Discarder[T] {
	if d, ok := o.one.(Discarder[T]); ok {
		return d
	}
	if ps, ok := o.src.(producerSource[T]); ok {
		d, _ := ps.p.(Discarder[T])
		return d
	}
	return nil
}

// discardFrom hands v to s's Discard if s is a Discarder. s may be nil:
// the Single of an Observable that is not one.
func discardFrom[T any](s Single[T], v T) {
	if d, ok := s.(Discarder[T]); ok {
		d.Discard(v)
	}
}
