// Package peers benchmarks one command execution of rxhystrix side by side
// with the Go circuit breakers it is measured against: cep21/circuit v4,
// afex/hystrix-go, sony/gobreaker v2 and failsafe-go, with a direct call as
// the floor.
//
// The matrix reproduces cep21/circuit's own benchmark (the circuit-benchmarks
// repository): every implementation is run with work that passes and with
// work that fails, by 1 and by 75 concurrent callers. Names are built so a
// script can pair rows across implementations:
//
//	BenchmarkCircuits/<passing|failing>/c=<callers>/<row>
//
// Run it from bench/ with
//
//	go test -run='^$' -bench=Circuits -benchmem ./peers/
//
// BenchmarkBudgets measures rxhystrix's performance budgets, each a row
// against a base row of this matrix (rxhystrix-semaphore-toobservable
// against rxhystrix-semaphore, say), with 1 and 75 callers on passing
// work. It runs the two rows in alternating turns of about 10 ms, 100
// of each, and reports the median of the ratios of each pair of turns
// (×base), with their quartiles (×base-q1, ×base-q3), beside the
// budget's limit (limit×), so that a machine whose speed drifts from
// minute to minute, as a shared one does, weighs on both rows alike. Run
// it once per budget:
//
//	go test -run='^$' -bench=Budgets -benchtime=1x ./peers/
//
// What differs from cep21's harness, and why:
//
//   - The callers are started and parked before b.ResetTimer, so neither
//     circuit construction nor goroutine start-up is timed.
//   - b.N is split exactly across the callers (cep21 drops the remainder,
//     so a 75-caller run with b.N < 75 does no work).
//   - Every result is checked: a passing call must return nil (and, for
//     the generic implementations, the value the work returned); a failing
//     call must return the work's error or the implementation's
//     short-circuit error. Anything else fails the benchmark, but for a
//     passing call that rxhystrix timed out: 75 callers that never block,
//     on two processors, are preempted and one now and then waits past a
//     1 s timeout for its turn, so those are reported as late/op, up to
//     one call in a hundred thousand.
//   - Failing rows report shorted/op, the fraction of calls that were
//     short-circuited. Breakers trip at different points (hystrix-go and
//     rxhystrix after 20 requests at 50 % errors, and rxhystrix only at its
//     next health snapshot; gobreaker after 6 consecutive failures;
//     cep21 Minimal after 10; failsafe-go after 1; cep21 Hystrix after 20
//     at 50 %), so a failing row mostly times the short-circuit path, and
//     shorted/op says how much.
//
// The rows:
//
//	direct                   the work called directly: the floor
//	direct-handoff           the work called on a goroutine of its own, waited for: the floor of a hand-off
//	direct-go                the work called directly beside a go statement: what a go statement per Queue would add
//	cep21-minimal            Execute, no timeout, 10-consecutive-errors opener
//	cep21-hystrix            Execute, Hystrix opener and closer, rolling stats, 1 s timeout
//	cep21-go                 Go (a goroutine per call), no timeout, never opens (as cep21's UseGo)
//	cep21-go-timeout         the same with a 1 s timeout
//	cep21-hystrix-request    cep21-hystrix called under a request's context (a context.WithCancel of its own per call)
//	cep21-go-timeout-request cep21-go-timeout called under a request's context
//	hystrix-go               Do, default settings but MaxConcurrentRequests 100000 (as cep21 does)
//	gobreaker                Execute with the zero Settings
//	failsafe-cb              a default circuit breaker (opens on 1 failure)
//	failsafe-cb-timeout      the same breaker around a 1 s timeout policy
//	failsafe-retry           the default breaker around the default retry policy (three attempts; passing only, so nothing is retried)
//	failsafe-hedge           the default breaker around a hedge policy whose 1 s delay is never reached
//	failsafe-ratelimit       the default breaker around a bursty rate limiter that always admits
//	rxhystrix-semaphore      Execute, semaphore isolation, no timeout
//	rxhystrix-semaphore-timeout  the same with a 1 s timeout
//	rxhystrix-pool           Execute, pool isolation (a slot per caller, no queue), 1 s timeout
//	rxhystrix-pool-no-timeout    the same without a timeout
//	rxhystrix-semaphore-timeout-request  rxhystrix-semaphore-timeout called under a request's context
//	rxhystrix-pool-request   rxhystrix-pool called under a request's context
//	rxhystrix-forced-open    a forced-open breaker: the short-circuit path alone (failing only)
//	rxhystrix-semaphore-vegas    rxhystrix-semaphore with an adaptive Vegas limit between the callers and twice as many
//	rxhystrix-semaphore-gradient2  the same with Gradient2
//	rxhystrix-semaphore-aimd     the same with AIMD
//	rxhystrix-pool-vegas     rxhystrix-pool with an adaptive Vegas limit on the workers, between the callers and twice as many
//	rxhystrix-pool-no-timeout-vegas  the same without a timeout
//	rxhystrix-semaphore-retry    rxhystrix-semaphore with Config.Retry of three attempts (passing only)
//	rxhystrix-semaphore-hedge    rxhystrix-semaphore with one hedge whose 1 s delay is never reached
//	rxhystrix-semaphore-ratelimit  rxhystrix-semaphore with a rate limit that always admits
//	rxhystrix-pool-retry, rxhystrix-pool-hedge, rxhystrix-pool-ratelimit  the same on rxhystrix-pool
//	rxhystrix-semaphore-observable-command-retry, -hedge  the observable-command mode below, retried and hedged as rxhystrix-semaphore-retry and -hedge
//	rxhystrix-pool-observable-command-retry, -hedge  the same on rxhystrix-pool
//
// and every other way of executing a command, each in semaphore isolation
// without a timeout (rxhystrix-semaphore-MODE) and in pool isolation with
// the 1 s timeout (rxhystrix-pool-MODE):
//
//	toobservable             ToObservable(...).First
//	queue                    Queue(...).Get
//	observe                  Observe(...).First
//	zip2                     Zip2 of two commands' ToObservable, First
//	execute-twice            Execute of zip2's two commands, one after the other: its floor
//	observable-command       an ObservableCommand of Just(the work's value), ToObservable(...).First
//
// and Queue and Observe in semaphore isolation with the 1 s timeout
// (rxhystrix-semaphore-timeout-queue, -observe): with a timeout the waiting
// caller takes the execution over but hands run to a goroutine of its own,
// so that it is answered at the timeout: the one hand-off Queue and
// Observe may cost beyond Execute (compare direct-handoff).
//
// cep21/circuit and hystrix-go take work that returns only an error, so
// their rows check only the error; the generic implementations return the
// work's int, and their rows check it.
//
// As in cep21's harness, the concurrency limit of every implementation that
// has one is the number of callers, so no call is rejected.
package peers
