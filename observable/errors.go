package observable

import "errors"

// ErrTimeout is the error of an Observable made by [Observable.Timeout]
// whose source neither emitted nor terminated in time.
var ErrTimeout = errors.New("observable: timed out")

// ErrEmpty is returned by [Observable.First], [Observable.Last] and
// [Future.Get] when the Observable completed without emitting a value.
var ErrEmpty = errors.New("observable: completed without a value")
