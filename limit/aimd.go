package limit

import (
	"math"
	"time"
)

// AIMD is additive increase, multiplicative decrease: the limit grows by
// one per sample taken near it and is cut by BackoffRatio on a drop or a
// sample slower than Timeout.
type AIMD struct {
	// InitialLimit is the limit before the first sample; 0 means the
	// starting point the Limiter is made with (see New), or 20.
	InitialLimit int
	// MinLimit and MaxLimit bound the limit; 0 means 20 and 200.
	MinLimit, MaxLimit int
	// BackoffRatio multiplies the limit on a drop, in [0.5, 1); 0 means
	// 0.9.
	BackoffRatio float64
	// Timeout makes a sample slower than it count as a drop; 0 means 5s,
	// negative turns it off.
	Timeout time.Duration
}

// AIMD defaults, as concurrency-limits'.
const (
	DefaultAIMDMinLimit     = 20
	DefaultAIMDMaxLimit     = 200
	DefaultAIMDBackoffRatio = 0.9
	DefaultAIMDTimeout      = 5 * time.Second
)

// Name returns "aimd".
func (AIMD) Name() string { return "aimd" }

// Validate reports negative limits, bounds that cross and a BackoffRatio
// outside [0.5, 1).
func (a AIMD) Validate() error {
	c := checker{kind: "AIMD"}
	d := a.withDefaults()
	c.bounds(a.InitialLimit, d.MinLimit, d.MaxLimit, a.MinLimit, a.MaxLimit)
	if a.BackoffRatio != 0 && !(a.BackoffRatio >= 0.5 && a.BackoffRatio < 1) {
		c.bad("BackoffRatio", a.BackoffRatio, "must be in [0.5, 1)")
	}
	return c.err()
}

func (a AIMD) withDefaults() AIMD {
	a.MinLimit = orDefault(a.MinLimit, DefaultAIMDMinLimit)
	a.MaxLimit = orDefault(a.MaxLimit, DefaultAIMDMaxLimit)
	a.BackoffRatio = orDefault(a.BackoffRatio, DefaultAIMDBackoffRatio)
	if a.Timeout == 0 {
		a.Timeout = DefaultAIMDTimeout
	}
	return a
}

func (a AIMD) estimator() estimator { return &aimd{cfg: a.withDefaults()} }

// aimd is the state of an AIMD limit: its configuration alone.
type aimd struct{ cfg AIMD }

func (a *aimd) bounds() (int, int) { return a.cfg.MinLimit, a.cfg.MaxLimit }
func (a *aimd) initial() int       { return a.cfg.InitialLimit }

func (a *aimd) update(limit float64, s Sample) float64 {
	next := limit
	switch {
	case s.Dropped || (a.cfg.Timeout > 0 && s.RTT > a.cfg.Timeout):
		next = math.Floor(limit * a.cfg.BackoffRatio)
	case float64(s.InFlight) >= limit/2: // L real, as Vegas's hold; no 2·InFlight to overflow
		next = limit + 1
	default:
		return limit
	}
	return clamp(next, float64(a.cfg.MinLimit), float64(a.cfg.MaxLimit))
}
