package command

import (
	"context"
	"time"

	"golang.org/x/time/rate"

	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// rateLimiter is a key's token bucket: golang.org/x/time/rate's Limiter,
// read on the registry's clock (its methods that take the time, given the
// clock's readings in Unix nanoseconds, as the executions keep them), so
// that a manual clock drives it in tests.
type rateLimiter struct {
	l *rate.Limiter
}

// setRateLimit makes, changes or removes the key's limiter for cfg. A
// change of rate or burst applies to the existing bucket, live.
func (k *keyState) setRateLimit(cfg RateLimitConfig) {
	if !cfg.Enabled {
		k.tokens.Store(nil)
		return
	}
	now := time.Unix(0, k.registry.now())
	if rl := k.tokens.Load(); rl != nil {
		rl.l.SetLimitAt(now, rate.Limit(cfg.Rate))
		rl.l.SetBurstAt(now, cfg.burst())
		return
	}
	l := rate.NewLimiter(rate.Limit(cfg.Rate), cfg.burst())
	l.AllowN(now, 0) // starts the bucket full, now
	k.tokens.Store(&rateLimiter{l: l})
}

// admitRate takes a token of the key's limiter for the execution, waiting
// up to Config.RateLimit.MaxWait for one under ctx and callerCtx; false
// records RATE_LIMITED. Hystrix's order puts it after the breaker, so an
// open circuit spends no token, and before the permits, so a refused
// execution holds none.
func (e *execution) admitRate(ctx, callerCtx context.Context) bool {
	rl := e.k.tokens.Load()
	if rl == nil {
		return true
	}
	// The execution's start is the limiter's time: no second reading of
	// the clock (bench/peers rxhystrix-semaphore-ratelimit).
	now := time.Unix(0, e.start)
	maxWait := e.cfg.RateLimit.MaxWait
	if maxWait <= 0 {
		if rl.l.AllowN(now, 1) {
			return true
		}
		e.rateLimited()
		return false
	}
	r := rl.l.ReserveN(now, 1)
	d := r.DelayFrom(now)
	if !r.OK() || d > maxWait || !fitsDeadline(ctx, now, d) || !fitsDeadline(callerCtx, now, d) {
		r.CancelAt(now)
		e.rateLimited()
		return false
	}
	if d == 0 {
		return true
	}
	c := e.k.registry.clock
	t := c.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C():
		return true
	case <-ctx.Done():
	case <-callerCtx.Done():
	}
	r.CancelAt(time.Unix(0, e.k.registry.now()))
	e.rateLimited()
	return false
}

// fitsDeadline reports whether a wait of d from now ends before ctx's
// deadline.
func fitsDeadline(ctx context.Context, now time.Time, d time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return !ok || now.Add(d).Before(deadline)
}

// rateLimited records RATE_LIMITED: a rejection that is not counted in
// health and that the breaker does not hear of.
func (e *execution) rateLimited() { e.mark(metricsstream.RateLimited) }
