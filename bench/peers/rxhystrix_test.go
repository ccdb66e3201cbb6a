package peers

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/limit"
	"github.com/rxhystrix/rxhystrix/observable"
)

// rxhystrixRuns numbers the command keys: commands with the same key share
// a breaker, metrics and isolation, so every run takes a key of its own.
var rxhystrixRuns atomic.Int64

// rxhystrixShort reports whether err is a short-circuit.
func rxhystrixShort(err error) bool { return errors.Is(err, command.ErrShortCircuited) }

// rxhystrixRow builds a row whose command is configured by config for
// callers callers and executed by exec.
func rxhystrixRow(name string, config func(key string, callers int) command.Config, exec executeBy, failingOnly bool) row {
	return row{
		name:        name,
		failingOnly: failingOnly,
		prepare: func(_ testing.TB, callers int, w work) func() error {
			key := fmt.Sprintf("peers-%s-%d", name, rxhystrixRuns.Add(1))
			run := func(ctx context.Context, _ int) (int, error) { return w(ctx) }
			call := exec(key, func(perCaller int) command.Config { return config(key, perCaller*callers) }, run)
			return func() error { return checkValue(call()) }
		},
		shortCircuited: rxhystrixShort,
	}
}

// executeBy makes the command (or commands) of a row, of key around run,
// configured by config with the permits (or pool slots) each caller
// needs, and returns one call of it.
type executeBy func(key string, config func(perCaller int) command.Config, run func(context.Context, int) (int, error)) func() (int, error)

// The ways a row executes: each of the command's modes.
var (
	byExecute executeBy = func(key string, config func(int) command.Config, run func(context.Context, int) (int, error)) func() (int, error) {
		cmd := command.New(key, run, command.WithConfig(config(1)))
		ctx := context.Background()
		return func() (int, error) { return cmd.Execute(ctx, 0) }
	}
	byExecuteInRequest executeBy = func(key string, config func(int) command.Config, run func(context.Context, int) (int, error)) func() (int, error) {
		cmd := command.New(key, run, command.WithConfig(config(1)))
		return func() (v int, err error) {
			err = inRequest(func(ctx context.Context) (err error) {
				v, err = cmd.Execute(ctx, 0)
				return err
			})
			return v, err
		}
	}
	byToObservable executeBy = func(key string, config func(int) command.Config, run func(context.Context, int) (int, error)) func() (int, error) {
		cmd := command.New(key, run, command.WithConfig(config(1)))
		ctx := context.Background()
		return func() (int, error) { return cmd.ToObservable(ctx, 0).First(ctx) }
	}
	byQueue executeBy = func(key string, config func(int) command.Config, run func(context.Context, int) (int, error)) func() (int, error) {
		cmd := command.New(key, run, command.WithConfig(config(1)))
		ctx := context.Background()
		return func() (int, error) { return cmd.Queue(ctx, 0).Get(ctx) }
	}
	byObserve executeBy = func(key string, config func(int) command.Config, run func(context.Context, int) (int, error)) func() (int, error) {
		cmd := command.New(key, run, command.WithConfig(config(1)))
		ctx := context.Background()
		return func() (int, error) { return cmd.Observe(ctx, 0).First(ctx) }
	}
	// byZip2 zips two commands of the key and returns the first's value.
	// They share its permits and pool, so each caller holds two; and when
	// one fails, the other is cancelled but keeps its slot until its run
	// returns, so each caller has four.
	byZip2 executeBy = func(key string, config func(int) command.Config, run func(context.Context, int) (int, error)) func() (int, error) {
		a := command.New(key, run, command.WithConfig(config(4)))
		b := command.New(key, run)
		ctx := context.Background()
		first := func(x, _ int) int { return x }
		return func() (int, error) {
			return observable.Zip2(a.ToObservable(ctx, 0), b.ToObservable(ctx, 0), first).First(ctx)
		}
	}
	// byExecuteTwice executes byZip2's two commands one after the other:
	// the two executions a zip of them cannot do without, each Execute's
	// hand-off to a worker in a pool, as a floor for its row.
	byExecuteTwice executeBy = func(key string, config func(int) command.Config, run func(context.Context, int) (int, error)) func() (int, error) {
		a := command.New(key, run, command.WithConfig(config(4)))
		b := command.New(key, run)
		ctx := context.Background()
		return func() (int, error) {
			v, err := a.Execute(ctx, 0)
			if err != nil {
				return v, err
			}
			_, err = b.Execute(ctx, 0)
			return v, err
		}
	}
	// byObservableCommand is an ObservableCommand of Just(run's value).
	// First unsubscribes at the value (the execution is EMIT, CANCELLED,
	// as Hystrix's take(1) of an observable command), and under pool
	// isolation the worker frees its slot as it unwinds, just after First
	// returns: a caller may start its next executions while its last still
	// holds one, so each caller has four.
	byObservableCommand executeBy = func(key string, config func(int) command.Config, run func(context.Context, int) (int, error)) func() (int, error) {
		cmd := command.NewObservable(key, func(ctx context.Context, in int) observable.Observable[int] {
			v, err := run(ctx, in)
			if err != nil {
				return observable.Error[int](err)
			}
			return observable.Just(v)
		}, command.WithConfig(config(4)))
		ctx := context.Background()
		return func() (int, error) { return cmd.ToObservable(ctx, 0).First(ctx) }
	}
)

