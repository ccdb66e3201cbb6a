package command

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// rateLimiter is a key's token bucket, as the generic cell rate algorithm
// keeps it: one word, the theoretical arrival time of the next execution
// (tat), moved on by a compare-and-swap per admitted execution. It admits
// what golang.org/x/time/rate's Limiter would, burst executions at once
// and then one per 1/rate, and it is written here rather than taken from
// x/time/rate because that Limiter takes a mutex on every call, which 75
// callers of one key queue on (bench/peers rxhystrix-semaphore-ratelimit,
// 75 callers: 2.1× Execute with the Limiter, about 1.1× with this). Times
// are the registry clock's readings in Unix nanoseconds, as an
// execution's, so a manual clock drives it in tests.
//
// tat is the key metrics' AdmissionWord, on the cache line of the count
// of executions in flight, which the execution writes next.
type rateLimiter struct {
	tat    *atomic.Int64
	params atomic.Pointer[rateParams]
}

// rateParams are a limiter's interval between executions and its
// tolerance: how far ahead of now tat may run, (burst−1) intervals.
type rateParams struct{ interval, tolerance int64 }

// wait returns how long an execution that comes at now waits for its
// place when the next is at tat.
func (p *rateParams) wait(tat, now int64) time.Duration {
	return time.Duration(max(tat-p.tolerance-now, 0))
}

// nextPlace returns how long from now until the bucket admits an
// execution at once.
func (l *rateLimiter) nextPlace(now int64) time.Duration {
	return l.params.Load().wait(l.tat.Load(), now)
}

// maxRateSpan bounds a limiter's interval and tolerance (about 31 years),
// so that a tiny rate or a huge burst cannot overflow the time arithmetic.
const maxRateSpan = 1e18

func paramsOf(cfg RateLimitConfig) *rateParams {
	interval := math.Min(math.Max(1, math.Round(float64(time.Second)/cfg.Rate)), maxRateSpan)
	tolerance := math.Min(float64(cfg.burst()-1)*interval, maxRateSpan)
	return &rateParams{interval: int64(interval), tolerance: int64(tolerance)}
}

// setRateLimit makes, changes or removes the key's limiter for cfg. A
// change of rate or burst applies to the key's bucket, live, and so does
// a limit switched off and on again: the bucket, its word in the key's
// metrics, is as the last admission left it (full, after a pause of
// burst/rate), and an execution admitted before the switch that gives
// its place back gives it to that bucket. k.metrics must be set.
func (k *keyState) setRateLimit(cfg RateLimitConfig) {
	if !cfg.Enabled {
		k.tokens.Store(nil)
		return
	}
	rl := k.bucket
	if rl == nil {
		rl = &rateLimiter{tat: k.metrics.AdmissionWord()}
		rl.params.Store(paramsOf(cfg))
		k.bucket = rl
	} else {
		rl.setParams(paramsOf(cfg), k.registry.now())
	}
	k.tokens.Store(rl)
}

// burst returns the executions p admits at once.
func (p *rateParams) burst() float64 { return float64(p.tolerance)/float64(p.interval) + 1 }

// setParams changes l's rate and burst at now, as golang.org/x/time/rate's
// SetLimit and SetBurst do: the tokens the bucket holds at now are kept
// (up to the new burst; fewer than none while places are taken ahead),
// and come back at the new rate from now on. The tat the old params left
// stands for intervals of the old rate, which must not be read as
// intervals of the new one: a rate raised from one a minute would
// otherwise admit nothing until the minute is up.
func (l *rateLimiter) setParams(p *rateParams, now int64) {
	old := l.params.Swap(p)
	if *old == *p {
		return
	}
	for {
		tat := l.tat.Load()
		if tat <= now {
			return // a full bucket, whatever the burst
		}
		missing := float64(tat-now) / float64(old.interval) // tokens short of the old burst
		short := max(p.burst()-old.burst()+missing, 0)      // of the new burst
		next := now + int64(math.Min(short*float64(p.interval), 4*maxRateSpan))
		if l.tat.CompareAndSwap(tat, next) {
			return
		}
	}
}

// ratePlace is a place reserve took: the tat it found and the tat it
// left, so that cancel can tell whether a later place was taken since.
type ratePlace struct{ found, left int64 }

