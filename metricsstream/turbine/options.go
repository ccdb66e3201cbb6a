package turbine

import (
	"fmt"
	"net/http"
	"time"

	"github.com/rxhystrix/rxhystrix/clock"
)

// The defaults of [New].
const (
	// DefaultRetryDelay is how long an instance whose stream failed or
	// ended waits before it is asked again, Turbine's second.
	DefaultRetryDelay = time.Second
	// DefaultStaleAfter is how long an object an instance stopped writing
	// stays in the sum: twenty frames of Hystrix's stream.
	DefaultStaleAfter = 10 * time.Second
)

// An Option changes what [New] makes. Options are values built by the
// With* functions of this package; a nil Option makes New panic.
type Option interface {
	apply(*Aggregator)
}

type optionFunc func(*Aggregator)

func (f optionFunc) apply(a *Aggregator) { f(a) }

// WithClock makes the Aggregator keep time on c: the retry delay, the
// staleness of objects and the frames of its Handler. The default is
// [clock.Real]. It panics if c is nil.
func WithClock(c clock.Clock) Option {
	if c == nil {
		panic("turbine: WithClock with nil clock")
	}
	return optionFunc(func(a *Aggregator) { a.clock = c })
}

// WithHTTPClient makes the Aggregator read the instances' streams with c,
// for its transport's settings (TLS, proxies, dial timeouts). c must not
// have a Timeout, which would cut every stream. The default is
// [net/http.DefaultClient]. It panics if c is nil or has a Timeout.
func WithHTTPClient(c *http.Client) Option {
	if c == nil {
		panic("turbine: WithHTTPClient with nil client")
	}
	if c.Timeout != 0 {
		panic(fmt.Sprintf("turbine: WithHTTPClient: the client's Timeout %v would cut every stream", c.Timeout))
	}
	return optionFunc(func(a *Aggregator) { a.client = c })
}

// WithRetryDelay sets how long an instance whose stream failed or ended
// waits before it is asked again; the default is [DefaultRetryDelay]. It
// panics if d is not positive.
func WithRetryDelay(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("turbine: WithRetryDelay: delay %v is not positive", d))
	}
	return optionFunc(func(a *Aggregator) { a.retryDelay = d })
}

// WithStaleAfter sets how long an object that an instance stopped writing
// stays in the sum, and how long a stream may write nothing before it is
// given up and asked again; the default is [DefaultStaleAfter]. It must
// exceed the instances' stream interval. It panics if d is not positive.
func WithStaleAfter(d time.Duration) Option {
	if d <= 0 {
		panic(fmt.Sprintf("turbine: WithStaleAfter: %v is not positive", d))
	}
	return optionFunc(func(a *Aggregator) { a.staleAfter = d })
}
