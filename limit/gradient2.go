package limit

import "fmt"

// Gradient2 is concurrency-limits' Gradient2: the limit follows the
// ratio of a long-term average latency to the latest one, plus a small
// queue (see the package doc for the formula).
type Gradient2 struct {
	// InitialLimit is the limit before the first sample; 0 means the
	// starting point the Limiter is made with (see New), or 20.
	InitialLimit int
	// MinLimit and MaxLimit bound the limit; 0 means 20 and 200.
	MinLimit, MaxLimit int
	// QueueSize is added to the limit at each update, so that it can
	// grow while latency holds; 0 means 4.
	QueueSize int
	// Tolerance is how much longer than the long-term average a
	// latency may be before the limit shrinks; 0 means 1.5, and it must
	// be at least 1.
	Tolerance float64
	// Smoothing weighs each new limit against the current one, in
	// (0, 1]; 0 means 0.2.
	Smoothing float64
	// LongWindow is the number of samples the long-term average
	// covers; 0 means 600.
	LongWindow int
}

// Gradient2 defaults, as concurrency-limits'.
const (
	DefaultGradient2MinLimit   = 20
	DefaultGradient2MaxLimit   = 200
	DefaultGradient2QueueSize  = 4
	DefaultGradient2Tolerance  = 1.5
	DefaultGradient2Smoothing  = 0.2
	DefaultGradient2LongWindow = 600
)

// Name returns "gradient2".
func (Gradient2) Name() string { return "gradient2" }

// Validate reports negative fields, bounds that cross, a Tolerance below
// 1 and a Smoothing outside (0, 1].
func (g Gradient2) Validate() error {
	c := checker{kind: "Gradient2"}
	d := g.withDefaults()
	c.bounds(g.InitialLimit, d.MinLimit, d.MaxLimit, g.MinLimit, g.MaxLimit)
	c.notNegative("QueueSize", g.QueueSize)
	c.notNegative("LongWindow", g.LongWindow)
	if g.Tolerance != 0 && !(g.Tolerance >= 1) {
		c.bad("Tolerance", g.Tolerance, "must be at least 1")
	}
	if g.Smoothing != 0 && !(g.Smoothing > 0 && g.Smoothing <= 1) {
		c.bad("Smoothing", g.Smoothing, fmt.Sprintf("must be in (0, 1]"))
	}
	return c.err()
}

func (g Gradient2) withDefaults() Gradient2 {
	g.MinLimit = orDefault(g.MinLimit, DefaultGradient2MinLimit)
	g.MaxLimit = orDefault(g.MaxLimit, DefaultGradient2MaxLimit)
	g.QueueSize = orDefault(g.QueueSize, DefaultGradient2QueueSize)
	g.Tolerance = orDefault(g.Tolerance, DefaultGradient2Tolerance)
	g.Smoothing = orDefault(g.Smoothing, DefaultGradient2Smoothing)
	g.LongWindow = orDefault(g.LongWindow, DefaultGradient2LongWindow)
	return g
}

func (g Gradient2) estimator() estimator {
	cfg := g.withDefaults()
	return &gradient2{cfg: cfg, k: 2 / (float64(cfg.LongWindow) + 1)}
}

// gradient2Warmup is the number of samples whose plain mean the long rtt
// is before it becomes an exponential average, as concurrency-limits'
// ExpAvgMeasurement(longWindow, 10): seeded by one sample, an average of
// 600 would weigh each next one 0.3 %, and a fast first sample would
// hold the gradient at 0.5, and the limit at its floor, for hundreds of
// samples.
const gradient2Warmup = 10

// gradient2 is the state of a Gradient2 limit.
type gradient2 struct {
	cfg     Gradient2
	longRTT float64 // nanoseconds
	k       float64 // the long window's smoothing factor, 2/(LongWindow+1)
	// warm counts the samples of the warm-up, and warmSum sums their
	// rtts, whose mean the long rtt is until warm reaches
	// gradient2Warmup.
	warm    int
	warmSum float64
}

func (g *gradient2) bounds() (int, int) { return g.cfg.MinLimit, g.cfg.MaxLimit }
func (g *gradient2) initial() int       { return g.cfg.InitialLimit }

func (g *gradient2) update(limit float64, s Sample) float64 {
	short := float64(s.RTT)
	if g.warm < gradient2Warmup {
		g.warm++
		g.warmSum += short
		g.longRTT = g.warmSum / float64(g.warm)
	} else {
		g.longRTT = g.longRTT*(1-g.k) + short*g.k
	}
	if g.longRTT > 2*short {
		g.longRTT *= 0.95
	}
	if float64(s.InFlight) < limit/2 {
		return limit
	}
	gradient := clamp(g.cfg.Tolerance*g.longRTT/short, 0.5, 1)
	next := limit*gradient + float64(g.cfg.QueueSize)
	next = limit*(1-g.cfg.Smoothing) + next*g.cfg.Smoothing
	return clamp(next, float64(g.cfg.MinLimit), float64(g.cfg.MaxLimit))
}
