package command

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// FaultConfig injects faults into a key's executions, so that a team can
// see in earnest that the key's timeout, fallback, circuit breaker and
// isolation hold before its downstream fails by itself: Netflix's Failure
// Injection Testing, which failed Hystrix commands of chosen requests,
// Envoy's fault filter and Polly's chaos strategies do the same.
//
// A fault stands in for the user's code (a Command's run, an
// ObservableCommand's Observable), where the downstream would fail, so
// that everything around it works as for a real failure: a delay holds
// the execution's permit or pool worker and runs into its timeout, and an
// injected error is a FAILURE that the fallback answers and the breaker
// counts. Both are drawn for each execution, the delay first, as in
// Envoy: an execution may be delayed and then fail. The key's status
// counts the faults injected (metricsstream.CommandStatus.Faults), and the
// streams, Prometheus, OpenTelemetry, the dashboard and the health show
// them, so that nobody takes them for the downstream's.
//
// Configure switches faults on and off live. Nothing is drawn while
// Enabled is false: an execution then pays one test of the flag.
type FaultConfig struct {
	// Enabled turns the injection on.
	Enabled bool
	// DelayPercentage is the share, 0 to 100, of the executions whose
	// user code starts Delay late. The delay waits under the execution's
	// context, on the registry's clock: a timeout or a caller that leaves
	// ends it, and the user's code is then not called.
	DelayPercentage float64
	// Delay is how late a delayed execution's user code starts; it must
	// be positive when DelayPercentage is.
	Delay time.Duration
	// ErrorPercentage is the share, 0 to 100, of the executions whose
	// user code is not called: the execution fails with Error instead.
	ErrorPercentage float64
	// Error is the error of a failed execution's user code; nil means
	// ErrInjectedFault. An Error that is a BadRequest, or that a
	// command's WithBadRequests picks, is a bad request, as the user's
	// own would be.
	Error error
	// MarkedOnly limits the faults to the executions whose context
	// WithFaultInjection marked for the key, so that only chosen
	// requests (a test's, a canary's) meet them.
	MarkedOnly bool
	// Until, when not zero, ends the faults at that time of the
	// registry's clock, as if Enabled were false from then on: an
	// injection started for a game day stops by itself, even if nobody
	// turns it off, as a chaos experiment has a duration.
	Until time.Time
}

// ErrInjectedFault is the error of an execution that FaultConfig failed,
// unless FaultConfig.Error says otherwise.
var ErrInjectedFault = errors.New("command: injected fault")

// The kinds of fault FaultConfig injects, by which keyState.faults counts
// them.
const (
	faultDelay = iota
	faultError
	numFaultKinds
)

func (c FaultConfig) validate() error {
	// Each field is checked whether Enabled or not: a disabled config is
	// reported on the streams as it is, and is one Configure away from
	// being on. Only a delay of 0 that would be drawn waits for Enabled,
	// so that a delay turned off by 0 may keep its percentage.
	switch {
	case !(c.DelayPercentage >= 0 && c.DelayPercentage <= 100):
		return invalidConfig("command: Config.Faults.DelayPercentage: %v is not within [0, 100]", c.DelayPercentage)
	case c.Delay < 0:
		return invalidConfig("command: Config.Faults.Delay: %v is negative", c.Delay)
	case c.Enabled && c.Delay == 0 && c.DelayPercentage > 0:
		return invalidConfig("command: Config.Faults.Delay: 0 with DelayPercentage %v: a delay must be positive", c.DelayPercentage)
	case !(c.ErrorPercentage >= 0 && c.ErrorPercentage <= 100):
		return invalidConfig("command: Config.Faults.ErrorPercentage: %v is not within [0, 100]", c.ErrorPercentage)
	}
	return nil
}

// activeAt reports whether the faults are injected at now: enabled, and
// not past Until.
func (c *FaultConfig) activeAt(now time.Time) bool {
	return c.Enabled && (c.Until.IsZero() || now.Before(c.Until))
}

// faultMarkKey is the context key of WithFaultInjection's mark.
type faultMarkKey struct{}

// faultMark is the keys a context is marked for; nil names every key.
type faultMark struct{ keys []string }

// WithFaultInjection returns a copy of ctx whose executions meet the
// faults of the keys named, or of every key when none is named, that
// inject them into marked executions only (FaultConfig.MarkedOnly). A
// later mark replaces an earlier one. It panics if ctx is nil.
//
// The mark is a context value: pool workers, fallbacks and the calls the
// user's code makes with its context carry it, and httpcommand's
// WithFaultHeader and grpccommand's WithFaultMetadata carry it to the
// downstream services, in a header or gRPC metadata.
func WithFaultInjection(ctx context.Context, keys ...string) context.Context {
	if ctx == nil {
		panic("command: WithFaultInjection with nil ctx")
	}
	if len(keys) == 0 {
		keys = nil // none named, as by an empty slice: every key
	}
	return context.WithValue(ctx, faultMarkKey{}, &faultMark{keys: slices.Clone(keys)})
}

