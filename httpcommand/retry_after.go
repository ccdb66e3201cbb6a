package httpcommand

import (
	"errors"
	"net/http"
	"strconv"
	"time"
)

// RetryAfter returns the wait the response's Retry-After header asks
// for, so that a key whose Config retries (command.Config.Retry) waits
// what the server said in place of its backoff (observable.Pushback): a
// number of seconds, or an HTTP date, which counts from the response's
// Date header when it has one, as the server's clock is what the date
// was written on, and from now otherwise. A date already past is a wait
// of zero. It returns false when the response has no such header, or
// one that is neither.
func (e *StatusError) RetryAfter() (time.Duration, bool) {
	return retryAfter(e.Header, time.Now())
}

// retryAfter parses h's Retry-After, counting a date from h's Date or,
// without one, from now.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	// A number too large is a wait too long: ParseUint returns its
	// largest, which min bounds.
	if secs, err := strconv.ParseUint(v, 10, 63); err == nil || errors.Is(err, strconv.ErrRange) {
		return time.Duration(min(secs, uint64(maxRetryAfter/time.Second))) * time.Second, true
	}
	at, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	if date, err := http.ParseTime(h.Get("Date")); err == nil {
		now = date
	}
	// A date far off is a wait too long, bounded as a number of seconds
	// is: at.Sub saturates at the longest Duration, which a policy that
	// adds it to a time would overflow.
	return min(max(at.Sub(now), 0), maxRetryAfter), true
}

// maxRetryAfter bounds the wait of a Retry-After, in seconds or a date,
// so that a huge number cannot overflow a time.Duration, nor a date far
// off a time it is added to: a century, which no retry policy waits.
const maxRetryAfter = 100 * 365 * 24 * time.Hour

// setRetryAfter gives a guard's refusal the header that tells the client
// when the command would admit it, d rounded up to whole seconds.
// It rounds up without adding to d, which near the longest Duration (a
// breaker's sleep window may be that long) would wrap around to a
// negative number.
func setRetryAfter(h http.Header, d time.Duration) {
	d = max(d, 0)
	secs := int64(d / time.Second)
	if d%time.Second != 0 {
		secs++
	}
	h.Set("Retry-After", strconv.FormatInt(secs, 10))
}
