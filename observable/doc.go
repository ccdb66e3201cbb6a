// Package observable is rxhystrix's reactive core: a small, typed,
// synchronous-by-default Observable in the manner of RxJava, on which
// commands and metrics streams are built.
//
//	names := observable.Map(observable.Just(1, 2, 3), func(id int) string {
//		return fmt.Sprint("user-", id)
//	})
//	first, err := names.Filter(isActive).First(ctx)
//
// # Semantics
//
// An [Observable] is a small value holding its source. It is cold:
// every subscription runs the source anew. Notifications follow the Rx
// grammar, OnNext any number of times then at most one of OnError and
// OnCompleted, and an [Observer] is never called concurrently: operators
// that join concurrent sources ([Merge], [FlatMap], [Zip2], [Subject])
// serialize their deliveries without making any goroutine wait for
// another's delivery.
//
// Nothing switches goroutines unless it must. Subscribe runs the source
// on the calling goroutine, so a synchronous pipeline, such as
// Defer(...).Map(...).First(ctx), runs start to finish inside the call
// with no goroutine and no channel. The operators that start goroutines
// say so: [Observable.SubscribeOn] (on the [Scheduler]'s goroutine),
// [Observable.Timeout] and [IntervalOn] (the clock's timer callbacks),
// [FromChannel] (one reader per subscription), [Observable.ToFuture]
// (one per Future that its Get does not take over, started by a
// goroutine that serves them all), [Observable.Retry] (a retry after a
// backoff starts on the clock's timer callback) and [Observable.Hedge]
// and [HedgeStream] (each hedge on a goroutine of its own). Each of those
// goroutines ends when its subscription ends, the starter once nothing is
// handed to it.
//
// # Fusion
//
// A source that can hand over its result without a subscription says so,
// and the consumers that wait for one result take it directly (the scalar
// fusion of RxJava 2 and Reactor). A [Single], the source of exactly one
// result ([FromSingle], [FromFunc], [Just] of one value, [Error], [Zip2]
// of Singles), is called by First, Last and ToSlice and handed an
// observer by ToFuture, ReplayNow and Zip2. A [FirstProducer], a source of
// any number of values that knows its first one ([FromProducer]), is
// asked for it by First. Every other operator subscribes as it would to
// any source, so fusion changes what a pipeline costs, never what it
// does.
//
// # Cancellation
//
// Every subscription has a context, the one given to Subscribe (or First,
// ToSlice, ToFuture...) narrowed to the subscription. The source sees it
// (the ctx argument of [Create]'s function) and it is done as soon as the
// subscriber needs nothing more: on Unsubscribe, when the caller's
// context ends, after the terminal event, when a Take or First has its
// values, when a Timeout fires, or when a sibling fails in a Merge,
// FlatMap or Zip2. Contexts derived from it with package context hook
// into it without a watcher goroutine.
//
// # Where Go differs from RxJava and Hystrix
//
//   - A subscription is cancelled through its context rather than a
//     Subscription object threaded through operators; [Subscription]
//     exists for the caller, and DoOnUnsubscribe runs only when a
//     subscription is cancelled before its terminal event (RxJava 1
//     unsubscribes after every terminal event; Hystrix filters those out
//     by hand). [Observable.Finally] runs in both cases.
//   - A panic in a function given to an operator is not turned into
//     OnError: it propagates, as panics do in Go. The command package
//     recovers panics in user code and counts them as failures.
//   - [Observable.Timeout] follows Hystrix's timeout operator, not RxJava's
//     per-item timeout: the first notification disarms it.
//   - [Scan] emits its seed first, as RxJava's scan with an initial value
//     does.
//   - [Observable.ToFuture] never blocks: it subscribes on a new
//     goroutine (Hystrix's queue() blocks the caller under semaphore
//     isolation). The Future holds the last value rather than insisting
//     on exactly one. A [Future.Get] that could only wait runs the work
//     of a [Joinable] Single itself (through Join, for a [Joiner]) if
//     nothing has started it yet, as a Java ForkJoinTask's join runs a
//     task no worker has taken; such work waits for it about ten
//     microseconds before it starts (a millisecond while all other such
//     work is being taken over). First of [Zip2] of
//     two Singles hands over a first Single that is asynchronous and
//     joinable in the same way, and calls the second meanwhile: the
//     first starts beside a second that takes longer than that, and is
//     called after one that answers sooner.
//   - There is no backpressure: queues between concurrent producers and a
//     busy observer grow as needed.
//
// # rxgo
//
// The bridge to rxgo v2, for users who compose with rxgo's operators, is
// package [github.com/rxhystrix/rxhystrix/observable/rxgo]: its ToRx turns
// an Observable into an rxgo Observable, with backpressure, and its FromRx
// turns one back. It is a package of its own so that importing this one
// does not link rxgo.
//
// Bad input to a constructor or operator (a nil function, a negative
// count or duration) panics at once with a message that names the
// argument.
package observable
