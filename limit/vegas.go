package limit

import (
	"math"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/saturate"
)

// Vegas is TCP Vegas's delay-based limit, as concurrency-limits has it:
// the limit grows while the estimated queue behind it is short and
// shrinks when it is long or a call is dropped (see the package doc for
// the formula).
type Vegas struct {
	// InitialLimit is the limit before the first sample; 0 means the
	// starting point the Limiter is made with (see New), or 20.
	InitialLimit int
	// MinLimit and MaxLimit bound the limit; 0 means 1 and 1000.
	MinLimit, MaxLimit int
	// ProbeMultiplier re-measures rtt_noload every ProbeMultiplier·L
	// samples, so that a lasting rise of the no-load latency (a slower
	// downstream) is not taken for a queue for ever; 0 means 30.
	ProbeMultiplier int
}

// Vegas defaults, as concurrency-limits'.
const (
	DefaultVegasMinLimit        = 1
	DefaultVegasMaxLimit        = 1000
	DefaultVegasProbeMultiplier = 30
)

// Name returns "vegas".
func (Vegas) Name() string { return "vegas" }

// Validate reports negative fields and bounds that cross.
func (v Vegas) Validate() error {
	c := checker{kind: "Vegas"}
	d := v.withDefaults()
	c.bounds(v.InitialLimit, d.MinLimit, d.MaxLimit, v.MinLimit, v.MaxLimit)
	c.notNegative("ProbeMultiplier", v.ProbeMultiplier)
	return c.err()
}

func (v Vegas) withDefaults() Vegas {
	v.MinLimit = orDefault(v.MinLimit, DefaultVegasMinLimit)
	v.MaxLimit = orDefault(v.MaxLimit, DefaultVegasMaxLimit)
	v.ProbeMultiplier = orDefault(v.ProbeMultiplier, DefaultVegasProbeMultiplier)
	return v
}

func (v Vegas) estimator() estimator { return &vegas{cfg: v.withDefaults()} }

// vegas is the state of a Vegas limit.
type vegas struct {
	cfg     Vegas
	noLoad  time.Duration // rtt_noload; 0 until the first sample
	samples int           // since rtt_noload was last probed
}

func (v *vegas) bounds() (int, int) { return v.cfg.MinLimit, v.cfg.MaxLimit }
func (v *vegas) initial() int       { return v.cfg.InitialLimit }

func (v *vegas) update(limit float64, s Sample) float64 {
	v.samples++
	// In floats: ProbeMultiplier·L may overflow an int.
	if float64(v.samples) >= float64(v.cfg.ProbeMultiplier)*math.Floor(limit) {
		v.samples = 0
		v.noLoad = s.RTT
		return limit
	}
	if v.noLoad == 0 || s.RTT < v.noLoad {
		v.noLoad = s.RTT
		return limit
	}
	f := log10Floor(limit)
	next := limit
	switch {
	case s.Dropped:
		next = limit - f
	case float64(s.InFlight) < limit/2:
		return limit
	default:
		queue := math.Ceil(limit * (1 - float64(v.noLoad)/float64(s.RTT)))
		alpha, beta, threshold := 3*f, 6*f, f
		switch {
		case queue <= threshold:
			next = limit + beta
		case queue < alpha:
			next = limit + f
		case queue > beta:
			next = limit - f
		}
	}
	return clamp(next, float64(v.cfg.MinLimit), float64(v.cfg.MaxLimit))
}

// log10Floor returns ⌊log10 n⌋ of the integer part n of a limit, at
// least 1: concurrency-limits' Log10RootFunction, whose whole steps make
// α, β and the threshold 3, 6 and 1 for every limit below 100. Counting
// digits costs less than a logarithm, which cost more than the rest of
// an update.
func log10Floor(limit float64) float64 {
	f := 0
	for n := saturate.Int(limit); n >= 10; n /= 10 {
		f++
	}
	return float64(max(1, f))
}
