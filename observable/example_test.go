package observable_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/observable"
)

func Example() {
	ctx := context.Background()
	names := observable.Map(observable.Just(1, 2, 3), func(id int) string {
		return fmt.Sprint("user-", id)
	})
	first, err := names.Filter(func(n string) bool { return strings.HasSuffix(n, "2") }).First(ctx)
	fmt.Println(first, err)
	// Output: user-2 <nil>
}

func ExampleJust() {
	vs, err := observable.Just("a", "b", "c").ToSlice(context.Background())
	fmt.Println(vs, err)
	// Output: [a b c] <nil>
}

func ExampleMap() {
	squares := observable.Map(observable.Just(1, 2, 3), func(v int) int { return v * v })
	vs, _ := squares.ToSlice(context.Background())
	fmt.Println(vs)
	// Output: [1 4 9]
}

func ExampleObservable_First() {
	ctx := context.Background()
	v, err := observable.Just(10, 20).First(ctx)
	fmt.Println(v, err)
	_, err = observable.Empty[int]().First(ctx)
	fmt.Println(errors.Is(err, observable.ErrEmpty))
	// Output:
	// 10 <nil>
	// true
}

func ExampleFlatMap() {
	// Each user expands to their orders; FlatMap merges the results.
	orders := map[string][]string{"ann": {"a1", "a2"}, "bob": {"b1"}}
	all := observable.FlatMap(observable.Just("ann", "bob"), func(user string) observable.Observable[string] {
		return observable.Just(orders[user]...)
	})
	vs, _ := all.ToSlice(context.Background())
	fmt.Println(vs)
	// Output: [a1 a2 b1]
}

func ExampleObservable_OnErrorResumeNext() {
	unreliable := observable.Defer(func() observable.Observable[string] {
		return observable.Error[string](errors.New("connection refused"))
	})
	withFallback := unreliable.OnErrorResumeNext(func(err error) observable.Observable[string] {
		return observable.Just("cached answer (" + err.Error() + ")")
	})
	v, err := withFallback.First(context.Background())
	fmt.Println(v, err)
	// Output: cached answer (connection refused) <nil>
}

func ExampleObservable_ToFuture() {
	work := observable.Defer(func() observable.Observable[int] {
		return observable.Just(6 * 7) // runs on the Future's goroutine
	})
	f := work.ToFuture(context.Background()) // returns at once
	<-f.Done()
	v, err := f.Get(context.Background())
	fmt.Println(v, err)
	// Output: 42 <nil>
}

func ExampleObservable_Timeout() {
	_, err := observable.Never[int]().Timeout(10 * time.Millisecond).First(context.Background())
	fmt.Println(err)
	// Output: observable: timed out
}

func ExampleScan() {
	running := observable.Scan(observable.Just(1, 2, 3), 0, func(sum, v int) int { return sum + v })
	vs, _ := running.ToSlice(context.Background())
	fmt.Println(vs) // the seed comes first, as in RxJava
	// Output: [0 1 3 6]
}

func ExampleZip2() {
	pairs := observable.Zip2(observable.Just("a", "b"), observable.Just(1, 2, 3),
		func(s string, n int) string { return fmt.Sprint(s, n) })
	vs, _ := pairs.ToSlice(context.Background())
	fmt.Println(vs)
	// Output: [a1 b2]
}

func ExampleNewBehaviorSubject() {
	s := observable.NewBehaviorSubject("closed")
	s.Observable().SubscribeFunc(context.Background(), func(state string) {
		fmt.Println("state:", state)
	}, nil, nil)
	s.OnNext("open")
	s.OnNext("half-open")
	// Output:
	// state: closed
	// state: open
	// state: half-open
}

func ExampleObservable_Cache() {
	calls := 0
	once := observable.Defer(func() observable.Observable[int] {
		calls++
		return observable.Just(calls)
	}).Cache()
	a, _ := once.First(context.Background())
	b, _ := once.First(context.Background())
	fmt.Println(a, b, calls)
	// Output: 1 1 1
}

func ExampleObservable_Finally() {
	release := func() { fmt.Println("permit released") }
	v, _ := observable.Just(1, 2, 3).Finally(release).Take(1).First(context.Background())
	fmt.Println(v)
	// Output:
	// permit released
	// 1
}

// A Single hands its one result straight to First, with none of a
// subscription's machinery; any other operator subscribes to it as to any
// Observable.
func ExampleFromFunc() {
	price := observable.FromFunc(func(ctx context.Context) (int, error) { return 42, nil })
	v, _ := price.First(context.Background())
	fmt.Println(v)
	doubled, _ := observable.Map(price, func(v int) int { return 2 * v }).ToSlice(context.Background())
	fmt.Println(doubled)
	// Output:
	// 42
	// [84]
}

// lines is a FirstProducer: it emits the lines of a text, and knows the
// first line without splitting the rest.
type lines string

func (l lines) Produce(ctx context.Context, o observable.Observer[string]) {
	for _, line := range strings.Split(string(l), "\n") {
		if ctx.Err() != nil {
			return
		}
		o.OnNext(line)
	}
	o.OnCompleted()
}

func (l lines) ProduceFirst(ctx context.Context) (string, error) {
	first, _, _ := strings.Cut(string(l), "\n")
	return first, nil
}

func ExampleFromProducer() {
	text := observable.FromProducer[string](lines("GET / HTTP/1.1\nHost: example.com\nAccept: */*"))
	ctx := context.Background()
	all, _ := text.ToSlice(ctx)
	first, _ := text.First(ctx) // ProduceFirst: no subscription
	fmt.Println(len(all), first)
	// Output: 3 GET / HTTP/1.1
}

// A stream whose first replica has sent nothing after its delay is asked
// of another replica too: the first to send is the stream, and the other
// is cancelled.
func ExampleHedgeStream() {
	var replicas atomic.Int32
	stalled := make(chan error, 1)
	pages := observable.Create(func(ctx context.Context, o observable.Observer[string]) {
		if replicas.Add(1) == 1 { // the first replica stalls until it is cancelled
			<-ctx.Done()
			stalled <- ctx.Err()
			return
		}
		o.OnNext("page 1")
		o.OnNext("page 2")
		o.OnCompleted()
	})
	hedged := observable.HedgeStream(pages, observable.HedgePolicy{Delay: func() time.Duration { return 10 * time.Millisecond }})
	got, err := hedged.ToSlice(context.Background())
	fmt.Println(got, err)
	fmt.Println("the stalled replica:", <-stalled)
	// Output:
	// [page 1 page 2] <nil>
	// the stalled replica: context canceled
}

// busyError is a server's refusal that says when it can serve again, as
// an HTTP client's error for a 503 with a Retry-After header would.
type busyError struct{ after time.Duration }

func (e busyError) Error() string                     { return "busy" }
func (e busyError) RetryAfter() (time.Duration, bool) { return e.after, true }

func ExampleObservable_Retry() {
	var calls atomic.Int32
	call := observable.FromFunc(func(context.Context) (string, error) {
		if calls.Add(1) < 3 {
			return "", busyError{after: 10 * time.Millisecond} // waited in place of the backoff
		}
		return "served", nil
	})
	v, err := call.Retry(observable.RetryPolicy{MaxAttempts: 3}).First(context.Background())
	fmt.Println(v, err, "after", calls.Load(), "attempts")
	// Output: served <nil> after 3 attempts
}
