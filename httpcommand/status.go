package httpcommand

import (
	"fmt"
	"io"
	"net/http"

	"github.com/rxhystrix/rxhystrix/command"
)

// StatusError is the failure of a request whose response says the
// server failed or refused the load: a 5xx status or 429 Too Many
// Requests. Its response has been read (up to 4 KB) and closed; the
// fallback gets it as the cause of the command's error, found with
// errors.As. It is also the error of a status injected in the server's
// place ([FaultStatuses]), of any status of 400 to 599.
type StatusError struct {
	StatusCode int         // 503, say
	Status     string      // "503 Service Unavailable"
	Header     http.Header // the response's
}

// Error says what the server answered.
func (e *StatusError) Error() string { return "httpcommand: the server answered " + e.Status }

// clientError carries a response with another 4xx status through the
// command as a bad request: it is not counted in the breaker's health,
// gets no fallback, and the caller gets the response as it is.
type clientError struct{ resp *http.Response }

func (e *clientError) Error() string { return fmt.Sprintf("the server answered %s", e.resp.Status) }

// classify returns the error a response is counted as: a *StatusError
// for a failure by failure (its body closed), a bad request for another
// status of 400 or more, or nil.
func classify(resp *http.Response, failure func(code int) bool) error {
	switch code := resp.StatusCode; {
	case failure(code):
		_, _ = io.CopyN(io.Discard, resp.Body, 4<<10) // so the connection can be reused
		_ = resp.Body.Close()
		return &StatusError{StatusCode: code, Status: resp.Status, Header: resp.Header}
	case code >= 400:
		return command.BadRequest(&clientError{resp: resp})
	}
	return nil
}

// DefaultFailureStatus reports whether a response's status code says
// the server failed or refused the load, a 5xx or 429 Too Many Requests:
// the statuses a [Transport] counts as failures unless
// [WithFailureStatus] says otherwise, and a [Guard] unless its
// FailureStatus does.
func DefaultFailureStatus(code int) bool {
	return code >= 500 || code == http.StatusTooManyRequests
}
