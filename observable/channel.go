package observable

// FromChannel returns an Observable that emits the values received from
// ch and completes when ch is closed. Each subscription starts a goroutine
// that receives from ch until ch is closed or the subscription ends; the
// goroutine then returns. The channel is shared, not replayed: concurrent
// subscriptions split its values between them, and a value received just
// as the subscription ends is lost.
//
// It panics if ch is nil.
func FromChannel[T any](ch <-chan T) Observable[T] {
	if ch == nil {
		panic("observable: FromChannel with nil ch")
	}
	return Observable[T]{src: sourceFunc[T](func(s *scope, o Observer[T]) {
		go readChannel(s, ch, func(v T) bool {
			o.OnNext(v)
			return true
		}, o.OnCompleted)
	})}
}

// readChannel receives from ch until ch is closed (it then calls closed)
// or s ends, and hands each value, while s is live, to emit, which reports
// whether to go on. It is the body of a subscription's reading goroutine.
func readChannel[E any](s *scope, ch <-chan E, emit func(E) bool, closed func()) {
	done := s.Done()
	for {
		// A subscription that has ended (its observer, say a Take, had
		// what it wanted) takes no more from the shared channel: a
		// select with both ready would pick at random and drop a value.
		select {
		case <-done:
			return
		default:
		}
		select {
		case v, ok := <-ch:
			if !s.live() {
				return
			}
			if !ok {
				closed()
				return
			}
			if !emit(v) {
				return
			}
		case <-done:
			return
		}
	}
}
