package observable

import (
	"errors"
	"time"
)

// Pushback is implemented by an error that carries its source's word on
// when to try again: a server's Retry-After header, or gRPC's
// grpc-retry-pushback-ms trailer. [RetryPolicy.Next] finds it with
// errors.As in the error of a failed attempt and lets it decide the wait
// in place of the backoff, so that a server that knows when it can serve
// again (its circuit's sleep window ends, its rate limit has a token) is
// not asked before, nor made to wait for a guess.
type Pushback interface {
	error
	// RetryAfter returns the source's word: a wait of zero or more before
	// the next attempt, or a negative wait for "do not try again". It
	// returns false when the source said nothing, and the backoff
	// decides.
	RetryAfter() (wait time.Duration, ok bool)
}

// pushbackOf returns the word of the first Pushback in err's chain.
func pushbackOf(err error) (wait time.Duration, ok bool) {
	var p Pushback
	if !errors.As(err, &p) {
		return 0, false
	}
	return p.RetryAfter()
}
