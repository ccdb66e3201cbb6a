package hystrix

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rxhystrix/rxhystrix/command"
	metricCollector "github.com/rxhystrix/rxhystrix/hystrixgo/metric_collector"
)

// How a drawn command's run ends, as the property test drives it.
type runEnd int

const (
	runEndSucceeds           runEnd = iota
	runEndFails                     // returns errRun
	runEndPanics                    // panics with "run boom"
	runEndTimesOut                  // waits; the clock passes Timeout
	runEndShortCircuited            // the circuit is forced open
	runEndRejected                  // MaxConcurrentRequests runs hold every slot
	runEndCallerLeftBefore          // the caller's context ended before the call
	runEndCallerLeavesMidRun        // the caller's context ends while run waits on it
)

var runEnds = []runEnd{runEndSucceeds, runEndFails, runEndPanics, runEndTimesOut,
	runEndShortCircuited, runEndRejected, runEndCallerLeftBefore, runEndCallerLeavesMidRun}

var runEndNames = [...]string{"succeeds", "fails", "panics", "times out", "short-circuited",
	"rejected", "caller left before", "caller leaves mid-run"}

func (r runEnd) String() string { return runEndNames[r] }

// needsContext reports whether only DoC and GoC can make r: the caller's
// context is what ends.
func (r runEnd) needsContext() bool {
	return r == runEndCallerLeftBefore || r == runEndCallerLeavesMidRun
}

// How a drawn command's fallback ends.
type fallbackEnd int

const (
	noFallbackFunc      fallbackEnd = iota
	fallbackEndSucceeds             // returns nil
	fallbackEndFails                // returns errFbFailed
	fallbackEndPanics               // panics with "fallback boom"
)

var fallbackEnds = []fallbackEnd{noFallbackFunc, fallbackEndSucceeds, fallbackEndFails, fallbackEndPanics}

var fallbackEndNames = [...]string{"no fallback", "succeeds", "fails", "panics"}

func (f fallbackEnd) String() string { return fallbackEndNames[f] }

var errFbFailed = errors.New("fallback failed")

// hystrixGoAnswer is what hystrix-go answers for a command whose run and
// fallback end as drawn: the model the property test checks the drop-in
// against.
type hystrixGoAnswer struct {
	end runEnd
	fb  fallbackEnd

	// base is the error the command fails with before any fallback
	// (nil for a panic, which only a *command.PanicError describes).
	base     error
	baseText string
	failed   bool
	// runs says whether run is called: not when the circuit refuses it
	// or the caller left first.
	runs bool
	// fallbackCalls is how often the fallback is called: once with the
	// base error when the command failed and has one.
	fallbackCalls int32
	// sendsError says whether Go's channel receives an error.
	sendsError bool
	// update is the one MetricResult each collector gets, durations
	// and ConcurrencyInUse left out.
	update metricCollector.MetricResult
}

func hystrixGoAnswerOf(end runEnd, fb fallbackEnd) hystrixGoAnswer {
	a := hystrixGoAnswer{end: end, fb: fb, failed: end != runEndSucceeds, baseText: "panic: run boom"}
	a.update.Attempts = 1
	switch end {
	case runEndSucceeds:
		a.update.Successes = 1
	case runEndFails:
		a.base = errRun
		a.update.Failures, a.update.Errors = 1, 1
	case runEndPanics:
		a.update.Failures, a.update.Errors = 1, 1
	case runEndTimesOut:
		a.base = ErrTimeout
		a.update.Timeouts, a.update.Errors = 1, 1
	case runEndShortCircuited:
		a.base = ErrCircuitOpen
		a.update.ShortCircuits, a.update.Errors = 1, 1
	case runEndRejected:
		a.base = ErrMaxConcurrency
		a.update.Rejects, a.update.Errors = 1, 1
	case runEndCallerLeftBefore, runEndCallerLeavesMidRun:
		a.base = context.Canceled
		a.update.ContextCanceled = 1
	}
	if a.base != nil {
		a.baseText = a.base.Error()
	}
	a.runs = end != runEndShortCircuited && end != runEndRejected && end != runEndCallerLeftBefore
	if a.failed && fb != noFallbackFunc {
		a.fallbackCalls = 1
		if fb == fallbackEndSucceeds {
			a.update.FallbackSuccesses = 1
		} else {
			a.update.FallbackFailures = 1
		}
	}
	a.sendsError = a.failed && fb != fallbackEndSucceeds
	return a
}

// isBase reports whether err is the base error as it is: == for
// hystrix-go's errors, run's own and the context's.
func (a hystrixGoAnswer) isBase(err error) bool {
	if a.end == runEndPanics {
		var p *command.PanicError
		return errors.As(err, &p) && p.Value == "run boom"
	}
	return err == a.base
}

// checkError returns what is wrong with the error the caller got.
func (a hystrixGoAnswer) checkError(err error) error {
	switch {
	case !a.failed || a.fb == fallbackEndSucceeds:
		if err != nil {
			return fmt.Errorf("the call answered %v; want nil", err)
		}
	case a.fb == noFallbackFunc:
		if !a.isBase(err) {
			return fmt.Errorf("the call answered %#v; want %q as it is", err, a.baseText)
		}
	case a.fb == fallbackEndFails:
		if want := fmt.Sprintf("fallback failed with 'fallback failed'. run error was '%s'", a.baseText); err == nil || err.Error() != want {
			return fmt.Errorf("the call answered %v; want %q", err, want)
		}
	case a.fb == fallbackEndPanics:
		prefix, suffix := "fallback failed with 'panic: fallback boom", fmt.Sprintf("'. run error was '%s'", a.baseText)
		if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.HasSuffix(err.Error(), suffix) {
			return fmt.Errorf("the call answered %v; want %q...%q", err, prefix, suffix)
		}
	}
	return nil
}
