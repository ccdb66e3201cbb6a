package isolation

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"
)

// Config describes one run. The zero value of each field means the
// default given with it; negative values are errors.
type Config struct {
	Servers  int           // downstream servers; 0 means 30
	Hung     int           // how many of them hang; 0 is the no-failure baseline
	Rate     int           // requests a second into the service; 0 means 200
	Duration time.Duration // how long requests arrive; 0 means 20 s
	Latency  time.Duration // a healthy server's mean answer time; 0 means 10 ms
	Capacity int           // requests the service handles at once; 0 means 50
	Deadline time.Duration // how long a caller waits for the service; 0 means 5 s
	Timeout  time.Duration // protected clients' command timeout; 0 means 10 s, the seed's
	PoolSize int           // protected clients' concurrency per URL; 0 means 10, Hystrix's default
}

func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Servers, 30)
	def(&c.Rate, 200)
	def(&c.Capacity, 50)
	def(&c.PoolSize, 10)
	defDur(&c.Duration, 20*time.Second)
	defDur(&c.Latency, 10*time.Millisecond)
	defDur(&c.Deadline, 5*time.Second)
	defDur(&c.Timeout, 10*time.Second)
	return c
}

// validate returns an error naming the first field that is out of range.
func (c Config) validate() error {
	for _, f := range []struct {
		name string
		bad  bool
	}{
		{"Servers", c.Servers < 0},
		{"Hung", c.Hung < 0 || c.Hung > c.Servers},
		{"Rate", c.Rate < 0},
		{"Duration", c.Duration < 0},
		{"Latency", c.Latency < 0},
		{"Capacity", c.Capacity < 0},
		{"Deadline", c.Deadline < 0},
		{"Timeout", c.Timeout < 0},
		{"PoolSize", c.PoolSize < 0},
	} {
		if f.bad {
			return fmt.Errorf("isolation: Config.%s out of range: %+v", f.name, c)
		}
	}
	return nil
}

// Result is what the callers of the service saw in one run.
type Result struct {
	Client   string // the ClientKind's name
	Config   Config // with defaults filled in
	Healthy  int    // requests for healthy servers
	Answered int    // of which the service answered 200 within the deadline
	// P50, P99 and Max are latencies of the requests for healthy
	// servers, answered or not.
	P50, P99, Max time.Duration
	// HungConnections is how many connections the hung servers still
	// held when the last request for a healthy server had ended.
	HungConnections int
}

// SuccessRate returns Answered/Healthy, or 0 if there were no requests.
func (r Result) SuccessRate() float64 {
	if r.Healthy == 0 {
		return 0
	}
	return float64(r.Answered) / float64(r.Healthy)
}

// outcome is one request's fate.
type outcome struct {
	latency  time.Duration
	answered bool
}

// Run starts the servers of cfg, sends them the load through a client of
// kind, and returns what the callers saw. It returns when every request
// has ended and every server is closed; cancelling ctx stops the load
// early.
func Run(ctx context.Context, cfg Config, kind ClientKind) (Result, error) {
	cfg = cfg.withDefaults()
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	farm, err := StartFarm(cfg.Servers-cfg.Hung, cfg.Hung, cfg.Latency)
	if err != nil {
		return Result{}, err
	}
	defer farm.Close()
	client := kind.New(cfg, farm.URLs)
	defer client.Close()

	// calls is the context of the downstream calls, cancelled once the
	// healthy requests are over to end the calls stuck on a hung server.
	calls, endCalls := context.WithCancel(ctx)
	defer endCalls()

	total := int(int64(cfg.Rate) * int64(cfg.Duration) / int64(time.Second))
	interval := time.Second / time.Duration(max(cfg.Rate, 1))
	outcomes := make([]outcome, total)
	places := make(chan struct{}, cfg.Capacity)
	var healthy, all sync.WaitGroup

	start := time.Now()
	sent := 0
	for i := range total {
		if wait := time.Until(start.Add(time.Duration(i) * interval)); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
			}
		}
		if ctx.Err() != nil {
			break
		}
		url, isHealthy := farm.URLs[i%len(farm.URLs)], i%len(farm.URLs) >= farm.Hung
		all.Add(1)
		if isHealthy {
			healthy.Add(1)
		}
		go func() {
			defer all.Done()
			if isHealthy {
				defer healthy.Done()
			}
			outcomes[i] = serve(calls, client, url, places, cfg.Deadline)
		}()
		sent++
	}
	healthy.Wait()
	hungConns := farm.HungConnections()
	endCalls()
	all.Wait()

	r := Result{Client: kind.Name, Config: cfg, HungConnections: hungConns}
	var latencies []time.Duration
	for i := range sent {
		if i%len(farm.URLs) < farm.Hung {
			continue
		}
		r.Healthy++
		if outcomes[i].answered {
			r.Answered++
		}
		latencies = append(latencies, outcomes[i].latency)
	}
	slices.Sort(latencies)
	r.P50, r.P99 = percentile(latencies, 0.50), percentile(latencies, 0.99)
	if len(latencies) > 0 {
		r.Max = latencies[len(latencies)-1]
	}
	return r, ctx.Err()
}

// serve is the service handling one request: it waits up to deadline for
// one of places, calls url through client, and frees the place.
func serve(ctx context.Context, client Client, url string, places chan struct{}, deadline time.Duration) outcome {
	begin := time.Now()
	giveUp := time.NewTimer(deadline)
	defer giveUp.Stop()
	select {
	case places <- struct{}{}:
	case <-giveUp.C:
		return outcome{latency: time.Since(begin)}
	case <-ctx.Done():
		return outcome{latency: time.Since(begin)}
	}
	err := client.Get(ctx, url)
	<-places
	latency := time.Since(begin)
	return outcome{latency: latency, answered: err == nil && latency <= deadline}
}

// percentile returns the nearest-rank p-th quantile of sorted, 0 if it is
// empty.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(rank, 0), len(sorted)-1)]
}
