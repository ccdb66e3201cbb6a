package grpccommand

import (
	"fmt"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/rxhystrix/rxhystrix/httpcommand"
)

// FaultStatuses makes the errors httpcommand.FaultsHandler injects gRPC
// statuses, as Envoy's fault filter aborts a call with a gRPC status:
// {"code":"Unavailable","error":"draining"} is status.Error(codes.Unavailable,
// "draining"), which a client's or a guard's key counts by its code as
// the server's status (a failure code a FAILURE, another a bad request),
// and which the caller gets as the server's.
//
//	adminMux.Handle("/faults", httpcommand.FaultsHandler(command.DefaultRegistry, grpccommand.FaultStatuses))
//
// A code is named as Go names it ("Unavailable", "NotFound"), as gRPC's
// specification names it ("UNAVAILABLE", "NOT_FOUND"), or by its number
// ("14"). OK is not a fault.
var FaultStatuses httpcommand.FaultErrors = faultStatuses{}

type faultStatuses struct{}

// FaultError returns the status of code with message.
func (faultStatuses) FaultError(name, message string) (error, error) {
	code, ok := codeNamed(name)
	switch {
	case !ok:
		return nil, fmt.Errorf("not a gRPC status code")
	case code == codes.OK:
		return nil, fmt.Errorf("OK is not a fault")
	}
	return status.Error(code, message), nil
}

// FaultCode returns the code, as Go names it, and the message of a gRPC
// status error.
func (faultStatuses) FaultCode(err error) (string, string, bool) {
	s, ok := status.FromError(err)
	if !ok || s.Code() == codes.OK {
		return "", "", false
	}
	return s.Code().String(), s.Message(), true
}

// codeNamed returns the code of name.
func codeNamed(name string) (codes.Code, bool) {
	for c := codes.OK; c <= codes.Unauthenticated; c++ {
		if name == c.String() {
			return c, true
		}
	}
	var c codes.Code
	if n, err := strconv.ParseUint(name, 10, 32); err == nil {
		return codes.Code(n), n <= uint64(codes.Unauthenticated)
	}
	if err := c.UnmarshalJSON([]byte(strconv.Quote(name))); err == nil {
		return c, true
	}
	return 0, false
}
