// Package httpclient measures what httpcommand.Transport adds to an HTTP
// request: a GET of a small body from a loopback server, sent by a bare
// http.Transport and by httpcommand.Transport over the same one (a
// command per host, in a pool of its own). The ratio of the two rows is
// the transport's overhead on a request whose own cost is a loopback
// round trip.
//
//	go test -run '^$' -bench . -benchtime 200ms -count 3 ./httpclient
package httpclient
