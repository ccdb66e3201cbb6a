// Package fleet lets the circuit breakers of a command key trip and
// recover on the health of every instance of a service, shared through
// Redis, instead of on this instance's traffic alone.
//
// A breaker of package breaker trips on a stream of health snapshots. A
// [Source] is such a stream: every health snapshot interval it writes
// this instance's newly closed health buckets to Redis, reads the other
// instances' buckets of the same command key and rolling window, and
// sends the breaker their sum. So an instance with little traffic opens
// with the rest of the fleet when the downstream is dead, and a
// downstream that fails a little everywhere trips every instance once the
// fleet's volume crosses the threshold. Keys opt in one by one
// ([Config.Keys]); every other key keeps its own metrics, as in Hystrix:
//
//	rdb := redis.NewClient(&redis.Options{Addr: addr, ContextTimeoutEnabled: true})
//	f, err := fleet.New(fleet.Config{Client: rdb, Instance: hostname, Keys: []string{"GetUser"}})
//	...
//	defer f.Close()
//	reg := command.NewRegistry(command.WithHealthSource(f.HealthSource))
//
// # Each instance decides for itself
//
// No instance writes a state or a flag for the others to obey, as
// gobreaker's distributed breaker does with a shared state: each writes
// the counts it saw, and each breaker judges their sum on its own
// thresholds and runs its own sleep window and trials. The snapshot a
// Source sends is the fleet's sum, except when this instance's own
// health trips the breaker's thresholds and the fleet's does not: then
// it is this instance's own. A fault that only this instance sees (its
// own network, say) thus opens its breaker alone, as the local breaker
// would, while in the fleet's sum it weighs only as much as this
// instance's share of the traffic, so one bad instance cannot trip the
// others. The breaker's thresholds are read live ([command.KeyHealth]
// Breaker, judged by [breaker.Config.Trips]). Since a fleet's breakers
// open together on the fleet's sum, their sleep windows end together:
// breaker.Config.SleepWindowJitter spreads their trials, and the traffic
// that follows a close, over a time the downstream can take. A breaker
// that throttles (breaker.Config.ThrottleSuccessPercentage) throttles on
// the snapshot it is sent: on the fleet's sum, every instance refuses the
// same share of its calls, by the success rate the whole fleet sees,
// where each alone would judge a few calls of its own.
//
// # Buckets in Redis
//
// A bucket is named by its fleet index, the Unix time of its start
// divided by the health snapshot interval, in a Redis hash
// <prefix>{<key>}:<interval>:<index> whose fields are instances and whose
// values are "total errors slow" (a value that is not, or that counts
// more errors or slow calls than executions, is left out of the sum and
// counted in [Stats].Corrupt). One script call per interval writes
// the buckets and reads the sums back: one Redis operation per key, per
// instance and per interval (two a second at Hystrix's 500ms), and three
// numbers per bucket back whatever the fleet's size. The braces put a
// key's buckets in one Redis Cluster slot. Each exchange writes every
// closed bucket of the window, not only the new ones, so that a Redis
// that lost them (restarted empty, failed over to a replica behind,
// evicted them) has them again an interval later. A bucket expires two
// intervals after it leaves the window, and a write only ever lengthens
// its expiry, so that an instance of a shorter window (during a deploy
// that changes it) does not cut the others'; an instance that stops
// leaves nothing behind once its buckets are out of every window. Only
// buckets that hold executions are written: a key with no traffic
// writes nothing, and still reads.
//
// The keys name the command key, not the service: services that share a
// Redis and have command keys in common need a Config.Prefix each, or
// they add up each other's health.
//
// # Clock skew
//
// An instance reads the window's closed buckets by its own clock and the
// bucket in progress as well, which an instance whose clock runs up to
// one bucket ahead has closed already; an instance up to one bucket
// behind writes each bucket one interval later, and its oldest bucket
// leaves the reader's window one interval early. Up to one bucket of
// skew thus changes the fleet's volume by at most a bucket per instance
// at the window's edges and moves nothing out of the window; the error
// percentage, a ratio, hardly moves. A few buckets of skew sum windows
// that overlap less; a skew as long as the window leaves instances that
// no longer read each other's buckets at all, each judging on its own
// health and the others it still overlaps: keep the clocks in step (NTP)
// well within the window. Each exchange measures how far this instance's
// clock is from Redis's ([Stats].ClockSkew, and the Collector's
// rxhystrix_fleet_clock_skew_seconds): alert when it nears an interval.
//
// # ResetStream
//
// Hystrix resets a breaker's health counts when the breaker closes, so
// that the failures that opened it cannot open it again. The other
// instances' buckets are theirs and cannot be erased, so a Source's
// ResetStream makes it count only buckets that began at the reset or
// later, its own and the fleet's alike. The key's metrics keep their
// health window (this instance's buckets must stay in Redis for the
// others), so the dashboard's error percentage of the key is not reset
// as it would be with a local breaker.
//
// # When Redis fails
//
// Nothing an execution does touches Redis: the exchanges run in the
// Source's goroutine, each bounded by [Config.Timeout] and by the
// command's health snapshot interval. When an exchange
// fails (Redis slow, unreachable, restarted), the Source sends the
// breaker this instance's own health, counts the failure and says so in
// [Source.Stats] and the [Fleet.Collector]'s metrics. The next exchange that
// succeeds writes the window again and still judges on local health: the
// instances that exchange later in the interval may not have written
// theirs yet, and a sum of a few of them (a bad instance's window alone,
// say) could trip the breaker. The one after reads the fleet's sum. An
// exchange that succeeds but finds that Redis lost this instance's
// buckets since the one before (restarted empty between them, failed
// over to a replica behind, evicted them) does the same: the others have
// not written theirs again yet either. An instance with no traffic in
// its window, which writes no bucket, learns it from a mark that each
// of its exchanges writes.
package fleet
