// Package limit adapts a concurrency limit to the latency it measures, as
// Netflix's concurrency-limits does after Hystrix: instead of a pool size
// and a permit count worked out by hand (requests a second × latency +
// spare), a [Limiter] moves the limit with the samples it is given, by
// one of three algorithms: [Vegas], [Gradient2] and [AIMD]. Samples given
// one after the other are all applied; samples given on several
// processors at once are thinned (every drop is applied, and a share of
// the others: see [Limiter]), so that recording one costs a caller about
// as much as reading the limit.
//
// A sample is one execution: its round-trip time, how many executions
// were in flight when it started, and whether it was dropped (it timed
// out). The command package feeds its pools' and semaphores' limiters
// from each execution's conclusion (see command.PoolConfig.AdaptiveLimit
// and command.Config.AdaptiveLimit); a Limiter can also be used on its
// own.
//
// # The formulas
//
// L is the current limit, kept as a real number; [Limiter.Limit] is its
// integer part. rtt is the sample's round-trip time.
//
// Vegas estimates the queue behind the limit from the shortest rtt seen,
// rtt_noload: queue = ⌈L·(1 − rtt_noload/rtt)⌉, with f = max(1, ⌊log10 L⌋),
// α = 3f, β = 6f and threshold = f. A queue at most threshold gives
// L + β, one below α gives L + f, one above β gives L − f; otherwise L
// holds. A drop gives L − f. A sample taken while fewer than L/2
// executions were in flight holds L. rtt_noload is the first sample's
// rtt, lowered by any shorter one, and re-measured (set to the sample's
// rtt) every ProbeMultiplier·L samples; a sample that sets it holds L,
// a drop too, as in Netflix's VegasLimit.
//
// Gradient2 compares the sample (the short rtt) with an exponential
// average of the last LongWindow samples (the long rtt), which is the
// plain mean of the samples until there are 10, as concurrency-limits'
// warm-up: gradient =
// clamp(0.5, 1, Tolerance·long/short), new = L·gradient + QueueSize,
// L = (1 − Smoothing)·L + Smoothing·new. When long/short exceeds 2 the
// long rtt decays by 5 %, so that it follows a lasting improvement. A
// sample taken while fewer than L/2 executions were in flight updates the
// long rtt and holds L. Drops are not part of its formula.
//
// AIMD backs off to ⌊L·BackoffRatio⌋ on a drop or an rtt over Timeout,
// and otherwise adds 1 when at least L/2 executions were in flight.
//
// Every algorithm clamps L into [MinLimit, MaxLimit] after each update.
//
// # Why not a library
//
// github.com/platinummonkey/go-concurrency-limits ports these
// algorithms to Go, but its limits take samples through listeners and
// loggers and its Vegas probes rtt_noload after a random number of
// samples; here a sample is one call under a mutex, with no allocation,
// on whatever clock the caller measured rtt with (a manual clock in
// tests), and an update is deterministic, so that a test can check each
// step against the formula. The algorithms are a few lines each;
// depending on a module for them would put an integration dependency
// into the command package's hot path.
package limit