// reserve takes the next execution's place at now (Unix nanoseconds), if
// it is due within maxWait, and returns when it was taken, how long it
// must wait for it, and the place. now is the execution's start, read
// before it got here: a caller the scheduler kept waiting since may find
// its reading further behind the places others took than the burst
// allows, so before refusing, reserve asks clock for the time again. (A
// reading a little behind admits nothing early: the place it takes is at
// or after the latest one taken.)
func (l *rateLimiter) reserve(now int64, clock func() int64, maxWait time.Duration) (taken int64, wait time.Duration, place ratePlace, ok bool) {
	p := l.params.Load()
	fresh := false
	for {
		tat := l.tat.Load()
		at := max(tat, now)
		wait = p.wait(at, now)
		if wait > maxWait {
			if !fresh {
				now, fresh = clock(), true
				continue
			}
			return now, wait, ratePlace{}, false
		}
		if at > math.MaxInt64-p.interval {
			// The next place would be past the longest time, and wrap
			// around to the past: none is taken, however long the
			// execution may wait (a MaxWait of "for ever" at a tiny rate).
			return now, time.Duration(math.MaxInt64), ratePlace{}, false
		}
		if next := at + p.interval; l.tat.CompareAndSwap(tat, next) {
			return now, wait, ratePlace{found: tat, left: next}, true
		}
	}
}

// cancel gives back a place reserve took, for an execution that no
// longer waits for it, when no later place was taken since: the bucket
// is then as if the place had never been taken. A later place stays
// where it is, and so the next call queues behind it, as with
// golang.org/x/time/rate's Reservation.Cancel, which restores no token a
// later reservation was made against; moving the bucket back under it
// instead would start two executions at that later place.
func (l *rateLimiter) cancel(p ratePlace) { l.tat.CompareAndSwap(p.left, p.found) }

// admitRate takes the execution's place in the key's rate limit, waiting
// up to Config.RateLimit.MaxWait for it under ctx and callerCtx. It
// returns noFailure once the execution has its place; RateLimitedFailure,
// recorded RATE_LIMITED, when there is none within the bound or the
// caller's deadline; and runCancelled when ctx or callerCtx ends during
// the wait: the place goes back, and the execution ends CANCELLED, with
// no fallback, as Hystrix's does when its subscriber leaves while it
// waits in a pool's queue. Hystrix's order puts it after the breaker, so
// an open circuit spends no place, and before the permits, so a refused
// execution holds none.
func (e *execution) admitRate(ctx, callerCtx context.Context) FailureType {
	rl := e.k.tokens.Load()
	if rl == nil {
		return noFailure
	}
	now, wait, place, ok := rl.reserve(e.start, e.k.registry.now, e.cfg.RateLimit.MaxWait)
	if ok && wait > 0 && (!fitsDeadline(ctx, e.k.registry.clock, now, wait) || !fitsDeadline(callerCtx, e.k.registry.clock, now, wait) || !e.fitsTimeout(now, wait)) {
		rl.cancel(place)
		ok = false
	}
	if !ok {
		e.rateLimited()
		return RateLimitedFailure
	}
	if wait == 0 {
		return noFailure
	}
	e.waitedForToken = true // its end is read from the clock (see endTime)
	t := e.k.registry.clock.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C():
		// The run starts after the wait: an adaptive limit samples the
		// run's latency, not the rate limiter's (see sampleLimit).
		e.runStart = e.k.registry.now()
		return noFailure
	case <-ctx.Done():
	case <-callerCtx.Done():
	}
	rl.cancel(place)
	return runCancelled
}

// fitsTimeout reports whether a wait of d from now (Unix nanoseconds)
// ends before the execution's timeout, which runs from its start: a wait
// past it would only end in a TIMEOUT, which the breaker counts, where a
// refusal is a RATE_LIMITED, which it does not.
func (e *execution) fitsTimeout(now int64, d time.Duration) bool {
	return e.cfg.Timeout <= 0 || now-e.start+int64(d) < int64(e.cfg.Timeout)
}

// fitsDeadline reports whether a wait of d from now (Unix nanoseconds as
// c reads them) ends before ctx's deadline, placed on c's time line.
func fitsDeadline(ctx context.Context, c clock.Clock, now int64, d time.Duration) bool {
	deadline, ok := ctx.Deadline()
	return !ok || now+int64(d) < clock.UnixNanoOf(c, deadline)
}

// rateLimited records RATE_LIMITED: a rejection that is not counted in
// health and that the breaker does not hear of as a failure. A half-open
// trial the limiter refuses never runs, so its trial is given back, as a
// bad request's is: the breaker must not stay HALF_OPEN with no trial in
// flight.
func (e *execution) rateLimited() {
	e.mark(metricsstream.RateLimited)
	e.badRequestForBreaker()
}
