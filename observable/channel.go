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
		done := s.Done()
		go func() {
			for {
				select {
				case v, ok := <-ch:
					if !s.live() {
						return
					}
					if !ok {
						o.OnCompleted()
						return
					}
					o.OnNext(v)
				case <-done:
					return
				}
			}
		}()
	})}
}
