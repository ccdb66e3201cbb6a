package command_test

import (
	"context"
	"errors"
	"fmt"
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
	v, err := getUser.Execute(context.Background(), 7)
	fmt.Println(v, err)
	fmt.Println("attempts:", calls)
	// Output:
	// user-7 <nil>
	// attempts: 2
}
