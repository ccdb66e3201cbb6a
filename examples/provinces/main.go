// Provinces replays seed 002: a service pushes data to 30 provincial
// systems; one day one province's network hangs, every push to it waits
// for its timeout, the service's shared threads fill with those pushes,
// and users in every province lose the service.
//
// The cure the seed applies is Hystrix's thread isolation per downstream
// URL: one worker pool per province URL (WithPoolKey, the seed's
// threadPoolKey = URL) and one command key, hence one circuit breaker, per
// province. This program starts 30 provinces on 127.0.0.1, sends the
// service a steady stream of pushes, round robin, and hangs one province's
// network:
//
//   - with isolation, the 29 others keep succeeding at their usual
//     latency; the hung province's pushes time out, then are rejected by
//     its own full pool, then short-circuited by its open breaker, and all
//     are answered by the fallback at once;
//   - when its network recovers, its breaker lets a trial through after
//     the sleep window and closes;
//   - the same isolation in one line, client.Transport =
//     httpcommand.New(...), keys each push by the province's host, with a
//     pool and a breaker per host, and keeps the 29 others served alike;
//   - over gRPC, one option of the connections,
//     grpc.WithUnaryInterceptor(grpccommand.UnaryClientInterceptor(...)),
//     keys each call by the province's address and the method, with a
//     pool and a breaker per address, and keeps the 29 others served
//     alike;
//   - a rehearsal of the incident before it happens, with every network
//     healthy: Config.Faults delays every push to the province beyond
//     its timeout, and the 29 others are served alike, as a team running
//     a game day would check;
//   - without isolation (every push in the command group's one pool, as
//     Hystrix does without a threadPoolKey), the hung province's pushes
//     take the shared workers and the healthy provinces' pushes are
//     rejected, which in turn opens their breakers.
//
// Pools are sized by seed 004's rule: requests per second × latency + 4.
//
//	go run ./examples/provinces
//	go run ./examples/provinces -hang 2s -sleep-window 1s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/examples/internal/cmdline"
)

// options shape the replay.
type options struct {
	Provinces   int           // how many provinces, at most 31
	Rate        int           // pushes a second, round robin over the provinces
	Latency     time.Duration // how long a healthy province takes to answer, on average
	Timeout     time.Duration // the pushes' timeout
	SleepWindow time.Duration // how long an open breaker refuses pushes
	Volume      int           // the least pushes in the window that can open a breaker; 0 means Hystrix's 20
	Hang        time.Duration // how long the province's network hangs
	After       time.Duration // how long the load runs once the breaker has closed again
}

func main() {
	var opts options
	flag.IntVar(&opts.Provinces, "provinces", 30, "number of provinces (at most 31)")
	flag.IntVar(&opts.Rate, "rate", 300, "pushes a second, round robin over the provinces")
	flag.DurationVar(&opts.Latency, "latency", 10*time.Millisecond, "average answer time of a healthy province")
	flag.DurationVar(&opts.Timeout, "timeout", time.Second, "timeout of a push")
	flag.DurationVar(&opts.SleepWindow, "sleep-window", 5*time.Second, "how long an open breaker refuses pushes")
	flag.IntVar(&opts.Volume, "volume", 20, "the least pushes in the breaker's window that can open it")
	flag.DurationVar(&opts.Hang, "hang", 4*time.Second, "how long pushes are sent to the hung province, which answers none of them")
	flag.DurationVar(&opts.After, "after", time.Second, "how long pushes go on after the recovery")
	cmdline.Parse()
	if err := run(os.Stdout, opts); err != nil {
		fmt.Fprintln(os.Stderr, "provinces:", err)
		os.Exit(1)
	}
}

// hungName is the province whose network hangs.
const hungName = "Henan"

