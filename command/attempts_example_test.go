package command_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/observable"
)

// A command whose first call fails is retried after its backoff: each
// attempt is an execution of its own, and the retry is counted RETRIED.
func ExampleRetryConfig() {
	reg := command.NewRegistry()
	defer reg.Close()
	calls := 0
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		calls++
		if calls == 1 {
			return "", errors.New("connection reset")
		}
		return fmt.Sprint("user-", id), nil
	}, command.WithRegistry(reg), command.WithConfig(command.Config{
		Isolation: command.SemaphoreIsolation,
		Retry:     command.RetryConfig{MaxAttempts: 3, Backoff: observable.Backoff{Initial: time.Millisecond}},
		Hedge:     command.HedgeConfig{},
		RateLimit: command.RateLimitConfig{Enabled: true, Rate: 100, MaxWait: 10 * time.Millisecond},
	}))
	ctx := command.WithRequestContext(context.Background())
	v, err := getUser.Execute(ctx, 7)
	fmt.Println(v, err)
	fmt.Println("attempts:", calls)
	for _, e := range command.RequestLogFrom(ctx).Executions() {
		fmt.Println(e.Command, e.Events)
	}
	// Output:
	// user-7 <nil>
	// attempts: 2
	// GetUser [FAILURE]
	// GetUser [SUCCESS, RETRIED]
}

// An ObservableCommand's key retries a stream that failed before its
// first value; the fallback follows a stream that failed after one.
func ExampleRetryConfig_observableCommand() {
	reg := command.NewRegistry()
	defer reg.Close()
	pages := 0
	listUsers := command.NewObservable("ListUsers", func(ctx context.Context, team string) observable.Observable[string] {
		pages++
		switch pages {
		case 1:
			return observable.Error[string](errors.New("connection reset")) // nothing sent: retried
		case 2:
			return observable.Concat(observable.Just("ann", "bob"), observable.Error[string](errors.New("connection reset")))
		}
		return observable.Just("ann", "bob", "cid")
	}, command.WithRegistry(reg), command.WithConfig(command.Config{
		Retry: command.RetryConfig{MaxAttempts: 3, Backoff: observable.Backoff{Initial: time.Millisecond}},
	})).WithFallbackObservable(func(ctx context.Context, team string, err error) observable.Observable[string] {
		return observable.Just("(the rest later)")
	})
	users, err := listUsers.Execute(context.Background(), "ops")
	fmt.Println(users, err)
	fmt.Println("attempts:", pages)
	// Output:
	// [ann bob (the rest later)] <nil>
	// attempts: 2
}

// An ObservableCommand's key hedges a stream that has sent nothing after
// the delay: the first execution to emit is the stream, and the other is
// cancelled, with a Completion of its own.
func ExampleHedgeConfig_observableCommand() {
	reg := command.NewRegistry()
	defer reg.Close()
	var streams atomic.Int32
	stalled := make(chan error, 1)
	listUsers := command.NewObservable("ListUsers", func(ctx context.Context, team string) observable.Observable[string] {
		if streams.Add(1) == 1 { // a replica that stalls until it is cancelled
			return observable.Create(func(ctx context.Context, o observable.Observer[string]) {
				<-ctx.Done()
				stalled <- ctx.Err()
				o.OnError(ctx.Err())
			})
		}
		return observable.Just("ann", "bob")
	}, command.WithRegistry(reg), command.WithConfig(command.Config{
		Isolation: command.SemaphoreIsolation,
		Timeout:   time.Second,
		Hedge:     command.HedgeConfig{MaxHedges: 1, Delay: 10 * time.Millisecond},
	}))
	users, err := listUsers.Execute(context.Background(), "ops")
	fmt.Println(users, err)
	fmt.Println("the stalled stream:", <-stalled)
	// Output:
	// [ann bob] <nil>
	// the stalled stream: context canceled
}

// A call that must not be repeated makes one attempt under OneAttempt,
// though its key retries: its failure goes to the fallback at once.
func ExampleOneAttempt() {
	reg := command.NewRegistry()
	defer reg.Close()
	charges := 0
	charge := command.New("Charge", func(ctx context.Context, cents int) (string, error) {
		charges++
		return "", errors.New("gateway timeout")
	}, command.WithRegistry(reg), command.WithConfig(command.Config{
		Isolation: command.SemaphoreIsolation,
		Retry:     command.RetryConfig{MaxAttempts: 3, Backoff: observable.Backoff{Initial: time.Millisecond}},
	})).WithFallback(func(ctx context.Context, cents int, err error) (string, error) {
		return "queued for later", nil
	})
	v, err := charge.Execute(command.OneAttempt(context.Background()), 1999)
	fmt.Println(v, err)
	fmt.Println("charges:", charges)
	// Output:
	// queued for later <nil>
	// charges: 1
}
