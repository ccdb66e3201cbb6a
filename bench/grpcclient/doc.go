// Package grpcclient measures what grpccommand's client interceptors add
// to a unary gRPC call: a small request answered by a loopback server,
// sent by a bare connection and by one through the interceptor (a command
// per downstream and method, in a pool of its own, or under a semaphore).
// A command's call carries its timeout as a deadline, which gRPC sends to
// the server, which times the call with it: bare is the bare call under a
// context with a 1s timeout, the base the interceptor's rows compare
// with, and bare-no-deadline the bare call without one. The ratios are
// the interceptor's overhead on a call whose own cost is a loopback round
// trip. BenchmarkServerStream does the same for a server stream of three
// messages through the stream interceptor.
//
//	go test -run '^$' -bench . -benchtime 200ms -count 3 ./grpcclient
package grpcclient
