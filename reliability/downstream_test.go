package reliability

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// The settings of the fault tests: small enough that a breaker trips,
// sleeps and recovers within a fraction of a second of real time.
const (
	faultyTimeout   = 200 * time.Millisecond
	healthyTimeout  = time.Second // generous: a healthy call never nears it
	sleepWindow     = 200 * time.Millisecond
	healthInterval  = 20 * time.Millisecond
	poolSize        = 4 // workers per URL, and semaphore permits
	faultyCallers   = poolSize
	faultyPeriod    = 5 * time.Millisecond // per caller
	healthyCallers  = 2
	healthyPeriod   = 2 * time.Millisecond // per caller
	stateDeadline   = 10 * time.Second     // how long a test waits for a state before failing
	statePollPeriod = time.Millisecond
)

// downstreamConfig is the configuration of the commands of the fault
// tests: every downstream in one group, so that without per-URL pools
// they would share the group's pool.
func downstreamConfig(isolation command.Isolation, timeout time.Duration) command.Config {
	return command.Config{
		Group:                         "downstreams",
		Isolation:                     isolation,
		Timeout:                       timeout,
		MaxConcurrentRequests:         poolSize,
		FallbackMaxConcurrentRequests: 64,
		Breaker: breaker.Config{
			RequestVolumeThreshold:   10,
			ErrorThresholdPercentage: 50,
			SleepWindow:              sleepWindow,
		},
		Metrics: metricsstream.Config{
			RollingWindow:          time.Second,
			Buckets:                10,
			HealthSnapshotInterval: healthInterval,
		},
	}
}

// answer is what a downstream call returns: the server's reply, or the
// fallback's answer saying why the command did not get one.
type answer struct {
	reply
	Fallback bool
	Failure  command.FailureType
}

// downstream is a command calling one server, with a fallback that
// records what each failure was and whether run's error was the one the
// fault should cause.
type downstream struct {
	srv *faultServer
	cmd *command.Command[string, answer]

	// wantCause says whether run's error is the fault's; nil accepts any.
	wantCause func(error) bool

	failures    [8]atomic.Int64 // by FailureType, as the fallback saw them
	wrongCauses atomic.Int64
	wrongCause  atomic.Pointer[error]
}

// newDownstream makes the command key of srv in r. With perURL, a
// pool-isolated command runs each call in the pool named by its URL.
func newDownstream(r *command.Registry, client *jsonClient, srv *faultServer, key string, cfg command.Config, perURL bool) *downstream {
	d := &downstream{srv: srv}
	run := func(ctx context.Context, url string) (answer, error) {
		r, err := client.get(ctx, url)
		return answer{reply: r}, err
	}
	d.cmd = command.New(key, run, command.WithRegistry(r), command.WithConfig(cfg)).WithFallback(d.fallback)
	if perURL {
		d.cmd = d.cmd.WithPoolKey(func(url string) string { return url })
	}
	return d
}

func (d *downstream) fallback(_ context.Context, _ string, err error) (answer, error) {
	var cmdErr *command.Error
	if !errors.As(err, &cmdErr) {
		d.noteWrongCause(fmt.Errorf("fallback got %T, want *command.Error: %w", err, err))
		return answer{Fallback: true, Failure: -1}, nil
	}
	d.failures[cmdErr.Failure].Add(1)
	if cmdErr.Failure == command.CommandFailure && d.wantCause != nil && !d.wantCause(cmdErr.Cause) {
		d.noteWrongCause(cmdErr.Cause)
	}
	return answer{Fallback: true, Failure: cmdErr.Failure}, nil
}

func (d *downstream) noteWrongCause(err error) {
	d.wrongCauses.Add(1)
	d.wrongCause.Store(&err)
}

func (d *downstream) seen(f command.FailureType) int64 { return d.failures[f].Load() }

// call executes the command for the server's URL.
func (d *downstream) call(ctx context.Context) (answer, error) { return d.cmd.Execute(ctx, d.srv.url) }

// callLog records the calls to a healthy server: their latencies, and
// every call that did not get the server's own reply.
type callLog struct {
	mu        sync.Mutex
	latencies []time.Duration
	bad       []string
}

func (l *callLog) record(d *downstream, start time.Time, a answer, err error) {
	latency := time.Since(start)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.latencies = append(l.latencies, latency)
	switch {
	case err != nil:
		l.bad = append(l.bad, fmt.Sprintf("error after %v: %v", latency, err))
	case a.Fallback:
		l.bad = append(l.bad, fmt.Sprintf("fallback (%v) after %v", a.Failure, latency))
	case a.Server != d.srv.name:
		l.bad = append(l.bad, fmt.Sprintf("reply from %q", a.Server))
	}
}

func (l *callLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.latencies)
}

// p99 returns the 99th percentile of the latencies.
func (l *callLog) p99() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.latencies) == 0 {
		return 0
	}
	s := slices.Clone(l.latencies)
	slices.Sort(s)
	return s[(len(s)*99+99)/100-1]
}

// load runs paced callers until it is halted. Pacing keeps callers whose
// calls fail fast (rejected, short-circuited) from spinning and starving
// the machine's two cores, as real callers arrive at a rate.
type load struct {
	stop chan struct{}
	wg   sync.WaitGroup
}

func newLoad() *load { return &load{stop: make(chan struct{})} }

// run starts n goroutines that each call f at most once per period.
func (l *load) run(n int, period time.Duration, f func()) {
	for range n {
		l.wg.Go(func() {
			tick := time.NewTicker(period)
			defer tick.Stop()
			for {
				f()
				select {
				case <-l.stop:
					return
				case <-tick.C:
				}
			}
		})
	}
}

// halt stops the callers and waits for their calls to return.
func (l *load) halt() {
	close(l.stop)
	l.wg.Wait()
}

// transitionLog collects a breaker's transitions.
type transitionLog struct {
	mu  sync.Mutex
	all []breaker.Transition
}

// watchTransitions records b's transitions until the test ends.
func watchTransitions(t testing.TB, b *breaker.Breaker) *transitionLog {
	l := &transitionLog{}
	ctx, cancel := context.WithCancel(context.Background())
	sub := b.Transitions().SubscribeFunc(ctx, func(tr breaker.Transition) {
		l.mu.Lock()
		l.all = append(l.all, tr)
		l.mu.Unlock()
	}, nil, nil)
	t.Cleanup(func() {
		cancel()
		<-sub.Done()
	})
	return l
}

func (l *transitionLog) get() []breaker.Transition {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.all)
}

// endsClosed reports whether the transitions end with a trial that closed
// the breaker.
func (l *transitionLog) endsClosed() bool {
	all := l.get()
	n := len(all)
	return n >= 2 && all[n-2].From == breaker.Open && all[n-2].To == breaker.HalfOpen &&
		all[n-1].From == breaker.HalfOpen && all[n-1].To == breaker.Closed
}
