package keyedcommand

import "sync"

// Inbound is an incoming call that a command's run serves with the
// server's handler. The server's goroutine calls Wait once the command
// has returned, and answers only after it: under pool isolation the
// command returns at its timeout while the handler may still run on its
// worker, writing a response or setting trailers that belong to the
// server's goroutine until it returns. Wait also keeps a handler that
// had not started (a call still queued in the pool when it timed out)
// from starting at all. Under semaphore isolation the handler runs on
// the server's goroutine and has returned before Wait is called.
//
// The zero value is ready to use.
type Inbound struct {
	mu       sync.Mutex
	running  bool
	answered bool          // Wait was called: no handler may start
	ended    chan struct{} // made by a Wait that must wait for End
}

// Start reports whether run may call the handler, and if so marks it
// running: false once Wait has been called.
func (c *Inbound) Start() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.answered {
		return false
	}
	c.running = true
	return true
}

// End tells Wait that the handler Start allowed has returned (or
// panicked: call it deferred).
func (c *Inbound) End() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.running = false
	if c.ended != nil {
		close(c.ended)
	}
}

// Wait returns once no handler of the call runs and none can start.
func (c *Inbound) Wait() {
	c.mu.Lock()
	c.answered = true
	if !c.running {
		c.mu.Unlock()
		return
	}
	c.ended = make(chan struct{})
	ended := c.ended
	c.mu.Unlock()
	<-ended
}