// run starts the provinces, replays the incident with and without
// isolation, and writes the numbers to w.
func run(w io.Writer, opts options) error {
	if opts.Provinces < 2 || opts.Provinces > len(names) {
		return fmt.Errorf("options.Provinces must be between 2 and %d", len(names))
	}
	if opts.Rate <= 0 || opts.Latency <= 0 || opts.Timeout <= 0 || opts.SleepWindow <= 0 || opts.Hang <= 0 || opts.After <= 0 || opts.Volume < 0 {
		return errors.New("options.Rate, Latency, Timeout, SleepWindow, Hang and After must be positive, and Volume not negative")
	}
	if opts.Rate > int(time.Second) {
		return fmt.Errorf("options.Rate must be at most %d pushes a second, one a nanosecond", int(time.Second))
	}
	var provinces []*province
	var hung *province
	for _, name := range names[:opts.Provinces] {
		p := startProvince(name, opts.Latency)
		defer p.close()
		provinces = append(provinces, p)
		if name == hungName {
			hung = p
		}
	}
	if hung == nil {
		hung = provinces[len(provinces)-1]
	}
	healthy := func(name string) bool { return name != hung.Name }
	perProvince := float64(opts.Rate) / float64(opts.Provinces)
	cfg := command.Config{
		Timeout: opts.Timeout,
		Breaker: breaker.Config{SleepWindow: opts.SleepWindow, RequestVolumeThreshold: opts.Volume},
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute+3*opts.Hang+5*opts.SleepWindow)
	defer cancel()

	fmt.Fprintf(w, "seed 002: %d provinces on 127.0.0.1, %d pushes/s round robin (%.0f/s each), healthy ones answer in %v on average, timeout %v\n",
		opts.Provinces, opts.Rate, perProvince, opts.Latency, opts.Timeout)

	// With isolation: a pool per province URL, a breaker per province.
	perURL := poolSize(perProvince, opts.Latency)
	fmt.Fprintf(w, "isolated: a pool of %d workers per province URL, a breaker per province\n", perURL)
	reg := command.NewRegistry()
	defer reg.Close()
	if err := poolPerProvince(reg, provinces, perURL); err != nil {
		return err
	}
	svc := newService(reg, provinces, cfg, poolPerURL)
	defer svc.close()
	hungBreaker := svc.commands[hung.Name].Breaker()
	transitions := watchTransitions(ctx, hungBreaker)

	hangStart := time.Now()
	hangUnder(ctx, w, svc, provinces, hung, opts)
	fmt.Fprintf(w, "  %s's network recovers; its breaker:\n", hung.Name)
	l := startLoad(ctx, svc, provinces, opts.Rate)
	seen, err := transitions.awaitClosed(ctx, hungBreaker, svc.commands[hung.Name].Metrics().Config().RollingWindow)
	l.finish()
	if err != nil {
		return err
	}
	if len(seen) == 0 {
		fmt.Fprintf(w, "    stayed closed: too few pushes to %s failed in its window to open it\n", hung.Name)
	}
	for _, t := range seen {
		fmt.Fprintf(w, "    %+6.2fs  %v -> %v", t.Time.Sub(hangStart).Seconds(), t.From, t.To)
		if t.To == breaker.Open {
			fmt.Fprintf(w, " (%d requests in the window, %d%% errors)", t.Health.Total, t.Health.ErrorPercentage)
		}
		fmt.Fprintln(w)
	}
	all := tallyOf(loadFor(ctx, opts.After, svc, provinces, opts.Rate), func(string) bool { return true })
	fmt.Fprintf(w, "  then, for %v: all %d provinces: %s\n", opts.After, opts.Provinces, all.summary())

	// The same isolation in one line: the client's transport makes a
	// command, a breaker and a pool per province host.
	fmt.Fprintf(w, "one line, client.Transport = httpcommand.New(...): a pool of %d workers and a breaker per province host\n", perURL)
	regTransport := command.NewRegistry()
	defer regTransport.Close()
	svcTransport := newTransportService(regTransport, cfg, perURL)
	defer svcTransport.close()
	hangUnder(ctx, w, svcTransport, provinces, hung, opts)

	// Over gRPC, the same in one option of the connections: a command per
	// province address and method, a pool per address.
	fmt.Fprintf(w, "over gRPC, grpc.WithUnaryInterceptor(grpccommand.UnaryClientInterceptor(...)): a pool of %d workers and a breaker per province address\n", perURL)
	regGRPC := command.NewRegistry()
	defer regGRPC.Close()
	svcGRPC, err := newGRPCService(regGRPC, provinces, cfg, perURL)
	if err != nil {
		return err
	}
	defer svcGRPC.close()
	hangUnder(ctx, w, svcGRPC, provinces, hung, opts)

	// A rehearsal of the incident before it happens: the hang injected
	// into Henan's command (Config.Faults), its network healthy.
	fmt.Fprintf(w, "a rehearsal, Config.Faults: a pool of %d workers per province URL, a breaker per province, every province's network healthy\n", perURL)
	regRehearsal := command.NewRegistry()
	defer regRehearsal.Close()
	if err := poolPerProvince(regRehearsal, provinces, perURL); err != nil {
		return err
	}
	svcRehearsal := newService(regRehearsal, provinces, cfg, poolPerURL)
	defer svcRehearsal.close()
	faulty := svcRehearsal.commands[hung.Name]
	// The hung network answers no push: each runs into its timeout,
	// however short the hang. The injected delay does too.
	delay := opts.Timeout + opts.Hang
	fmt.Fprintf(w, "  every push to %s delayed by %v, past its timeout, for %v:\n", hung.Name, delay, opts.Hang)
	var injectErr error
	outage(ctx, w, svcRehearsal, provinces, hung, opts,
		func() { injectErr = injectDelay(regRehearsal, faulty.Key(), delay) },
		func() { injectErr = errors.Join(injectErr, injectDelay(regRehearsal, faulty.Key(), 0)) })
	if injectErr != nil {
		return injectErr
	}
	fmt.Fprintf(w, "    faults injected: %d pushes delayed\n", faulty.Metrics().Snapshot().Status.Faults.Delays)

	// Without isolation: the command group's one pool, a breaker per
	// province.
	shared := poolSize(float64(opts.Rate), opts.Latency)
	fmt.Fprintf(w, "without isolation: one pool of %d workers shared by every province, a breaker per province\n", shared)
	regShared := command.NewRegistry()
	defer regShared.Close()
	if err := regShared.ConfigurePool(group, command.PoolConfig{CoreSize: shared}); err != nil {
		return err
	}
	svcShared := newService(regShared, provinces, cfg, sharedPool)
	defer svcShared.close()
	fmt.Fprintf(w, "  %s's network hangs for %v:\n", hung.Name, opts.Hang)
	hung.hang()
	outcomes := loadFor(ctx, opts.Hang, svcShared, provinces, opts.Rate)
	hung.recover()
	good := tallyOf(outcomes, healthy)
	bad := tallyOf(outcomes, func(name string) bool { return !healthy(name) })
	fmt.Fprintf(w, "    %d healthy provinces: %s; %s\n", opts.Provinces-1, good.summary(), good.reasons())
	fmt.Fprintf(w, "    %s: %s; %s\n", hung.Name, bad.summary(), bad.reasons())
	opened := map[string]bool{}
	for _, o := range outcomes {
		if healthy(o.Province) && o.Receipt.Degraded && o.Receipt.Failure == command.ShortCircuitFailure {
			opened[o.Province] = true
		}
	}
	fmt.Fprintf(w, "    healthy provinces whose breaker opened: %d of %d\n", len(opened), opts.Provinces-1)
	return nil
}

