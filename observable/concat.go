package observable

import (
	"context"
	"sync/atomic"
)

// Concat returns an Observable that subscribes to each source in turn,
// the next one when the previous has completed, and emits their values.
// It fails with the first error. Each source's context ends with its own
// stream, before the next is subscribed. Long runs of synchronous sources
// do not deepen the stack. Concat of no sources completes at once.
func Concat[T any](os ...Observable[T]) Observable[T] {
	switch len(os) {
	case 0:
		return Empty[T]()
	case 1:
		return os[0]
	}
	cs := new(concatSource[T])
	cs.os = copyInto(cs.buf[:], os)
	return Observable[T]{src: cs}
}

type concatSource[T any] struct {
	os  []Observable[T]
	buf [2]Observable[T]
}

func (cs *concatSource[T]) subscribe(s *scope, down Observer[T]) {
	c := &concatenator[T]{os: cs.os, s: s, down: down}
	c.next()
}

// concatenator subscribes the sources one after another. wip counts the
// calls to next still to be handled: the goroutine that takes it from 0 to
// 1 runs the loop, so a source that completes synchronously, inside run,
// hands its successor to that loop instead of recursing.
type concatenator[T any] struct {
	os   []Observable[T]
	i    int // the next source; owned by the goroutine running the loop
	s    *scope
	down Observer[T]
	wip  atomic.Int32
}

func (c *concatenator[T]) next() {
	if c.wip.Add(1) != 1 {
		return
	}
	for {
		if !c.s.live() {
			return
		}
		if c.i == len(c.os) {
			c.down.OnCompleted()
			return
		}
		o := c.os[c.i]
		c.i++
		p := &concatPart[T]{c: c}
		p.up.init(c.s)
		o.run(&p.up, p)
		if c.wip.Add(-1) == 0 {
			return
		}
	}
}

// concatPart observes one source of a Concat, which runs in a scope of its
// own, below the Concat's: the source's completion ends it, so that what
// the source holds open until its context ends is let go of then, not
// when the whole Concat ends.
type concatPart[T any] struct {
	up scope
	c  *concatenator[T]
}

func (p *concatPart[T]) OnNext(v T) { p.c.down.OnNext(v) }

func (p *concatPart[T]) OnError(err error) {
	p.c.down.OnError(err)
	p.up.cancel(context.Canceled)
}

func (p *concatPart[T]) OnCompleted() {
	p.up.cancel(context.Canceled)
	p.c.next()
}
