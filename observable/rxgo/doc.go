// Package rxgo bridges rxhystrix's observables and rxgo v2
// (github.com/reactivex/rxgo/v2), for users who compose with rxgo's
// operators: [ToRx] turns an [observable.Observable] into an
// rx.Observable, and [FromRx] turns one back.
//
// The package has rxgo's name, so a file that uses both imports one of
// them under another:
//
//	import (
//		rx "github.com/reactivex/rxgo/v2"
//
//		"github.com/rxhystrix/rxhystrix/observable"
//		"github.com/rxhystrix/rxhystrix/observable/rxgo"
//	)
//
//	evens := rxgo.ToRx(observable.Just(1, 2, 3, 4)).
//		Filter(func(v any) bool { return v.(int)%2 == 0 })
//	vs, err := rxgo.FromRx[int](evens).ToSlice(ctx) // [2 4]
//
// The bridge is a package of its own so that programs that do not use
// rxgo do not link it: rxgo's non-test code imports testify, yaml and
// gods. It is built on package observable's exported API alone.
//
// # Contexts and cancellation
//
// rxgo has no unsubscribe: an observation ends when its source is
// exhausted or when the context given with rx.WithContext is done. So a
// consumer of [ToRx] that stops reading before the end (First, Take, a
// loop that breaks) must pass rx.WithContext and cancel that context once
// it has what it needs; until then the bridge waits to hand over its next
// value, and the subscription to the Observable stays live. Cancelling it
// ends the subscription: the source sees its context done.
//
// [FromRx] observes rxgo with rx.WithContext of each subscription's
// context, so rxgo's stages stop when the subscriber stops (Unsubscribe,
// First, Take, the end of the caller's context).
//
// # Backpressure
//
// [ToRx] hands rxgo one value at a time: the source's OnNext returns once
// rxgo has taken the value (or the observation's context is done). So an
// endless synchronous source delivers its first value at once, nothing
// piles up in memory, and a slow rxgo consumer slows the source down, the
// producer of a hot source such as a Subject included.
//
// # Goroutines
//
// Each observation of a ToRx Observable runs one goroutine, rxgo's
// producer, on which a synchronous Observable runs; it ends when the
// Observable terminates or the observation's context is done. Each
// subscription to a FromRx Observable starts one goroutine that reads
// rxgo's channel; it ends when the subscription ends. rxgo's operators
// start goroutines of their own, which end with the observation.
package rxgo
