// Package breaker implements the Hystrix 1.5.13 circuit breaker, driven by
// a stream of health counts.
//
// A [Breaker] does not count requests itself. It subscribes to a
// [HealthSource] (a command's metrics) whose stream emits a
// metricsstream.HealthCounts snapshot of the rolling window every
// health-snapshot interval (500ms by default), and it trips on those
// snapshots. This is how Hystrix 1.5.12+ works, and why the hot path of a
// closed breaker is a single atomic load: [Breaker.AttemptExecution] and
// [Breaker.AllowRequest] cost a few nanoseconds and allocate nothing.
//
// # State machine
//
// As HystrixCircuitBreakerImpl in Hystrix 1.5.13:
//
//   - CLOSED -> OPEN on a health snapshot with
//     Total >= RequestVolumeThreshold and ErrorPercentage >=
//     ErrorThresholdPercentage (both inclusive). Snapshots only ever open
//     a CLOSED breaker: one that arrives while OPEN or HALF_OPEN changes
//     nothing, and the stream is not reset on opening.
//   - OPEN rejects every request until more than SleepWindow has passed
//     since it opened. Then exactly one caller of AttemptExecution wins
//     OPEN -> HALF_OPEN and executes as the trial; everybody else is still
//     rejected.
//   - HALF_OPEN -> CLOSED when the trial reports MarkSuccess. The breaker
//     then calls HealthSource.ResetStream, drops its subscription and
//     subscribes again, so the failures that opened it cannot trip it
//     again. Snapshots still in flight from the old subscription are
//     ignored.
//   - HALF_OPEN -> OPEN when the trial reports MarkNonSuccess, with a new
//     sleep window: SleepWindow again, or a longer one when
//     MaxSleepWindow is set (below).
//
// AllowRequest is Hystrix's side-effect-free allowRequest; IsOpen is
// Hystrix's isOpen, true in both OPEN and HALF_OPEN. ForceOpen rejects
// everything and wins over ForceClosed, which allows everything; both
// leave the state machine running underneath, as in Hystrix. Disabled
// (circuitBreaker.enabled = false) makes a Breaker behave like [NoOp]:
// every request is allowed, results are ignored and the state stays
// CLOSED. Every field of [Config] can change on a live breaker with
// [Breaker.SetConfig], as Hystrix's dynamic properties can.
//
// # Reporting contract for callers
//
// Every AttemptExecution that returns true must be followed by exactly one
// report for that execution:
//
//   - MarkSuccess when it succeeded;
//   - MarkNonSuccess when it failed, timed out, was rejected by a pool or
//     semaphore after being admitted, or panicked;
//   - MarkCancelled when it was cancelled (unsubscribed, context done)
//     before finishing; MarkNonSuccess does as well, but counts toward a
//     run of ConsecutiveFailures;
//   - MarkIgnored when it was a bad request (counts as neither), and
//     only if it holds a half-open trial, which [Breaker.AttemptTrial]
//     tells: a request let through CLOSED that ends while the breaker is
//     HALF_OPEN would give back a trial it never held, and let a second
//     one run beside the trial still out. Such a request needs no report.
//
// AttemptExecution that returns false (a short-circuit) needs no report.
// In CLOSED and OPEN the reports do nothing (the health stream counts),
// except that a CLOSED breaker with ConsecutiveFailures counts its runs
// of failures, so the contract matters mostly for half-open trials, and
// it is what keeps a breaker from being stuck HALF_OPEN: Hystrix 1.5.12
// stayed HALF_OPEN forever when its trial was unsubscribed (fixed in
// 1.5.13 by Netflix/Hystrix#1621), 1.5.13 still does when the trial is
// rejected by the execution semaphore, and resilience4j and
// sentinel-golang have had the same hole. The reports carry no token, as
// in Hystrix: a success or failure from an execution admitted before the
// breaker opened counts as the trial's if it arrives while HALF_OPEN.
//
// As a safety net for a caller that breaks the contract, a HALF_OPEN
// breaker whose latest trial has been out for longer than
// HalfOpenTrialTimeout (SleepWindow unless set) with a trial still
// unreported re-opens, as of the moment that bound ran out, and a new
// sleep window starts. The check costs nothing on the hot path: it runs on
// the next health snapshot or the next call that finds the breaker
// HALF_OPEN, so no timer or goroutine is involved. (While the health window
// is empty no snapshot comes, so the next call notices; the re-opening
// dates from the bound either way.)
//
// # Beyond Hystrix (all opt-in or safety nets)
//
//   - HalfOpenTrials admits N concurrent trials, long asked of Hystrix; all
//     N must succeed to close, the first failure re-opens.
//   - SlowCallDuration and SlowCallRatePercentage trip on the
//     percentage of slow calls (HealthCounts.Slow), with the same volume
//     threshold, as resilience4j and sentinel do.
//   - MaxSleepWindow and SleepWindowMultiplier make the sleep window
//     grow while trials fail: each re-opening from HALF_OPEN multiplies
//     the window by SleepWindowMultiplier (2 unless set), up to
//     MaxSleepWindow, and a close starts the next trip at SleepWindow
//     again. A dependency that stays down is then probed every
//     MaxSleepWindow rather than every SleepWindow, as resilience4j's
//     exponential open-state wait, failsafe-go's delay function and
//     Polly's break-duration generator allow. SleepWindowJitter adds a
//     random time to each window, so that the trials of a fleet's
//     breakers that opened together are spread out. [Breaker.SleepWindow]
//     and [Transition].SleepWindow tell the window in force.
//   - ConsecutiveFailures trips a Closed breaker as soon as that many
//     executions in a row did not succeed, without waiting for a health
//     snapshot or for RequestVolumeThreshold: a command called a few
//     times a minute, which never reaches Hystrix's volume threshold,
//     trips too, as gobreaker's and failsafe-go's breakers do. The run is
//     counted only when the setting is on (a bit of the word says so);
//     [Transition].ConsecutiveFailures tells the run that tripped it.
//     [Breaker.MarkCancelled] reports a cancellation, which, as in
//     health, does not count.
//   - ThrottleSuccessPercentage turns on adaptive throttling, Google's
//     client-side throttling as Envoy's admission control filter has it:
//     below that success percentage a Closed breaker refuses each request
//     with a probability that grows as the success rate falls, bounded by
//     MaxThrottlePercentage (see [Config.ThrottleProbability]). A refused
//     request is short-circuited, as by an open breaker, but the breaker
//     stays Closed, and the dependency keeps a share of its traffic rather
//     than all or none of it. The probability is worked out on each health
//     snapshot, so a breaker that does not throttle still answers with one
//     load; [Breaker.ThrottleProbability] tells it.
//   - HalfOpenTrialTimeout and MarkIgnored, above.
//   - [Breaker.Transitions] streams every state change, and
//     [Breaker.State] names the state (Hystrix keeps both internal).
//   - Validate rejects impossible configurations, such as an
//     ErrorThresholdPercentage over 100, instead of running with them.
//
// # Go translations
//
// Hystrix's static per-key factory is a [Registry] with putIfAbsent
// semantics: concurrent GetOrCreate calls for one key make one breaker.
// Hystrix measures the sleep window in milliseconds; a Breaker measures it
// on its clock (WithClock) in nanoseconds, still requiring strictly more
// than SleepWindow. A Breaker owns no goroutine; [Breaker.Close] ends its
// health subscription.
package breaker
