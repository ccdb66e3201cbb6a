package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/internal/redisserver"
)

// run starts the instances, lets the downstream die and come back, and
// writes what each breaker did to w.
func run(w io.Writer, opts options) error {
	if opts.Phase <= 0 {
		return fmt.Errorf("options.Phase (%v) must be positive", opts.Phase)
	}
	addr := opts.RedisAddr
	if addr == "" {
		dir, err := os.MkdirTemp("", "rxhystrix-fleet-example")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		srv, err := redisserver.Start(dir)
		if err != nil {
			return err
		}
		defer srv.Stop()
		addr = srv.Addr
		fmt.Fprintf(w, "started redis-server on %s\n", addr)
	}
	// A prefix of this run's own, so that runs sharing a Redis do not
	// count each other.
	prefix := fmt.Sprintf("rxhystrix:fleet-example:%d:%d:", os.Getpid(), time.Now().UnixNano())

	d := &downstream{}
	var instances []*instance
	defer func() {
		for _, in := range instances {
			in.close()
		}
	}()
	for _, spec := range []struct {
		name      string
		every     time.Duration
		redisAddr string
	}{
		{"busy-1", 10 * time.Millisecond, addr},
		{"busy-2", 10 * time.Millisecond, addr},
		{"quiet", 300 * time.Millisecond, addr},
		{"quiet-local", 300 * time.Millisecond, ""},
	} {
		in, err := newInstance(spec.name, spec.every, d, spec.redisAddr, prefix)
		if err != nil {
			return err
		}
		instances = append(instances, in)
	}

	out := &syncWriter{w: w}
	start := time.Now()
	for _, in := range instances {
		in.watch(out, start)
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, in := range instances {
		wg.Add(1)
		go in.load(ctx, &wg)
	}
	out.printf("GetUser: 20 requests and 50%% errors in 2s open a breaker; busy-1 and busy-2 send 100/s, quiet and quiet-local 3/s\n")
	out.printf("%5.1fs  the users service is up\n", time.Since(start).Seconds())
	time.Sleep(opts.Phase / 2)
	sentBefore := make([]int64, len(instances))
	for i, in := range instances {
		sentBefore[i] = in.sent.Load()
	}
	d.down.Store(true)
	out.printf("%5.1fs  the users service goes down\n", time.Since(start).Seconds())
	time.Sleep(2 * opts.Phase)
	sentWhileDown := make([]int64, len(instances))
	for i, in := range instances {
		sentWhileDown[i] = in.sent.Load() - sentBefore[i]
	}
	d.down.Store(false)
	out.printf("%5.1fs  the users service is back\n", time.Since(start).Seconds())
	time.Sleep(2 * opts.Phase)
	stop()
	wg.Wait()

	out.printf("\n%-11s  %8s  %16s  %15s  %s\n", "instance", "requests", "while it was down", "short-circuited", "breaker")
	for i, in := range instances {
		judge := "fleet's health"
		if in.fleet == nil {
			judge = "its own health"
		} else if st := in.fleet.Source(key).Stats(); st.Failures > 0 {
			judge = fmt.Sprintf("fleet's health, %d failed exchanges", st.Failures)
		}
		out.printf("%-11s  %8d  %17d  %15d  %s\n", in.name, in.sent.Load(), sentWhileDown[i], in.shortCircuited.Load(), judge)
	}
	return nil
}
