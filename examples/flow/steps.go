package main

import (
	"context"
	"fmt"
	"io"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// flow runs the steps of the walk and prints each one's answer and
// events.
type flow struct {
	w      io.Writer
	ctx    context.Context
	cmd    *command.Command[request, string]
	events <-chan metricsstream.Completion
	err    error // the first error of the walk itself
}

// step runs exec, then prints its answer and the events of its
// execution.
func (f *flow) step(name string, exec func() (string, error)) {
	v, err := exec()
	answer := v
	if err != nil {
		answer = "error: " + err.Error()
	}
	c, werr := f.next()
	if werr != nil {
		f.fail(werr)
		return
	}
	fmt.Fprintf(f.w, "  %-30s %-42s %s\n", name, c.Events, answer)
}

// stepWhileHeld runs in while another call holds the command's only
// worker or permit, which it releases afterwards.
func (f *flow) stepWhileHeld(name string, in request) {
	started, release := make(chan struct{}), make(chan struct{})
	holder := f.cmd.Queue(f.ctx, request{ID: 10 * in.ID, Backend: held(started, release)})
	select {
	case <-started:
	case <-holder.Done():
		f.fail(fmt.Errorf("%s: the call meant to hold the command ended before it ran", name))
		return
	case <-f.ctx.Done():
		f.fail(f.ctx.Err())
		return
	}
	f.step(name, func() (string, error) { return f.cmd.Execute(f.ctx, in) })
	close(release)
	if _, err := holder.Get(f.ctx); err != nil {
		f.fail(err)
	}
	if _, err := f.next(); err != nil { // the holder's completion
		f.fail(err)
	}
}

// next returns the next completion of the command.
func (f *flow) next() (metricsstream.Completion, error) {
	select {
	case c := <-f.events:
		return c, nil
	case <-f.ctx.Done():
		return metricsstream.Completion{}, fmt.Errorf("waiting for a completion: %w", f.ctx.Err())
	}
}

func (f *flow) fail(err error) {
	if f.err == nil {
		f.err = err
	}
}

// watchCompletions subscribes to the completions of m until ctx ends.
// Every execution publishes one, with its events, once it has ended.
func watchCompletions(ctx context.Context, m *metricsstream.CommandMetrics) <-chan metricsstream.Completion {
	ch := make(chan metricsstream.Completion, 64)
	m.Completions().SubscribeFunc(ctx, func(c metricsstream.Completion) {
		select {
		case ch <- c:
		case <-ctx.Done():
		}
	}, nil, nil)
	return ch
}

// transitionLog receives a breaker's transitions.
type transitionLog struct {
	ch   chan breaker.Transition
	seen []breaker.Transition // those await has read, in order
}

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

// await returns the next transition to state to.
func (l *transitionLog) await(ctx context.Context, to breaker.State) (breaker.Transition, error) {
	for {
		select {
		case t := <-l.ch:
			l.seen = append(l.seen, t)
			if t.To == to {
				return t, nil
			}
		case <-ctx.Done():
			return breaker.Transition{}, fmt.Errorf("waiting for the breaker to turn %v: %w", to, ctx.Err())
		}
	}
}
