package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/fleet"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// key is the command every instance runs.
const key = "GetUser"

// commandConfig is GetUser's configuration on every instance: Hystrix's
// thresholds (20 requests, 50% errors) over a 2s window of 100ms health
// buckets, and a 1s sleep window, so that the run is short.
var commandConfig = command.Config{
	Isolation: command.SemaphoreIsolation,
	Metrics:   metricsstream.Config{RollingWindow: 2 * time.Second, HealthSnapshotInterval: 100 * time.Millisecond},
	Breaker:   breaker.Config{SleepWindow: time.Second},
}

// errUnavailable is the dead downstream's answer.
var errUnavailable = errors.New("users service unavailable")

// downstream is the service every instance calls.
type downstream struct{ down atomic.Bool }

func (d *downstream) getUser(context.Context, int) (string, error) {
	if d.down.Load() {
		return "", errUnavailable
	}
	return "Ada", nil
}

// instance is one service instance.
type instance struct {
	name  string
	every time.Duration // between two requests
	reg   *command.Registry
	fleet *fleet.Fleet // nil for the local-only instance
	rdb   *redis.Client
	cmd   *command.Command[int, string]

	sent, shortCircuited atomic.Int64 // requests into the downstream, requests the breaker refused
}

// newInstance starts an instance; with a Redis address it judges on the
// fleet's health.
func newInstance(name string, every time.Duration, d *downstream, redisAddr, prefix string) (*instance, error) {
	in := &instance{name: name, every: every}
	var opts []command.RegistryOption
	if redisAddr != "" {
		in.rdb = redis.NewClient(&redis.Options{Addr: redisAddr, ContextTimeoutEnabled: true, MaxRetries: -1})
		f, err := fleet.New(fleet.Config{Client: in.rdb, Instance: name, Keys: []string{key}, Prefix: prefix})
		if err != nil {
			in.rdb.Close()
			return nil, err
		}
		in.fleet = f
		opts = append(opts, command.WithHealthSource(f.HealthSource))
	}
	in.reg = command.NewRegistry(opts...)
	in.cmd = command.New(key, func(ctx context.Context, id int) (string, error) {
		in.sent.Add(1)
		return d.getUser(ctx, id)
	}, command.WithRegistry(in.reg), command.WithConfig(commandConfig))
	return in, nil
}

// watch writes in's breaker transitions to w until the breaker is closed.
func (in *instance) watch(w *syncWriter, start time.Time) {
	in.cmd.Breaker().Transitions().SubscribeFunc(context.Background(), func(tr breaker.Transition) {
		how := ""
		if tr.To == breaker.Open {
			how = fmt.Sprintf(" on %d requests, %d%% errors", tr.Health.Total, tr.Health.ErrorPercentage)
		}
		w.printf("%5.1fs  %-11s %v -> %v%s\n", time.Since(start).Seconds(), in.name, tr.From, tr.To, how)
	}, nil, nil)
}

// load sends in's requests until ctx ends.
func (in *instance) load(ctx context.Context, wg *sync.WaitGroup) {
	defer wg.Done()
	t := time.NewTicker(in.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if _, err := in.cmd.Execute(ctx, 42); errors.Is(err, command.ErrShortCircuited) {
			in.shortCircuited.Add(1)
		}
	}
}

// close stops the instance.
func (in *instance) close() {
	in.reg.Close()
	if in.fleet != nil {
		in.fleet.Close()
		in.rdb.Close()
	}
}

// syncWriter serializes the writes of the instances' watchers.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) printf(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	fmt.Fprintf(s.w, format, args...)
}
