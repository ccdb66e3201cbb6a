// Package isolation replays seed 002: a service calls 30 provincial
// systems, one of them hangs, and without isolation the calls to it pile up
// until the service can answer nobody. It measures what callers of the
// service see for calls to the 29 healthy systems with three clients:
//
//	unprotected  a plain http.Client with a 30 s timeout (the seed's setting)
//	hystrix-go   one hystrix-go command per URL: 10 s timeout, 10 concurrent
//	rxhystrix    one rxhystrix command, one worker pool of 10 per URL (the
//	             seed's threadPoolKey = URL), 10 s timeout
//
// and a no-failure baseline for each.
//
// The model. The downstream systems are HTTP servers on 127.0.0.1 (never any
// other address); a healthy one answers 200 after a random delay around
// Config.Latency, the hung one accepts connections and never answers. Callers
// send Config.Rate requests a second to the service for Config.Duration,
// round robin over the servers. The service handles at most
// Config.Capacity requests at once, as the seed's service had a bounded
// pool of connections and threads: a request waits for a free place, and
// its caller gives up after Config.Deadline. A call succeeds if the
// service answered 200 within the deadline. Latency runs from the arrival
// of the request to the answer (or to the caller giving up).
//
// Goroutines are cheap in Go, so without the capacity bound nothing would
// pile up; with it, an unprotected service fills with calls to the hung
// system (about Rate/Servers a second, each held 30 s) and then turns
// every caller away. A protected client holds at most its per-URL limit of
// places for the hung system and fails the rest fast.
//
// Every run is bounded: Rate×Duration requests, after which the calls still
// waiting on the hung system are cancelled and every server is closed.
//
// Run it with
//
//	go run ./isolation/cmd/isolation            # 20 s per run, a markdown table on stdout
//	go run ./isolation/cmd/isolation -duration 5s
//
// or, as a test, RXHYSTRIX_ISOLATION=1 go test -run Seed002 ./isolation/
// (2 s runs; without the variable the test is skipped).
package isolation
