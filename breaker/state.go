package breaker

import "strconv"

// State is the state of a [Breaker]'s state machine, Hystrix's Status.
// The zero value is Closed.
type State int

const (
	// Closed lets every request through; a health snapshot over the
	// thresholds opens it.
	Closed State = iota
	// Open rejects every request until the sleep window has passed; then
	// the first caller of AttemptExecution moves it to HalfOpen.
	Open
	// HalfOpen lets the admitted trial requests through and rejects the
	// rest; the trials' results close or re-open it.
	HalfOpen
)

// String returns Hystrix's name of the state: "CLOSED", "OPEN" or
// "HALF_OPEN".
func (s State) String() string {
	switch s {
	case Closed:
		return "CLOSED"
	case Open:
		return "OPEN"
	case HalfOpen:
		return "HALF_OPEN"
	}
	return "State(" + strconv.Itoa(int(s)) + ")"
}

// A breaker keeps everything its hot path reads in one word, so that a
// closed breaker answers AttemptExecution and AllowRequest with a single
// atomic load. The word changes only under the breaker's mutex.
//
//	bits  0-1   State
//	bit   2     forced open (Config.ForceOpen and not Disabled)
//	bit   3     allow all (Config.ForceClosed or Disabled, and not forced open)
//	bit   4     disabled
//	bit   5     throttling: Closed, with a rejection probability above zero
//	bit   6     counts runs of failures (Config.ConsecutiveFailures, not Disabled)
//	bits  8-23  trials admitted in the current HALF_OPEN episode
//	bits 24-39  trials of the current HALF_OPEN episode reported successful
const (
	stateMask     uint64 = 0x3
	forcedOpenBit uint64 = 1 << 2
	allowAllBit   uint64 = 1 << 3
	disabledBit   uint64 = 1 << 4
	throttlingBit uint64 = 1 << 5
	countsRunBit  uint64 = 1 << 6
	modeMask             = forcedOpenBit | allowAllBit | disabledBit | countsRunBit

	admittedShift = 8
	successShift  = 24
	countMask     = MaxHalfOpenTrials
)

// slowPathMask selects the bits that send AttemptExecution and
// AllowRequest off the fast path: any state but Closed, forced open, or
// throttling.
const slowPathMask = stateMask | forcedOpenBit | throttlingBit

func stateOf(w uint64) State  { return State(w & stateMask) }
func admittedOf(w uint64) int { return int(w >> admittedShift & countMask) }
func successOf(w uint64) int  { return int(w >> successShift & countMask) }

// makeWord packs a state and its trial counts with the mode bits of w.
func makeWord(mode uint64, s State, admitted, successes int) uint64 {
	return mode&modeMask | uint64(s) | uint64(admitted)<<admittedShift | uint64(successes)<<successShift
}
