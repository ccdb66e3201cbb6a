// Package adaptive replays seed 004's sizing scenario against fixed pools
// and adaptive limits, side by side, in compressed real time.
//
// Service A calls service B through a pool-isolated rxhystrix command
// with a fallback. B answers in 200ms, slows down to 500ms for 20 s, then
// recovers; A's callers keep arriving at the same rate throughout (an
// open loop: a slow B does not slow the arrivals). The scenario lasts
// 60 s: 10 s before B slows down, 20 s slow, 30 s after.
//
// B has a finite capacity for A's calls: it works on at most Capacity of
// them at once and queues the others in arrival order, which is what
// makes a too-large pool harmful: at 500ms B serves fewer calls a second
// than A sends, its queue grows, and every call waits behind it. B stops
// work on a call whose caller has left (timed out), in its queue or in
// service, as an HTTP server that honours its request's context does.
//
// Each row is one A and one B, with a registry of its own, run at the
// same time as the other rows of its variant, so that a slow spell of the
// machine falls on every row alike. The rows:
//
//   - the seed's pair: the rule's pool (rate × 0.2 s + 4) and a 300ms timeout;
//   - a too-small pool: half of it, same timeout;
//   - a too-large pool: ten times it, with the default 1 s timeout;
//   - each adaptive limit (Vegas, Gradient2, AIMD) with its defaults, on
//     a pool of the default size (its starting point) and the default 1 s
//     timeout: nothing tuned by hand.
//   - each adaptive limit again with the seed's 300ms timeout: the pool
//     untuned, the timeout the seed's, so that every figure compares
//     with the pair's at the same timeout.
//
// Every pool has Hystrix's default queue (none): a call that finds no
// free worker is rejected and answered by the fallback.
//
// Two variants: the seed's 30 requests/s, with B able to work on 12 of
// A's calls at once, and the seed's 6,000 requests/s over 60 machines, one
// machine's share: 100 requests/s, B able to work on 40. Both give B
// about 80 % of the capacity A needs while it is slow, and ample when it
// is not.
//
// Time is compressed by Scale (5 by default: a 60 s scenario runs in
// 12 s, B's 200ms is 40ms, the seed's 300ms timeout 60ms), and every
// figure is reported in scenario time. A larger Scale runs faster but
// leaves the seed's pair less margin between B's latency and its
// timeout, which the scheduler's delays on a busy machine then eat. The figures: the calls B answered, as a percentage of all calls
// and of those that arrived while B was slow; the calls the fallback
// answered; the median and 99th percentile of what A's callers waited for
// an answer from B; how long after B recovered the service is back to
// full throughput: the start of the first of three one-second windows in
// a row that each have at least 95 % of their calls answered by B; and
// the least and greatest pool size seen while B was slow.
package adaptive
