// Package fleet measures what package fleet costs an instance: a passing
// Execute with a key on the fleet's health next to one on its own, and
// the exchange with Redis that the key's source makes every health
// snapshot interval, with the Redis operations it sends. The benchmarks
// start their own redis-server (Debian's redis-server package).
//
//	go test -run='^$' -bench=Fleet -benchtime=200ms ./fleet/
//
// Tables:
//
//	Fleet/execute-passing   Execute of a passing semaphore-isolated
//	                        command, beside a redis-server and a Fleet:
//	                        rxhystrix with the key on its own metrics (not
//	                        among the Fleet's Keys), rxhystrix-fleet with
//	                        the key on the fleet's health, its source
//	                        exchanging with Redis every 100ms meanwhile
//	                        (health buckets of 100ms in both rows). The
//	                        execution path does not touch Redis, so the two
//	                        should match.
//	Fleet/exchange          one health interval of a source: write this
//	                        instance's new bucket, read the window's
//	                        buckets of the other instances (2 or 59 of
//	                        them, 20 buckets each) and send the breaker
//	                        the sum, in wall time; redis-ops/exchange is
//	                        the commands the client sent, and
//	                        redis-ops/instance/s what that makes at
//	                        Hystrix's 500ms interval.
package fleet
