package httpcommand

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// FaultStatuses makes the errors [FaultsHandler] injects HTTP statuses,
// as Envoy's fault filter aborts a request with a status:
// {"code":"503"} injects a *StatusError of 503 Service Unavailable, which
// stands in for the server's answer of that status.
//
//   - On a [Transport]'s key, a status of failure (DefaultFailureStatus,
//     or WithFailureStatus's) is a FAILURE whose cause is the
//     *StatusError, as the server's answer is; another is a bad request,
//     and the caller gets a response of that status, without a body.
//   - A [Guard] answers the request with the status, and counts it as
//     its FailureStatus says, as it counts the handler's.
//
// A code is a status of 400 to 599; the fault has no message.
var FaultStatuses FaultErrors = faultStatuses{}

type faultStatuses struct{}

// FaultError returns the *StatusError of the status code names.
func (faultStatuses) FaultError(code, message string) (error, error) {
	n, err := strconv.Atoi(code)
	switch {
	case err != nil || n < 400 || n > 599:
		return nil, errors.New("not an HTTP status of 400 to 599")
	case message != "":
		return nil, fmt.Errorf("an HTTP status has no message (error %q)", message)
	}
	return injectedStatus(n), nil
}

// FaultCode returns the code of a *StatusError.
func (faultStatuses) FaultCode(err error) (string, string, bool) {
	s, ok := statusOf(err)
	if !ok {
		return "", "", false
	}
	return strconv.Itoa(s.StatusCode), "", true
}

// injectedStatus is the *StatusError of status code, as a server's
// answer without a header would make it.
func injectedStatus(code int) *StatusError {
	return &StatusError{StatusCode: code, Status: strconv.Itoa(code) + " " + http.StatusText(code), Header: http.Header{}}
}

// statusOf returns the *StatusError in err, if there is one.
func statusOf(err error) (*StatusError, bool) {
	var s *StatusError
	ok := errors.As(err, &s)
	return s, ok
}

// notFailureStatus returns the predicate of a key's bad requests among
// the errors injected in its run's place: a *StatusError whose status
// failure does not count. A *StatusError that run returns is always of a
// failure status.
func notFailureStatus(failure func(code int) bool) func(error) bool {
	return func(err error) bool {
		s, ok := statusOf(err)
		return ok && !failure(s.StatusCode)
	}
}

// response is the response of an injected status that is a bad request,
// which the caller of a Transport gets as the server's.
func (e *StatusError) response(req *http.Request) *http.Response {
	return &http.Response{
		Status: e.Status, StatusCode: e.StatusCode,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: e.Header.Clone(), Body: http.NoBody, ContentLength: 0, Request: req,
	}
}
