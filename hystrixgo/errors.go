package hystrix

// CircuitError is the error of a command the circuit did not let run, or
// did not let finish: ErrMaxConcurrency, ErrCircuitOpen or ErrTimeout.
// They are returned as they are, never wrapped, so that == compares them.
type CircuitError struct {
	Message string
}

// Error returns "hystrix: " and the message.
func (e CircuitError) Error() string { return "hystrix: " + e.Message }

var (
	// ErrMaxConcurrency is returned when MaxConcurrentRequests commands
	// of the name are running already.
	ErrMaxConcurrency = CircuitError{Message: "max concurrency"}
	// ErrCircuitOpen is returned when the circuit is open.
	ErrCircuitOpen = CircuitError{Message: "circuit open"}
	// ErrTimeout is returned when run has not returned within Timeout.
	ErrTimeout = CircuitError{Message: "timeout"}
)
