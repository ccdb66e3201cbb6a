package command

import (
	"errors"
	"time"
)

// RetryAfter returns how long until the command whose call err refused
// would admit another, for the answer to a caller it refused: a server's
// Retry-After header or grpc-retry-pushback-ms trailer, which the guards
// of httpcommand and grpccommand send. For a short circuit it is the rest
// of the key's sleep window (breaker.Breaker.RetryAfter), and unknown
// while the key's closed breaker throttles; for the rate
// limit, the time until the key's token bucket has a token. It returns
// false for any other error, a rejection by the permits or the pool
// among them (when one frees is not known), and for an error of a key
// that r does not know.
func (r *Registry) RetryAfter(err error) (time.Duration, bool) {
	var cmdErr *Error
	if !errors.As(err, &cmdErr) {
		return 0, false
	}
	v, ok := r.keys.Load(cmdErr.Command)
	if !ok {
		return 0, false
	}
	k := v.(*keyState)
	switch cmdErr.Failure {
	case ShortCircuitFailure:
		return k.breaker.RetryAfter()
	case RateLimitedFailure:
		if rl := k.tokens.Load(); rl != nil {
			return rl.nextPlace(r.now()), true
		}
	}
	return 0, false
}
