// Command overload sends a service twice the requests it can serve, and
// shows what a guard on the server changes. The service has a few cores
// and each request takes one for a fixed time, so requests beyond the
// cores wait, as CPU-bound work does; its clients give up after a
// deadline. It is served four ways:
//
//   - unguarded: every request waits its turn, the wait grows as long as
//     the overload lasts, and nearly every client gives up, while the
//     service goes on serving requests nobody waits for;
//   - behind an httpcommand.Guard with a fixed number of permits (the
//     cores, and as many again): what is beyond them is refused at once
//     with 503, and what is admitted is served in time;
//   - behind a Guard with an adaptive limit (Vegas, as Netflix's
//     concurrency-limits puts on a server), which finds that number from
//     the latency it measures;
//   - behind a Guard with fixed permits and a backlog
//     (command.Config.Backlog) where requests beyond them wait up to
//     half the clients' deadline, served oldest first (FIFO) or newest
//     first (LIFO, as concurrency-limits' LifoBlockingLimiter): both
//     serve as much, but under an overload that lasts every request
//     served from a FIFO backlog has waited about as long as the backlog
//     is deep, where a LIFO backlog serves most at once and lets the
//     oldest time out.
//
// It prints, for each, how many requests were served in time, refused or
// given up on, and the p50 and p99 of the ones served in time.
//
// A quarter of the requests are live traffic, the rest batch jobs, told
// apart by a Priority header. A guard refuses both alike; one whose
// permits are partitioned (command.Config.Partitions, as
// concurrency-limits' partitioned limiter) guarantees live traffic three
// quarters of them, which is more than it needs, and batch jobs take the
// rest. It
// prints how much of each was served in time by the guard with fixed
// permits and by the partitioned one.
//
//	go run ./examples/overload
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/examples/internal/cmdline"
	"github.com/rxhystrix/rxhystrix/httpcommand"
	"github.com/rxhystrix/rxhystrix/limit"
)

