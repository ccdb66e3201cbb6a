package observable

import (
	"fmt"
	"math"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/saturate"
)

// Backoff is how long a retry waits before it starts: an exponential
// delay, capped, and jittered so that many callers retrying one failure
// spread out instead of arriving together. Retry n (1 for the first retry)
// waits
//
//	base(n) = min(Max, Initial·Multiplier^(n−1))
//
// jittered as Jitter says. The zero value of each field means its default:
// 100 ms, 5 s, ×2 and [FullJitter].
type Backoff struct {
	// Initial is base(1), the first retry's delay before jitter.
	Initial time.Duration
	// Max caps base(n).
	Max time.Duration
	// Multiplier is the growth of base(n) from one retry to the next; it
	// must be at least 1.
	Multiplier float64
	// Jitter randomises the delay around base(n).
	Jitter Jitter
}

// The defaults of Backoff.
const (
	DefaultInitialBackoff    = 100 * time.Millisecond
	DefaultMaxBackoff        = 5 * time.Second
	DefaultBackoffMultiplier = 2.0
)

// Jitter says how a [Backoff] randomises base(n), given u uniform in [0, 1).
type Jitter int

const (
	// FullJitter waits u·base(n): anywhere from nothing to base(n), which
	// spreads a crowd of retries the most for the least added wait.
	FullJitter Jitter = iota
	// ProportionalJitter waits base(n)·(0.8 + 0.4u), gRPC's A6 formula.
	ProportionalJitter
	// NoJitter waits base(n) exactly.
	NoJitter
)

// String returns the name of j.
func (j Jitter) String() string {
	switch j {
	case FullJitter:
		return "FullJitter"
	case ProportionalJitter:
		return "ProportionalJitter"
	case NoJitter:
		return "NoJitter"
	}
	return fmt.Sprintf("Jitter(%d)", int(j))
}

// Validate reports the first field of b that is out of range.
func (b Backoff) Validate() error {
	switch {
	case b.Initial < 0:
		return invalidPolicy("Backoff.Initial: %v is negative", b.Initial)
	case b.Max < 0:
		return invalidPolicy("Backoff.Max: %v is negative", b.Max)
	case b.Multiplier != 0 && !(b.Multiplier >= 1) || math.IsInf(b.Multiplier, 0):
		return invalidPolicy("Backoff.Multiplier: %v is not a finite number of at least 1", b.Multiplier)
	case b.Jitter < FullJitter || b.Jitter > NoJitter:
		return invalidPolicy("Backoff.Jitter: unknown value %d", int(b.Jitter))
	case b.Max != 0 && b.Initial > b.Max:
		return invalidPolicy("Backoff.Initial: %v is above Backoff.Max (%v)", b.Initial, b.Max)
	}
	return nil
}

func (b Backoff) withDefaults() Backoff {
	if b.Initial == 0 {
		b.Initial = DefaultInitialBackoff
	}
	if b.Max == 0 {
		b.Max = max(DefaultMaxBackoff, b.Initial)
	}
	if b.Multiplier == 0 {
		b.Multiplier = DefaultBackoffMultiplier
	}
	return b
}

// Delay returns the wait before retry n (n ≥ 1), for u uniform in [0, 1).
func (b Backoff) Delay(n int, u float64) time.Duration {
	b = b.withDefaults()
	base := float64(b.Initial) * math.Pow(b.Multiplier, float64(max(n, 1)-1))
	base = min(base, float64(b.Max))
	switch b.Jitter {
	case FullJitter:
		base *= u
	case ProportionalJitter:
		base *= 0.8 + 0.4*u
	}
	// A base of 2⁶³ or more (a Max of math.MaxInt64, or jitter above a
	// Max near it) is the longest Duration, not a negative one.
	return time.Duration(saturate.Int64(base))
}
