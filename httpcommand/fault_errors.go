package httpcommand

import (
	"errors"
	"fmt"
)

// FaultErrors makes the error a [FaultsHandler] injects of a code of a
// protocol's, and reads it back, so that a command of that protocol's
// counts the injected error and answers its caller as it would the
// server's: grpccommand.FaultStatuses makes gRPC statuses, which a gRPC
// client's or guard's key counts by their code. A FaultErrors must be
// safe for concurrent use.
type FaultErrors interface {
	// FaultError returns the error of code with message, or an error
	// saying why code is not one of the protocol's.
	FaultError(code, message string) (error, error)
	// FaultCode returns the code and the message of err, when err is an
	// error FaultError makes.
	FaultCode(err error) (code, message string, ok bool)
}

// errNoFaultErrors is the error of a code given to a FaultsHandler that
// has no FaultErrors.
var errNoFaultErrors = errors.New("a code needs a FaultErrors of its protocol's given to FaultsHandler (grpccommand.FaultStatuses for gRPC statuses)")

// faultError returns the error of code and message, made by the first of
// codes that knows code, or an error naming why none does.
func faultError(codes []FaultErrors, code, message string) (error, error) {
	if len(codes) == 0 {
		return nil, fmt.Errorf("code %q: %w", code, errNoFaultErrors)
	}
	var why []error
	for _, c := range codes {
		err, bad := c.FaultError(code, message)
		if bad == nil {
			return err, nil
		}
		why = append(why, bad)
	}
	return nil, fmt.Errorf("code %q: %w", code, errors.Join(why...))
}

// faultCode returns the code and message of err, if one of codes made it.
func faultCode(codes []FaultErrors, err error) (code, message string, ok bool) {
	for _, c := range codes {
		if code, message, ok := c.FaultCode(err); ok {
			return code, message, true
		}
	}
	return "", "", false
}
