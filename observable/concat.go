package observable

import "sync/atomic"

// Concat returns an Observable that subscribes to each source in turn,
// the next one when the previous has completed, and emits their values.
// It fails with the first error. Long runs of synchronous sources do not
// deepen the stack. Concat of no sources completes at once.
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
		o.run(c.s, c)
		if c.wip.Add(-1) == 0 {
			return
		}
	}
}

func (c *concatenator[T]) OnNext(v T)        { c.down.OnNext(v) }
func (c *concatenator[T]) OnError(err error) { c.down.OnError(err) }
func (c *concatenator[T]) OnCompleted()      { c.next() }