// semaphore returns a semaphore-isolated configuration with timeout
// (negative: none) that admits callers concurrent executions.
func semaphore(timeout time.Duration) func(string, int) command.Config {
	return func(_ string, callers int) command.Config {
		return command.Config{
			Isolation:             command.SemaphoreIsolation,
			Timeout:               timeout,
			MaxConcurrentRequests: callers,
		}
	}
}

// pool returns a pool-isolated configuration with timeout (negative:
// none) whose pool has a worker for each of callers callers.
func pool(timeout time.Duration) func(string, int) command.Config {
	return func(key string, callers int) command.Config {
		mustConfigurePool(key, command.PoolConfig{CoreSize: callers})
		return command.Config{Pool: key, Isolation: command.PoolIsolation, Timeout: timeout}
	}
}

// adaptive returns config with an adaptive limit of algorithm a that
// never falls below the callers (so that no call is rejected, as in every
// row) and may rise to twice as many: the permits under semaphore
// isolation, the pool's workers otherwise.
func adaptive(config func(string, int) command.Config, a func(callers int) limit.Algorithm) func(string, int) command.Config {
	return func(key string, callers int) command.Config {
		cfg := config(key, callers)
		if cfg.Isolation == command.SemaphoreIsolation {
			cfg.AdaptiveLimit = a(callers)
			return cfg
		}
		mustConfigurePool(key, command.PoolConfig{CoreSize: callers, AdaptiveLimit: a(callers)})
		return cfg
	}
}

// mustConfigurePool configures the pool of key, panicking if cfg is
// refused: a refused adaptive limit would otherwise leave the fixed pool
// in place and its row measure the row it is compared with.
func mustConfigurePool(key string, cfg command.PoolConfig) {
	if err := command.ConfigurePool(key, cfg); err != nil {
		panic(fmt.Sprintf("peers: ConfigurePool(%q): %v", key, err))
	}
}

// The adaptive limits of the rows, between callers and twice as many.
var (
	vegasRow     = func(n int) limit.Algorithm { return limit.Vegas{MinLimit: n, MaxLimit: 2 * n} }
	gradient2Row = func(n int) limit.Algorithm { return limit.Gradient2{MinLimit: n, MaxLimit: 2 * n} }
	aimdRow      = func(n int) limit.Algorithm { return limit.AIMD{MinLimit: n, MaxLimit: 2 * n} }
)

// with returns config changed by f.
func with(config func(string, int) command.Config, f func(*command.Config)) func(string, int) command.Config {
	return func(key string, callers int) command.Config {
		cfg := config(key, callers)
		f(&cfg)
		return cfg
	}
}

// The policies of the resilience rows: a retry policy (on passing work no
// retry happens), a hedge whose delay is never reached, and a rate limit
// that always admits.
var (
	retryRow = func(c *command.Config) { c.Retry = command.RetryConfig{MaxAttempts: 3} }
	hedgeRow = func(c *command.Config) { c.Hedge = command.HedgeConfig{MaxHedges: 1, Delay: time.Second} }
	limitRow = func(c *command.Config) {
		c.RateLimit = command.RateLimitConfig{Enabled: true, Rate: 1e9, Burst: 1e6}
	}
)