func main() {
	var o options
	flag.IntVar(&o.Cores, "cores", 4, "requests the service works on at once")
	flag.DurationVar(&o.Work, "work", 10*time.Millisecond, "the time a request takes on a core")
	flag.IntVar(&o.Rate, "rate", 800, "requests sent a second")
	flag.DurationVar(&o.Duration, "duration", 2*time.Second, "how long each way is sent requests")
	flag.DurationVar(&o.Deadline, "deadline", 250*time.Millisecond, "how long a client waits for an answer")
	cmdline.Parse()
	if err := run(os.Stdout, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

type options struct {
	Cores    int           // requests the service works on at once
	Work     time.Duration // the time one takes on a core
	Rate     int           // requests sent a second
	Duration time.Duration // how long each way is sent requests
	Deadline time.Duration // how long a client waits
}

func (o options) validate() error {
	switch {
	case o.Cores < 1:
		return fmt.Errorf("overload: -cores is %d; it must be at least 1", o.Cores)
	case o.Work <= 0:
		return fmt.Errorf("overload: -work is %v; it must be positive", o.Work)
	case o.Rate < 1 || o.Rate > int(time.Second):
		return fmt.Errorf("overload: -rate is %d; it must be at least 1 and at most %d", o.Rate, int(time.Second))
	case o.Duration <= 0:
		return fmt.Errorf("overload: -duration is %v; it must be positive", o.Duration)
	case o.Deadline <= 0:
		return fmt.Errorf("overload: -deadline is %v; it must be positive", o.Deadline)
	}
	return nil
}

// service works on each request on one of its cores, waiting for one
// when all are busy. Like most CPU-bound work, it does not look at the
// request's context: a request whose client has left is still served.
type service struct {
	cores chan struct{}
	work  time.Duration
}

func (s *service) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	s.cores <- struct{}{}
	time.Sleep(s.work)
	<-s.cores
	_, _ = io.WriteString(w, "ok")
}

// result is what the clients of one way saw.
type result struct {
	sent, served, refused, gaveUp int
	latencies                     []time.Duration // of the requests served in time
}

// add adds what the clients of r saw to what those of t saw.
func (t result) add(r result) result {
	t.sent += r.sent
	t.served += r.served
	t.refused += r.refused
	t.gaveUp += r.gaveUp
	t.latencies = append(slices.Clip(t.latencies), r.latencies...)
	return t
}

// The priorities of the requests, in their Priority header: one in
// liveEvery is live.
const (
	live, batch = "live", "batch"
	liveEvery   = 4
)

// byPriority is what the clients of one way saw, for their live and
// their batch requests.
type byPriority struct{ live, batch result }

func (b byPriority) all() result { return b.live.add(b.batch) }

func run(w io.Writer, o options) error {
	if err := o.validate(); err != nil {
		return err
	}
	capacity := float64(o.Cores) / o.Work.Seconds()
	fmt.Fprintf(w, "%d requests/s for %v to a service that serves %.0f/s (%d at a time, %v each); clients wait %v\n\n",
		o.Rate, o.Duration, capacity, o.Cores, o.Work, o.Deadline)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "way\tsent\tserved in time\trefused\tgave up\tp50\tp99\t")
	row := func(name string, r result) {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%v\t%v\t\n", name, r.sent,
			share(r.served, r.sent), share(r.refused, r.sent), share(r.gaveUp, r.sent),
			pct(r.latencies, 50), pct(r.latencies, 99))
	}

	row("unguarded", drive(&service{cores: make(chan struct{}, o.Cores), work: o.Work}, o).all())

	permits := 2 * o.Cores
	reg := command.NewRegistry()
	defer reg.Close()
	fixed := drive(&httpcommand.Guard{
		Handler:  &service{cores: make(chan struct{}, o.Cores), work: o.Work},
		Registry: reg,
		Key:      func(*http.Request) string { return "fixed" },
		Config: func(string) command.Config {
			return command.Config{MaxConcurrentRequests: permits}
		},
	}, o)
	row(fmt.Sprintf("guard, %d permits", permits), fixed.all())

	adaptive := drive(&httpcommand.Guard{
		Handler:  &service{cores: make(chan struct{}, o.Cores), work: o.Work},
		Registry: reg,
		Key:      func(*http.Request) string { return "vegas" },
		Config: func(string) command.Config {
			return command.Config{AdaptiveLimit: limit.Vegas{}}
		},
	}, o)
	m, _ := reg.Metrics().LookupCommand("vegas")
	status, _ := m.Status()
	row(fmt.Sprintf("guard, Vegas (limit %d at the end)", status.Properties.MaxConcurrentRequests), adaptive.all())
	backlog := command.BacklogConfig{Size: 4 * permits, Timeout: o.Deadline / 2}
	for _, order := range []command.BacklogOrder{command.FIFO, command.LIFO} {
		waited := drive(&httpcommand.Guard{
			Handler:  &service{cores: make(chan struct{}, o.Cores), work: o.Work},
			Registry: reg,
			Key:      func(*http.Request) string { return "backlog-" + order.String() },
			Config: func(string) command.Config {
				b := backlog
				b.Order = order
				return command.Config{MaxConcurrentRequests: permits, Backlog: b}
			},
		}, o)
		row(fmt.Sprintf("guard, %d permits, %s backlog of %d", permits, order, backlog.Size), waited.all())
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	partitioned := drive(&httpcommand.Guard{
		Handler:   &service{cores: make(chan struct{}, o.Cores), work: o.Work},
		Registry:  reg,
		Key:       func(*http.Request) string { return "partitioned" },
		Partition: func(r *http.Request) string { return r.Header.Get("Priority") },
		Config: func(string) command.Config {
			return command.Config{MaxConcurrentRequests: permits,
				Partitions: []command.Partition{{Name: live, Share: 0.75}, {Name: batch, Share: 0.25}}}
		},
	}, o)
	m, _ = reg.Metrics().LookupCommand("partitioned")
	status, _ = m.Status()
	fmt.Fprintf(w, "\none request in %d is live, the others batch:\n\n", liveEvery)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "way\tlive served in time\tbatch served in time\t")
	for _, r := range []struct {
		name string
		b    byPriority
	}{
		{fmt.Sprintf("guard, %d permits", permits), fixed},
		{fmt.Sprintf("guard, %d permits, live guaranteed %d", permits, status.Partitions[0].Guaranteed), partitioned},
	} {
		fmt.Fprintf(tw, "%s\t%s\t%s\t\n", r.name, share(r.b.live.served, r.b.live.sent), share(r.b.batch.served, r.b.batch.sent))
	}
	return tw.Flush()
}

// drive sends o.Rate requests a second to h for o.Duration, each from a
// client that waits o.Deadline, one in liveEvery live and the others
// batch, and returns what the clients saw once the server has served
// every request it took.
func drive(h http.Handler, o options) byPriority {
	srv := httptest.NewServer(h)
	defer srv.Close() // waits for the requests still served
	transport := &http.Transport{MaxIdleConnsPerHost: 4 * o.Rate}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: o.Deadline}

	var (
		mu  sync.Mutex
		b   byPriority
		all sync.WaitGroup
	)
	tick := time.NewTicker(time.Second / time.Duration(o.Rate))
	defer tick.Stop()
	for end := time.Now().Add(o.Duration); time.Now().Before(end); {
		<-tick.C
		priority, r := batch, &b.batch
		if (b.live.sent+b.batch.sent)%liveEvery == 0 {
			priority, r = live, &b.live
		}
		r.sent++
		all.Go(func() {
			req, err := http.NewRequest(http.MethodGet, srv.URL, nil)
			if err != nil {
				panic(err) // srv.URL is a URL
			}
			req.Header.Set("Priority", priority)
			start := time.Now()
			resp, err := client.Do(req)
			var code int
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				code = resp.StatusCode
			}
			took := time.Since(start)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errors.Is(err, context.DeadlineExceeded) || took > o.Deadline:
				r.gaveUp++
			case code == http.StatusOK:
				r.served++
				r.latencies = append(r.latencies, took)
			case code == http.StatusServiceUnavailable:
				r.refused++
			}
		})
	}
	all.Wait()
	return b
}

func share(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(n)/float64(of))
}

// pct is the p-th percentile of ds, to the millisecond.
func pct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(p/100*float64(len(s)-1))].Round(time.Millisecond)
}
