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
//	                        command: rxhystrix on the key's own metrics,
//	                        rxhystrix-fleet with the key on the fleet's
//	                        health, its source exchanging with a real Redis
//	                        every 500ms meanwhile. The execution path does
//	                        not touch Redis, so the two should match.
//	Fleet/exchange          one health interval of a source: write this
//	                        instance's new bucket, read the window's
//	                        buckets of the other instances (2 or 59 of
//	                        them, 20 buckets each) and send the breaker
//	                        the sum, in wall time; redis-ops/exchange is
//	                        the commands the client sent, and
//	                        redis-ops/instance/s what that makes at
//	                        Hystrix's 500ms interval.
package fleet
