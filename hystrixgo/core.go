package hystrix

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// core is what the commands of one name run on: the rxhystrix commands of
// its key, with and without a fallback, and the key's breaker and
// metrics. A core lives as long as its engine; Flush keeps it.
type core struct {
	name, key     string
	plain, withFb *command.Command[call, struct{}]
	breaker       *breaker.Breaker
	metrics       *metricsstream.CommandMetrics
	reg           *command.Registry // whose metrics hold the pool's
	maxConcurrent atomic.Int64
}

// call is one command: run and fallback in either of hystrix-go's forms
// (with or without a context), and where to record what happened when
// the circuit has collectors.
type call struct {
	run       func() error
	runC      func(context.Context) error
	fallback  func(error) error
	fallbackC func(context.Context, error) error
	caller    context.Context // the caller's, which run's context ends with (see runContext)
	rec       *record
	fbOut     *fallbackOutcome // set when there is a fallback
}

// fallbackOutcome is what the fallback returned, once it has run: the
// command drops it when the caller's context ends while the fallback
// runs, and hystrix-go still returns it (and calls the fallback only once).
type fallbackOutcome struct {
	err error // written before ran is set
	ran atomic.Bool
}

// record is what a command's collectors are told beyond its error. The
// run may still be running when the caller reads it (after a timeout),
// so its fields are atomic.
type record struct {
	runDuration atomic.Int64 // nanoseconds
	kind        atomic.Int32 // the outcome of run, when a fallback ran
	fallback    atomic.Int32 // fallbackSucceeded or fallbackFailed
}

const (
	fallbackSucceeded = 1 + iota
	fallbackFailed
)

// coreFor returns the core of name, making it on first use.
func (e *engine) coreFor(name string) *core {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c := e.cores[name]; c != nil {
		return c
	}
	s := e.settingsFor(name)
	key := keyOf(name)
	cfg, pool := commandConfig(key, s)
	if err := e.reg.ConfigurePool(key, pool); err != nil {
		logf("hystrix: %q: %v", name, err)
	}
	clk := e.reg.Clock()
	run := func(ctx context.Context, c call) (struct{}, error) {
		var start time.Time
		if c.rec != nil {
			start = clk.Now()
		}
		var err error
		if c.runC != nil {
			runCtx, returned := runContextOf(ctx, c.caller)
			err = c.runC(runCtx)
			returned()
		} else {
			err = c.run()
		}
		if c.rec != nil {
			c.rec.runDuration.Store(int64(clk.Since(start)))
		}
		return struct{}{}, err
	}
	plain := command.New(key, run, command.WithRegistry(e.reg), command.WithConfig(cfg))
	c := &core{
		name:    name,
		key:     key,
		plain:   plain,
		withFb:  plain.WithFallback(fallbackOf),
		breaker: plain.Breaker(),
		metrics: plain.Metrics(),
		reg:     e.reg,
	}
	c.maxConcurrent.Store(int64(s.MaxConcurrentRequests))
	e.cores[name] = c
	return c
}

// fallbackOf is the fallback of every command: it calls the user's with
// the error hystrix-go would give it, and reports a failed fallback in
// hystrix-go's words.
func fallbackOf(ctx context.Context, c call, err error) (struct{}, error) {
	runErr := translate(err)
	if c.rec != nil {
		c.rec.kind.Store(int32(kindOf(err)))
	}
	fbErr := callFallbackRecovering(ctx, c, runErr)
	if c.fbOut != nil {
		c.fbOut.err = fbErr
		c.fbOut.ran.Store(true)
	}
	return struct{}{}, fbErr
}

// callFallback calls the user's fallback with runErr and returns nil or
// the error hystrix-go returns for a fallback that failed.
func callFallback(ctx context.Context, c call, runErr error) error {
	if c.rec != nil {
		c.rec.fallback.Store(fallbackFailed) // until it returns: it may panic
	}
	var fbErr error
	if c.fallbackC != nil {
		fbErr = c.fallbackC(ctx, runErr)
	} else {
		fbErr = c.fallback(runErr)
	}
	if c.rec != nil && fbErr == nil {
		c.rec.fallback.Store(fallbackSucceeded)
	}
	if fbErr != nil {
		return fallbackFailure(fbErr, runErr)
	}
	return nil
}

// fallbackFailure is hystrix-go's error for a fallback that failed.
func fallbackFailure(fbErr, runErr error) error {
	return fmt.Errorf("fallback failed with '%v'. run error was '%v'", fbErr, runErr)
}

// translate returns the error hystrix-go gives for an rxhystrix
// command's error: run's own error, or ErrTimeout, ErrCircuitOpen or
// ErrMaxConcurrency as they are, or a context's error as it is.
func translate(err error) error {
	e, ok := err.(*command.Error)
	if !ok {
		return err
	}
	switch e.Failure {
	case command.TimeoutFailure:
		return ErrTimeout
	case command.ShortCircuitFailure:
		return ErrCircuitOpen
	case command.PoolRejectedFailure, command.SemaphoreRejectedFailure:
		return ErrMaxConcurrency
	}
	return e.Cause
}
