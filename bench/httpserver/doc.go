// Package httpserver measures what a guard adds to a server's request: a
// handler that writes a small body, bare, behind httpcommand.Guard
// (fixed permits; a Vegas limit) and behind failsafe-go's
// failsafehttp.NewHandler (a bulkhead; its adaptive limiter), each with
// room for every caller, so that no request is refused. BenchmarkServe
// and BenchmarkServeParallel call the handlers in process, where nothing
// hides a guard's own cost; BenchmarkLoopback sends the requests over
// loopback, where the ratio to the bare row is what a guard adds to a
// request.
//
//	go test -run '^$' -bench . -benchtime 200ms -count 3 ./httpserver
package httpserver
