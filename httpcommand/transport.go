package httpcommand

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/internal/keyedcommand"
)

// Transport is an [http.RoundTripper] that runs every request as a
// command of the key [WithKey] gives it (its URL's host by default), in a
// worker pool of that key; the package documentation says what it counts
// and when the command ends. Get one with [New]; it is safe for
// concurrent use.
type Transport struct {
	base     http.RoundTripper
	key      func(*http.Request) string
	failure  func(code int) bool // which statuses are failures
	commands keyedcommand.Set[*call, *http.Response]
	// faultHeader, when not "", is the header that carries a request's
	// mark for fault injection (see WithFaultHeader).
	faultHeader string
}

// New returns a Transport. Without options it sends requests with
// http.DefaultTransport, as commands of command.DefaultRegistry keyed
// by host, with Hystrix's default configuration (a 1s timeout, a pool of
// 10 workers per host) and no fallback. It panics if an option is nil.
func New(opts ...Option) *Transport {
	t := &Transport{base: http.DefaultTransport, key: Host, failure: DefaultFailureStatus}
	t.commands.Package = "httpcommand"
	t.commands.Run = t.send
	for i, o := range opts {
		if o == nil {
			panic(fmt.Sprintf("httpcommand: New: option %d is nil", i))
		}
		o.apply(t)
	}
	t.commands.BadRequests = notFailureStatus(t.failure) // an injected status (FaultStatuses)
	return t
}

// Host is the default key of a request: its URL's host in lower case,
// with the port when the URL names one other than its scheme's default
// ("api.example.com" for https://API.example.com:443/, "127.0.0.1:8080").
// However a program spells the URLs of one host, their requests are one
// command, with one breaker, one health and one pool.
func Host(req *http.Request) string {
	host := req.URL.Host
	if port := req.URL.Port(); port != "" && port == defaultPort(req.URL.Scheme) {
		host = host[:len(host)-len(port)-1]
	} else if strings.HasSuffix(host, ":") {
		host = host[:len(host)-1] // an empty port is the default one
	}
	return lowerASCII(host)
}

// defaultPort returns the port a URL of scheme means when it names none.
func defaultPort(scheme string) string {
	switch {
	case strings.EqualFold(scheme, "http"):
		return "80"
	case strings.EqualFold(scheme, "https"):
		return "443"
	}
	return ""
}

// lowerASCII returns s with its ASCII letters in lower case, s itself
// when it has none in upper case, so that a key already canonical costs
// no allocation. Host names compare without regard to case (RFC 4343);
// a name outside ASCII arrives punycoded or as the program wrote it.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// RoundTrip runs req as a command of its key and returns the response
// once its headers have arrived, its body still to be read; the package
// documentation lists the outcomes. The request's context is the
// command's: cancelling it cancels the command, and the command's
// timeout reaches the request as a cancellation of the context it is
// sent with.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil { // as http.Transport refuses it; the key and the error need the URL
		closeBody(req)
		return nil, errNilURL
	}
	key := t.key(req)
	if !command.ValidKey(key) {
		closeBody(req)
		return nil, fmt.Errorf("httpcommand: the key of a request to %s is %q: %w", req.URL.Redacted(), key, command.ErrInvalidKey)
	}
	cmd, err := t.commands.Get(key, key)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	ctx := req.Context()
	if !replayable(req) {
		ctx = command.OneAttempt(ctx)
	}
	c := &call{req: req}
	resp, err := cmd.Execute(ctx, c)
	var client *clientError
	if errors.As(err, &client) {
		resp, err = client.resp, nil
	} else if s, ok := statusOf(err); ok && command.IsBadRequest(err) {
		resp, err = s.response(req), nil // an injected status that is no failure
	}
	c.finish(resp)
	return resp, err
}

// CloseIdleConnections closes the idle connections of the transport that
// sends the requests, when it has such a method, as http.Client's does.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// errNilURL is the error of a request without a URL, which RoundTrip
// refuses before its key is asked, as http.Transport refuses it.
var errNilURL = errors.New("httpcommand: nil Request.URL")

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}