// FaultInjectionOf reports whether ctx is marked by WithFaultInjection,
// and the keys it names (none for every key). A nil ctx is not marked.
func FaultInjectionOf(ctx context.Context) (keys []string, marked bool) {
	if ctx == nil {
		return nil, false
	}
	m, _ := ctx.Value(faultMarkKey{}).(*faultMark)
	if m == nil {
		return nil, false
	}
	return slices.Clone(m.keys), true
}

// marks reports whether the mark names key; a nil mark names no key.
func (m *faultMark) marks(key string) bool {
	return m != nil && (m.keys == nil || slices.Contains(m.keys, key))
}

// injectFault draws the faults of f for one execution of k whose user code
// would run under ctx. It waits out a delay drawn, and returns the error
// the execution's user code stands for: ctx's error if ctx ended during
// the delay, or f's error if one is drawn. When it returns nil, the
// user's code runs.
func (k *keyState) injectFault(ctx context.Context, f *FaultConfig) error {
	now := k.registry.clock.Now()
	if !f.activeAt(now) {
		return nil
	}
	if f.MarkedOnly {
		m, _ := ctx.Value(faultMarkKey{}).(*faultMark)
		if !m.marks(k.key) {
			return nil
		}
	}
	if k.registry.drawn(f.DelayPercentage) {
		traceDelay(ctx, k.key, now, f.Delay)
		if err := k.delay(ctx, f.Delay); err != nil {
			return err
		}
	}
	if k.registry.drawn(f.ErrorPercentage) {
		k.faults[faultError].Add(1)
		err := f.Error
		if err == nil {
			err = ErrInjectedFault
		}
		traceError(ctx, k.key, k.registry.clock.Now(), err)
		return err
	}
	return nil
}

// callUser calls a Command's run for an execution under cfg, unless a
// fault of cfg.Faults stands in for it. It is small enough to be inlined
// into invoke (see there): a command that neither injects faults nor
// picks bad requests pays one test for both.
func (c *core[In, Out]) callUser(ctx context.Context, cfg *Config, in In) (Out, error) {
	if cfg.Faults.Enabled || c.isBad != nil {
		return c.callJudged(ctx, cfg, in)
	}
	return callRun(c.run, ctx, in)
}

// callJudged is callUser for a command that injects faults or picks bad
// requests: the error that stands in for run's, or run's, is judged
// (core.judge).
func (c *core[In, Out]) callJudged(ctx context.Context, cfg *Config, in In) (Out, error) {
	if cfg.Faults.Enabled {
		if err := c.k.injectFault(ctx, &cfg.Faults); err != nil {
			var zero Out
			return zero, c.judge(ctx, err)
		}
	}
	v, err := callRun(c.run, ctx, in)
	return v, c.judge(ctx, err)
}

// body returns an ObservableCommand's Observable for an execution under
// cfg: the user's, or one that fails at once when a fault of cfg.Faults
// stands in for it. A delay drawn is waited out before the user's
// Observable is made, on the goroutine that subscribes it, as a
// downstream slow to answer would hold it. The Observable's error is
// judged (core.judge) when the command picks bad requests.
func (c *core[In, Out]) body(ctx context.Context, cfg *Config, in In) observable.Observable[Out] {
	if cfg.Faults.Enabled {
		if err := c.k.injectFault(ctx, &cfg.Faults); err != nil {
			return observable.Error[Out](c.judge(ctx, err))
		}
	}
	src := constructBody(c.construct, ctx, in)
	if c.isBad != nil {
		src = src.OnErrorResumeNext(func(err error) observable.Observable[Out] {
			return observable.Error[Out](c.judge(ctx, err))
		})
	}
	return src
}

// drawn reports whether an event of the given percentage happens this
// time: always at 100, never at 0, else by a draw of the registry's
// random numbers (WithRand).
func (r *Registry) drawn(percentage float64) bool {
	switch {
	case percentage <= 0:
		return false
	case percentage >= 100:
		return true
	}
	return r.rand() < percentage/100
}

// delay waits d on k's registry's clock, or until ctx ends: it returns
// ctx's error then, else nil. It counts the delay, even when ctx has
// already ended, and once its timer is armed, so that a test that sees
// the count may move a manual clock past it.
func (k *keyState) delay(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		k.faults[faultDelay].Add(1)
		return err
	}
	t := k.registry.clock.NewTimer(d)
	defer t.Stop()
	k.faults[faultDelay].Add(1)
	select {
	case <-t.C():
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// faultStatus reports cfg's faults and those injected into k's
// executions.
func (k *keyState) faultStatus(cfg *Config) metricsstream.FaultStatus {
	f := &cfg.Faults
	return metricsstream.FaultStatus{
		Enabled:         f.activeAt(k.registry.clock.Now()),
		Until:           f.Until,
		DelayPercentage: f.DelayPercentage,
		Delay:           f.Delay,
		ErrorPercentage: f.ErrorPercentage,
		MarkedOnly:      f.MarkedOnly,
		Delays:          k.faults[faultDelay].Load(),
		Errors:          k.faults[faultError].Load(),
	}
}