// The rows register in the order of the tables, Execute's first:
// benchreport divides every row by the table's first rxhystrix row (its
// "× rxhystrix-…" column), which must be rxhystrix-semaphore, the plain
// Execute, and not a variant. The init functions of one file run in their
// order; the drop-in's row, in a file of its own, is appended here last
// rather than by an init of its file, which would run before these.
func init() {
	ourRows = append(ourRows,
		rxhystrixRow("rxhystrix-semaphore", semaphore(-1), byExecute, false),
		rxhystrixRow("rxhystrix-semaphore-timeout", semaphore(time.Second), byExecute, false),
		// CoreSize slots for as many callers, and no queue: a slot is free
		// again before its caller gets the result. With hystrix-go's
		// default 1 s timeout, and without one, as cep21-go runs.
		rxhystrixRow("rxhystrix-pool", pool(time.Second), byExecute, false),
		rxhystrixRow("rxhystrix-pool-no-timeout", pool(-1), byExecute, false),
		rxhystrixRow("rxhystrix-forced-open", func(key string, callers int) command.Config {
			cfg := semaphore(-1)(key, callers)
			cfg.Breaker = breaker.Config{ForceOpen: true}
			return cfg
		}, byExecute, true),
	)
	// Every other way of executing a command, in both isolations: the
	// semaphore without a timeout, the pool with its 1 s one.
	for _, iso := range []struct {
		name   string
		config func(string, int) command.Config
	}{{"semaphore", semaphore(-1)}, {"pool", pool(time.Second)}} {
		for _, m := range []struct {
			name string
			exec executeBy
		}{
			{"toobservable", byToObservable},
			{"queue", byQueue},
			{"observe", byObserve},
			{"zip2", byZip2},
			{"execute-twice", byExecuteTwice},
			{"observable-command", byObservableCommand},
		} {
			ourRows = append(ourRows, rxhystrixRow("rxhystrix-"+iso.name+"-"+m.name, iso.config, m.exec, false))
		}
	}
	// Execute under a request's context, with a 1 s timeout.
	ourRows = append(ourRows,
		rxhystrixRow("rxhystrix-semaphore-timeout-request", semaphore(time.Second), byExecuteInRequest, false),
		rxhystrixRow("rxhystrix-pool-request", pool(time.Second), byExecuteInRequest, false),
	)
	// Queue and Observe of a semaphore-isolated command with a timeout,
	// whose execution a waiting caller never takes over.
	ourRows = append(ourRows,
		rxhystrixRow("rxhystrix-semaphore-timeout-queue", semaphore(time.Second), byQueue, false),
		rxhystrixRow("rxhystrix-semaphore-timeout-observe", semaphore(time.Second), byObserve, false),
	)
}

func init() {
	retried := func(name string, config func(string, int) command.Config, exec executeBy) row {
		r := rxhystrixRow(name, with(config, retryRow), exec, false)
		r.passingOnly = true
		return r
	}
	ourRows = append(ourRows,
		retried("rxhystrix-semaphore-retry", semaphore(-1), byExecute),
		rxhystrixRow("rxhystrix-semaphore-hedge", with(semaphore(-1), hedgeRow), byExecute, false),
		rxhystrixRow("rxhystrix-semaphore-ratelimit", with(semaphore(-1), limitRow), byExecute, false),
		retried("rxhystrix-pool-retry", pool(time.Second), byExecute),
		rxhystrixRow("rxhystrix-pool-hedge", with(pool(time.Second), hedgeRow), byExecute, false),
		rxhystrixRow("rxhystrix-pool-ratelimit", with(pool(time.Second), limitRow), byExecute, false),
	)
	// An ObservableCommand retried and hedged: the stream forms of the
	// operators, whose hedges race for the first value.
	ourRows = append(ourRows,
		retried("rxhystrix-semaphore-observable-command-retry", semaphore(-1), byObservableCommand),
		rxhystrixRow("rxhystrix-semaphore-observable-command-hedge", with(semaphore(-1), hedgeRow), byObservableCommand, false),
		retried("rxhystrix-pool-observable-command-retry", pool(time.Second), byObservableCommand),
		rxhystrixRow("rxhystrix-pool-observable-command-hedge", with(pool(time.Second), hedgeRow), byObservableCommand, false),
	)
}

func init() {
	ourRows = append(ourRows,
		rxhystrixRow("rxhystrix-semaphore-vegas", adaptive(semaphore(-1), vegasRow), byExecute, false),
		rxhystrixRow("rxhystrix-semaphore-gradient2", adaptive(semaphore(-1), gradient2Row), byExecute, false),
		rxhystrixRow("rxhystrix-semaphore-aimd", adaptive(semaphore(-1), aimdRow), byExecute, false),
		rxhystrixRow("rxhystrix-pool-vegas", adaptive(pool(time.Second), vegasRow), byExecute, false),
		rxhystrixRow("rxhystrix-pool-no-timeout-vegas", adaptive(pool(-1), vegasRow), byExecute, false),
	)
}

func init() { ourRows = append(ourRows, rxhystrixHystrixgoRow()) }
