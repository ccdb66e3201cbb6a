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
// errors.As.
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
// for a failure (its body closed), a bad request for another 4xx, or nil.
func classify(resp *http.Response) error {
	switch code := resp.StatusCode; {
	case failedStatus(code):
		_, _ = io.CopyN(io.Discard, resp.Body, 4<<10) // so the connection can be reused
		_ = resp.Body.Close()
		return &StatusError{StatusCode: code, Status: resp.Status, Header: resp.Header}
	case code >= 400:
		return command.BadRequest(&clientError{resp: resp})
	}
	return nil
}

// failedStatus reports whether a response's status says the server
// failed or refused the load: a 5xx or 429 Too Many Requests.
func failedStatus(code int) bool {
	return code >= 500 || code == http.StatusTooManyRequests
}
