// Package grpcclient measures what grpccommand's client interceptor adds
// to a unary gRPC call: a small request answered by a loopback server,
// sent by a bare connection and by one through the interceptor (a
// command per downstream and method, in a pool of its own). The ratio of
// the two rows is the interceptor's overhead on a call whose own cost is
// a loopback round trip.
//
//	go test -run '^$' -bench . -benchtime 200ms -count 3 ./grpcclient
package grpcclient