// hangUnder hangs the province hung for opts.Hang while svc pushes to
// every province, recovers it, and writes what the healthy provinces and
// the hung one got.
func hangUnder(ctx context.Context, w io.Writer, svc pusher, provinces []*province, hung *province, opts options) {
	fmt.Fprintf(w, "  %s's network hangs for %v:\n", hung.Name, opts.Hang)
	outage(ctx, w, svc, provinces, hung, opts, hung.hang, hung.recover)
}

// outage calls fail, lets svc push to every province for opts.Hang,
// calls recover, and writes what the healthy provinces and the failing
// one, hung, got.
func outage(ctx context.Context, w io.Writer, svc pusher, provinces []*province, hung *province, opts options, fail, recover func()) {
	fail()
	outcomes := loadFor(ctx, opts.Hang, svc, provinces, opts.Rate)
	recover()
	good := tallyOf(outcomes, func(name string) bool { return name != hung.Name })
	bad := tallyOf(outcomes, func(name string) bool { return name == hung.Name })
	fmt.Fprintf(w, "    %d healthy provinces: %s, p50 %v, p99 %v\n",
		len(provinces)-1, good.summary(), good.percentile(50).Round(time.Millisecond), good.percentile(99).Round(time.Millisecond))
	fmt.Fprintf(w, "    %s: %s; %s\n", hung.Name, bad.summary(), bad.reasons())
}

// poolPerProvince gives each province URL a pool of size workers in r.
func poolPerProvince(r *command.Registry, provinces []*province, size int) error {
	for _, p := range provinces {
		if err := r.ConfigurePool(p.URL, command.PoolConfig{CoreSize: size}); err != nil {
			return err
		}
	}
	return nil
}

// injectDelay makes key's executions start d late, every one of them,
// or, when d is 0, stops the faults.
func injectDelay(r *command.Registry, key string, d time.Duration) error {
	return r.ConfigureFunc(key, func(cfg *command.Config) {
		cfg.Faults = command.FaultConfig{Enabled: d > 0, DelayPercentage: 100, Delay: d}
	})
}

// poolSize is seed 004's rule: the workers busy at the given rate and
// latency, plus 4 to spare.
func poolSize(perSecond float64, latency time.Duration) int {
	return int(math.Ceil(perSecond*latency.Seconds())) + 4
}

// transitionLog receives a breaker's transitions.
type transitionLog struct{ ch chan breaker.Transition }

// watchTransitions subscribes to b's transitions until ctx ends.
func watchTransitions(ctx context.Context, b *breaker.Breaker) *transitionLog {
	l := &transitionLog{ch: make(chan breaker.Transition, 16)}
	b.Transitions().SubscribeFunc(ctx, func(t breaker.Transition) {
		select {
		case l.ch <- t:
		case <-ctx.Done():
		}
	}, nil, nil)
	return l
}

// awaitClosed returns the transitions up to the next one to Closed, or
// those seen (none when it never opened) once b has stayed closed for a
// whole window with no transition: by then the hang's failures have left
// the window, and b will not open for them.
func (l *transitionLog) awaitClosed(ctx context.Context, b *breaker.Breaker, window time.Duration) ([]breaker.Transition, error) {
	var seen []breaker.Transition
	quiet := time.NewTimer(window)
	defer quiet.Stop()
	for {
		select {
		case t := <-l.ch:
			seen = append(seen, t)
			if t.To == breaker.Closed {
				return seen, nil
			}
			quiet.Reset(window)
		case <-quiet.C:
			if b.State() == breaker.Closed {
				return seen, nil
			}
			quiet.Reset(window)
		case <-ctx.Done():
			return seen, fmt.Errorf("waiting for the breaker to close: %w", ctx.Err())
		}
	}
}
