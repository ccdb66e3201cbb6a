package httpcommand

import (
	"errors"
	"io"
	"net/http"
)

// replayable reports whether req may be sent more than once, by a retry
// or a hedge of its key (command.Config.Retry, Config.Hedge): its method
// is idempotent (RFC 9110's GET, HEAD, OPTIONS, TRACE, PUT and DELETE) or
// it carries an Idempotency-Key (or X-Idempotency-Key) header, and its
// body, if it has one, can be made again (GetBody, which
// http.NewRequest sets for a bytes.Buffer, bytes.Reader or strings.Reader
// body). Any other request is sent once (command.OneAttempt).
func replayable(req *http.Request) bool {
	switch req.Method {
	case "", http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace, http.MethodPut, http.MethodDelete:
	default:
		if req.Header.Get("Idempotency-Key") == "" && req.Header.Get("X-Idempotency-Key") == "" {
			return false
		}
	}
	return bodyReplayable(req)
}

// bodyReplayable reports whether req's body can be sent again: it has
// none, or GetBody makes it again.
func bodyReplayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// errBodyNotReplayable is the error of an attempt after the first of a
// request whose body cannot be made again; replayable keeps such a
// request to one attempt.
var errBodyNotReplayable = errors.New("httpcommand: the request's body cannot be sent again (it has no GetBody)")

// bodyAgain returns req's body for an attempt after the first.
func bodyAgain(req *http.Request) (io.ReadCloser, error) {
	switch {
	case !bodyReplayable(req):
		return nil, errBodyNotReplayable
	case req.GetBody == nil:
		return req.Body, nil // none
	}
	return req.GetBody()
}
