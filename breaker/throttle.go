package breaker

import (
	"math"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// The breaker works the probability out on each health snapshot, as it
// judges a trip, so the hot path still reads one word: a bit in it
// (throttlingBit) sends AttemptExecution to a draw only while the
// probability is above zero.

// ThrottleProbability returns the probability with which a Closed
// breaker configured by c rejects a request after the health snapshot
// hc. It is Google's client-side throttling in the form of Envoy's
// admission control filter: with n = hc.Total, s = hc.Total − hc.Errors
// the successes, t = ThrottleSuccessPercentage/100 and a =
// ThrottleAggression,
//
//	p = ((n − s/t) / (n + 1))^(1/a)
//
// when that is above zero, at most MaxThrottlePercentage/100; zero unless
// ThrottleSuccessPercentage is set and n reaches RequestVolumeThreshold.
// With t = 1/K it is the SRE book's max(0, (requests − K·accepts) /
// (requests + 1)). As in Envoy's filter, and unlike the book, n counts
// what health counts (successes, failures, timeouts, rejections by the
// pool or semaphore), not the requests the breaker refused: those are
// SHORT_CIRCUITED, which health does not count, so p follows the
// dependency's success rate and does not feed on its own refusals. Zero
// fields of c take their defaults.
func (c Config) ThrottleProbability(hc metricsstream.HealthCounts) float64 {
	resolved := c.withDefaults()
	return resolved.throttleProbability(hc)
}

func (c *Config) throttleProbability(hc metricsstream.HealthCounts) float64 {
	if c.ThrottleSuccessPercentage == 0 || hc.Total < int64(c.RequestVolumeThreshold) {
		return 0
	}
	n := float64(hc.Total)
	s := float64(hc.Total - hc.Errors)
	p := (n - s*100/float64(c.ThrottleSuccessPercentage)) / (n + 1)
	if !(p > 0) {
		return 0
	}
	if c.ThrottleAggression != 1 {
		p = math.Pow(p, 1/c.ThrottleAggression)
	}
	return min(p, float64(c.MaxThrottlePercentage)/100)
}

// validateThrottle reports to bad, Validate's, the throttling fields of
// c that hold impossible values.
func (c Config) validateThrottle(bad func(field string, value any, reason string)) {
	off := c.ThrottleSuccessPercentage == 0
	if c.ThrottleSuccessPercentage < 0 || c.ThrottleSuccessPercentage > 100 {
		bad("ThrottleSuccessPercentage", c.ThrottleSuccessPercentage, "must be between 0 and 100")
	}
	switch a := c.ThrottleAggression; {
	case a == 0:
	case !(a > 0) || math.IsInf(a, 1):
		bad("ThrottleAggression", a, "must be zero or a positive finite number")
	case off:
		bad("ThrottleAggression", a, "is set but ThrottleSuccessPercentage is zero")
	}
	switch m := c.MaxThrottlePercentage; {
	case m < 0 || m > 100:
		bad("MaxThrottlePercentage", m, "must be between 0 and 100")
	case m != 0 && off:
		bad("MaxThrottlePercentage", m, "is set but ThrottleSuccessPercentage is zero")
	}
}

// ThrottleProbability returns the probability with which the breaker
// rejects a request now (see Config.ThrottleSuccessPercentage): above
// zero only while it is Closed, neither disabled nor forced open or
// closed (a force flag decides every request), throttling is on and the
// latest health snapshot was below the success threshold. A rejected
// request is refused by AttemptExecution as an open breaker refuses it,
// and the breaker stays Closed.
func (b *Breaker) ThrottleProbability() float64 {
	if w := b.word.Load(); w&throttlingBit == 0 || w&(forcedOpenBit|allowAllBit) != 0 {
		return 0
	}
	return math.Float64frombits(b.throttle.Load())
}

// throttleLocked sets the rejection probability from the health snapshot
// hc for cfg, and with it the word's throttling bit: only a Closed
// breaker that is not disabled throttles, and a state change clears the
// bit (makeWord).
func (b *Breaker) throttleLocked(cfg *Config, hc metricsstream.HealthCounts) {
	w := b.word.Load()
	p := 0.0
	if stateOf(w) == Closed && w&disabledBit == 0 {
		p = cfg.throttleProbability(hc)
	}
	b.throttle.Store(math.Float64bits(p))
	if p > 0 {
		w |= throttlingBit
	} else {
		w &^= throttlingBit
	}
	b.word.Store(w)
}

// throttled draws whether a request to the throttling breaker is
// rejected.
func (b *Breaker) throttled() bool {
	return b.rand() < math.Float64frombits(b.throttle.Load())
}
