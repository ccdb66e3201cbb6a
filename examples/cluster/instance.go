package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// callsPerSecond is each instance's traffic.
const callsPerSecond = 40

// errUsersDown is what the failing stand-in of the users service answers.
var errUsersDown = errors.New("users service: connection refused")

// An instance is one process of the service: its own registry, its
// GetUser command and its stream, served on a loopback port of its own.
type instance struct {
	reg    *command.Registry
	srv    *http.Server
	url    string // its stream
	done   chan struct{}
	served sync.WaitGroup
}

// startInstance starts an instance, which serves its stream until stop.
func startInstance() (*instance, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	in := &instance{reg: command.NewRegistry(), done: make(chan struct{})}
	in.srv = &http.Server{
		Handler:           metricsstream.Handler(metricsstream.WithRegistry(in.reg.Metrics()), metricsstream.WithShutdown(in.done)),
		ReadHeaderTimeout: 10 * time.Second,
	}
	in.url = "http://" + ln.Addr().String() + "/hystrix.stream"
	in.served.Add(1)
	go func() {
		defer in.served.Done()
		in.srv.Serve(ln)
	}()
	return in, nil
}

// getUser is the instance's command: a call of 5 ms to its users
// service, answered from a default when it fails or the circuit is open.
func (in *instance) getUser(failing bool) *command.Command[int, string] {
	return command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		select {
		case <-time.After(5 * time.Millisecond):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if failing {
			return "", errUsersDown
		}
		return "ann", nil
	}, command.WithRegistry(in.reg)).WithFallback(func(context.Context, int, error) (string, error) {
		return "a guest", nil
	})
}

// traffic calls GetUser callsPerSecond times a second until ctx ends.
func (in *instance) traffic(ctx context.Context, failing bool) {
	c := in.getUser(failing)
	tick := time.NewTicker(time.Second / callsPerSecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			c.Execute(ctx, 1)
		}
	}
}

// stop ends the instance's stream and server, then its registry.
func (in *instance) stop() {
	close(in.done)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	in.srv.Shutdown(ctx)
	in.served.Wait()
	in.reg.Close()
}
