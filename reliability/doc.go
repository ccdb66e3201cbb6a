// Package reliability breaks things on purpose and checks that commands
// hold up. It holds tests only; they run with the rest of the module
// (go test -race ./...), on 127.0.0.1 and nowhere else.
//
// Faults come from real loopback HTTP servers read by a client that parses
// JSON: a server that hangs, one that answers too late, a port where
// nothing listens, connections reset once the request is read, 503
// answers and bodies that are not JSON. For each fault, with worker pools
// per URL and with semaphores, the tests check that the command records
// the right events (TIMEOUT for the hang and the slow server, FAILURE with
// the fault's own error for the others), that the circuit breaker opens
// and fallbacks serve meanwhile, that the command recovers once the server
// is healed (the sleep window passes, the trial succeeds, the breaker
// closes), and that calls to a healthy server of the same group keep
// their latency all along: none is rejected, short-circuited, timed out or
// served by a fallback. A control run without per-URL pools shows the
// healthy calls starving, so the isolation checks can fail. The Hystrix
// dashboard stream of the same registry, read over loopback with ?delay=,
// shows the faulty circuit open and the healthy one closed, then both
// closed, and ends when its reader leaves. These tests
// run on the real clock, with timeouts of 200ms, a 200ms sleep window and
// 20ms health snapshots; they wait for states by polling with a deadline,
// never by sleeping.
//
// Load: 200,000 executions over 64 goroutines with random outcomes
// (success, failure, timeout, bad request, panic), through Execute, Queue
// and ToObservable, under pool and under semaphore isolation, on a manual
// clock that the timed-out runs move themselves. Afterwards every
// execution is counted exactly once, as its caller saw it; the concurrent
// count is back to 0; every execution, fallback and pool permit is back
// (as many calls as there are permits hold them all at once); and no
// goroutine is left.
//
// Bad input is covered by the fuzz targets of the packages themselves
// (command, breaker, metricsstream, observable/rxgo), which run as ordinary
// tests on their seed corpora.
package reliability
