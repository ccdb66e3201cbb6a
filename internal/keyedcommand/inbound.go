package keyedcommand

import (
	"context"
	"fmt"
	"sync"

	"github.com/rxhystrix/rxhystrix/command"
)

// Inbound is an incoming call that a command's run serves with the
// server's handler, through Serve. The server's goroutine calls Wait
// once the command has returned, and answers only after it: under pool
// isolation the command returns at its timeout while the handler may
// still run on its worker, writing a response or setting trailers that
// belong to the server's goroutine until it returns. Wait also keeps a
// handler that had not started (a call still queued in the pool when it
// timed out) from starting at all. Under semaphore isolation the handler
// runs on the server's goroutine and has returned before Wait is called.
//
// The zero value is ready to use.
type Inbound struct {
	mu       sync.Mutex
	running  bool
	answered bool          // Wait was called: no handler may start
	ended    chan struct{} // made by a Wait that must wait for the handler
	panicked any           // what the handler panicked with, for Wait to raise again
}

// Serve calls handler, the server's, unless Wait has been called, and
// returns context.Canceled if so. A panic of handler's is recovered
// and returned as an error, so that the command records a failure; Wait
// raises it again on the server's goroutine.
func (c *Inbound) Serve(handler func()) (err error) {
	c.mu.Lock()
	if c.answered {
		c.mu.Unlock()
		return context.Canceled // the server answered while the call waited for a worker
	}
	c.running = true
	c.mu.Unlock()
	defer c.end()
	defer func() {
		if v := recover(); v != nil {
			c.panicked = v
			err = fmt.Errorf("the handler panicked: %v", v)
		}
	}()
	handler()
	return nil
}

// end tells Wait that the handler has returned.
func (c *Inbound) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running = false
	if c.ended != nil {
		close(c.ended)
	}
}

// Wait returns once no handler of the call runs and none can start. If
// the handler panicked, Wait panics with the same value, so that the
// server treats it as it treats a panic of a handler of its own.
func (c *Inbound) Wait() {
	c.mu.Lock()
	c.answered = true
	if c.running {
		c.ended = make(chan struct{})
		ended := c.ended
		c.mu.Unlock()
		<-ended
	} else {
		c.mu.Unlock()
	}
	if c.panicked != nil {
		panic(c.panicked)
	}
}

// GuardConfig returns the configuration function of a guard's Set: the
// Config of config (the zero Config if config is nil), semaphore-isolated
// unless it names an isolation, with its breaker off unless breaker is
// true. A guard rejects when its server is busy, which Hystrix counts
// against a key's health: with its breaker on, a guard shedding half an
// overload would open the circuit and shed all of it.
func GuardConfig(config func(key string) command.Config, breaker bool) func(key string) command.Config {
	return func(key string) command.Config {
		var cfg command.Config
		if config != nil {
			cfg = config(key)
		}
		if cfg.Isolation == command.DefaultIsolation {
			cfg.Isolation = command.SemaphoreIsolation
		}
		cfg.Breaker.Disabled = cfg.Breaker.Disabled || !breaker
		return cfg
	}
}
