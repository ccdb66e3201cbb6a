package breaker

// NoOp returns a CircuitBreaker that allows every request, is never open
// and ignores results: Hystrix's NoOpCircuitBreaker, for code that wants
// a CircuitBreaker that never intervenes (a command whose Config has
// Breaker.Disabled does not ask its breaker at all). It also has the
// MarkIgnored and MarkCancelled methods of [Breaker], so that code that
// reports those outcomes to a Breaker can report them to it alike. It is
// safe for concurrent use.
func NoOp() CircuitBreaker { return noOp{} }

type noOp struct{}

func (noOp) AllowRequest() bool     { return true }
func (noOp) AttemptExecution() bool { return true }
func (noOp) IsOpen() bool           { return false }
func (noOp) MarkSuccess()           {}
func (noOp) MarkNonSuccess()        {}
func (noOp) MarkIgnored()           {}
func (noOp) MarkCancelled()         {}
