package breaker

import (
	"fmt"
	"math/rand/v2"

	"github.com/rxhystrix/rxhystrix/clock"
)

// DefaultTransitionBuffer is how many transitions each subscriber of
// [Breaker.Transitions] may fall behind before further ones are dropped,
// unless WithTransitionBuffer says otherwise.
const DefaultTransitionBuffer = 64

// An Option changes how New (or Registry.GetOrCreate) builds a Breaker.
type Option interface{ apply(*options) }

type options struct {
	clock  clock.Clock
	name   string
	buffer int
	rand   func() float64
}

func defaultOptions() options {
	return options{clock: clock.Real, buffer: DefaultTransitionBuffer, rand: rand.Float64}
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// WithClock makes the breaker read time from c (for its sleep windows and
// transition times) instead of the wall clock. It panics if c is nil.
func WithClock(c clock.Clock) Option {
	if c == nil {
		panic("breaker: WithClock with nil clock")
	}
	return optionFunc(func(o *options) { o.clock = c })
}

// WithName names the breaker, usually after its command key; the name
// appears in its transitions. Registry.GetOrCreate names breakers after
// their key.
func WithName(name string) Option {
	return optionFunc(func(o *options) { o.name = name })
}

// WithTransitionBuffer sets how many transitions each subscriber of
// Transitions may fall behind before further ones are dropped. It panics
// if n < 1.
func WithTransitionBuffer(n int) Option {
	if n < 1 {
		panic(fmt.Sprintf("breaker: WithTransitionBuffer(%d): n must be at least 1", n))
	}
	return optionFunc(func(o *options) { o.buffer = n })
}

// WithRand makes the breaker draw the jitter of its sleep windows
// (Config.SleepWindowJitter) and the requests it throttles
// (Config.ThrottleSuccessPercentage) with r, which returns numbers
// uniform in [0, 1), instead of math/rand/v2's Float64: for a simulation
// or a test that must repeat itself. A throttling breaker calls r from
// every goroutine that asks AttemptExecution, so r must then be safe for
// concurrent use. It panics if r is nil.
func WithRand(r func() float64) Option {
	if r == nil {
		panic("breaker: WithRand with nil function")
	}
	return optionFunc(func(o *options) { o.rand = r })
}
