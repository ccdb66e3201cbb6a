package command_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/observable"
)

// A command wraps a call to a dependency; Execute runs it and returns its
// value.
func ExampleCommand_Execute() {
	r := command.NewRegistry()
	defer r.Close()
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		return fmt.Sprintf("user-%d", id), nil
	}, command.WithRegistry(r))

	name, err := getUser.Execute(context.Background(), 42)
	fmt.Println(name, err)
	// Output: user-42 <nil>
}

// When run fails, times out, is rejected or short-circuited, the fallback
// answers; it is told why with an *Error.
func ExampleCommand_Execute_fallback() {
	r := command.NewRegistry()
	defer r.Close()
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		return "", errors.New("connection refused")
	}, command.WithRegistry(r)).WithFallback(func(ctx context.Context, id int, err error) (string, error) {
		fmt.Println("fallback after:", err)
		return "anonymous", nil
	})

	name, err := getUser.Execute(context.Background(), 42)
	fmt.Println(name, err)
	// Output:
	// fallback after: GetUser failed (cause: connection refused)
	// anonymous <nil>
}

// A timeout: the caller of a pool-isolated command returns when it runs
// out, with the fallback's value if there is one.
func ExampleCommand_Execute_timeout() {
	r := command.NewRegistry()
	defer r.Close()
	slow := command.New("Slow", func(ctx context.Context, _ struct{}) (string, error) {
		<-ctx.Done() // run's context ends at the timeout
		return "", ctx.Err()
	}, command.WithRegistry(r), command.WithConfig(command.Config{Timeout: 10 * time.Millisecond}))

	_, err := slow.Execute(context.Background(), struct{}{})
	fmt.Println(err)
	fmt.Println(errors.Is(err, command.ErrTimeout))
	// Output:
	// Slow timed-out and no fallback available
	// true
}

// The errors of a command tell the failures apart with errors.Is and
// errors.As.
func ExampleError_checking() {
	r := command.NewRegistry()
	defer r.Close()
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		if id < 0 {
			return "", command.BadRequest(fmt.Errorf("id %d is negative", id))
		}
		return "", errors.New("connection refused")
	}, command.WithRegistry(r), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation}))

	for _, id := range []int{-1, 42} {
		_, err := getUser.Execute(context.Background(), id)
		var cmdErr *command.Error
		switch {
		case command.IsBadRequest(err):
			fmt.Println("the caller's fault:", err)
		case errors.Is(err, command.ErrTimeout), errors.Is(err, command.ErrShortCircuited):
			fmt.Println("try later")
		case errors.As(err, &cmdErr):
			fmt.Println(cmdErr.Failure, "-", cmdErr.Cause)
			fmt.Println(err)
		}
	}
	// Output:
	// the caller's fault: bad request: id -1 is negative
	// COMMAND_EXCEPTION - connection refused
	// GetUser failed and no fallback available (cause: connection refused)
}

// Do runs a function as a command of a key, in the style of hystrix-go.
func ExampleDo() {
	err := command.Do(context.Background(), "Example.Do", func(ctx context.Context) error {
		return errors.New("service down")
	}, func(ctx context.Context, err error) error {
		fmt.Println("fallback:", err)
		return nil
	})
	fmt.Println(err)
	// Output:
	// fallback: Example.Do failed (cause: service down)
	// <nil>
}

// An observable command emits any number of values; Execute gathers
// them, ToObservable streams them.
func ExampleObservableCommand() {
	r := command.NewRegistry()
	defer r.Close()
	listUsers := command.NewObservable("ListUsers", func(ctx context.Context, n int) observable.Observable[string] {
		return observable.Create(func(ctx context.Context, o observable.Observer[string]) {
			for i := 1; i <= n; i++ {
				o.OnNext(fmt.Sprintf("user-%d", i))
			}
			o.OnCompleted()
		})
	}, command.WithRegistry(r))

	users, err := listUsers.Execute(context.Background(), 3)
	fmt.Println(users, err)
	listUsers.ToObservable(context.Background(), 2).SubscribeFunc(context.Background(),
		func(u string) { fmt.Println("got", u) }, nil, func() { fmt.Println("done") })
	// Output:
	// [user-1 user-2 user-3] <nil>
	// got user-1
	// got user-2
	// done
}

// ToObservable is a cold Observable of the command's value, to compose
// with the operators of package observable.
func ExampleCommand_ToObservable() {
	r := command.NewRegistry()
	defer r.Close()
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		return fmt.Sprintf("user-%d", id), nil
	}, command.WithRegistry(r))

	shout := observable.Map(getUser.ToObservable(context.Background(), 7), strings.ToUpper)
	name, err := shout.First(context.Background())
	fmt.Println(name, err)
	// Output: USER-7 <nil>
}

// Queue starts the command and returns a Future at once.
func ExampleCommand_Queue() {
	r := command.NewRegistry()
	defer r.Close()
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		return fmt.Sprintf("user-%d", id), nil
	}, command.WithRegistry(r))

	f := getUser.Queue(context.Background(), 9)
	// ... do other work ...
	name, err := f.Get(context.Background())
	fmt.Println(name, err)
	// Output: user-9 <nil>
}

// WithPoolKey gives each downstream its own pool, so that a hung one
// cannot take the workers of the others.
func ExampleCommand_WithPoolKey() {
	r := command.NewRegistry()
	defer r.Close()
	fetch := command.New("Fetch", func(ctx context.Context, url string) (string, error) {
		return "fetched " + url, nil
	}, command.WithRegistry(r)).WithPoolKey(func(url string) string { return url })
	r.ConfigurePool("http://b.example", command.PoolConfig{CoreSize: 2})

	for _, url := range []string{"http://a.example", "http://b.example", "http://a.example"} {
		body, _ := fetch.Execute(context.Background(), url)
		fmt.Println(body)
	}
	fmt.Println(r.PoolCount(), "pools")
	// Output:
	// fetched http://a.example
	// fetched http://b.example
	// fetched http://a.example
	// 2 pools
}

// Configure changes a key's configuration while its commands run.
func ExampleRegistry_Configure() {
	r := command.NewRegistry()
	defer r.Close()
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		return "", errors.New("unreachable")
	}, command.WithRegistry(r))

	if err := r.Configure("GetUser", command.Config{MaxConcurrentRequests: -1}); err != nil {
		fmt.Println(err)
	}
	r.Configure("GetUser", command.Config{FallbackDisabled: true})
	_, err := getUser.Execute(context.Background(), 1)
	fmt.Println(err)
	// Output:
	// command: Config.MaxConcurrentRequests: -1 is negative
	// GetUser failed and fallback disabled (cause: unreachable)
}

// ConfigureFunc changes one field of a key's configuration and keeps the
// rest, even when another caller changes the configuration meanwhile.
func ExampleRegistry_ConfigureFunc() {
	r := command.NewRegistry()
	defer r.Close()
	command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		return "Ada", nil
	}, command.WithRegistry(r), command.WithConfig(command.Config{Timeout: 300 * time.Millisecond}))

	err := r.ConfigureFunc("GetUser", func(cfg *command.Config) {
		cfg.Faults = command.FaultConfig{Enabled: true, ErrorPercentage: 5}
	})
	cfg, _ := r.Config("GetUser")
	fmt.Println(err, cfg.Timeout, cfg.Faults.ErrorPercentage)
	// Output:
	// <nil> 300ms 5
}

// A server that refuses a call can tell its caller when the command
// would admit another: here, when the rate limit's next token is due.
func ExampleRegistry_RetryAfter() {
	registry := command.NewRegistry(command.WithClock(clock.NewManual(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))))
	defer registry.Close()
	search := command.New("Search", func(ctx context.Context, q string) (string, error) {
		return "results for " + q, nil
	}, command.WithRegistry(registry), command.WithConfig(command.Config{
		Isolation: command.SemaphoreIsolation,
		RateLimit: command.RateLimitConfig{Enabled: true, Rate: 2, Burst: 1},
	}))
	fmt.Println(search.Execute(context.Background(), "lamps"))
	_, err := search.Execute(context.Background(), "lamps")
	fmt.Println(errors.Is(err, command.ErrRateLimited))
	fmt.Println(registry.RetryAfter(err))
	// Output:
	// results for lamps <nil>
	// true
	// 500ms true
}

// A lookup whose "not found" is the caller's answer, not the database's
// failure: WithBadRequests makes it a bad request, which gets no fallback
// and never trips the breaker.
func ExampleCommand_WithBadRequests() {
	r := command.NewRegistry()
	defer r.Close()
	errNoRows := errors.New("no rows in result set")
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		return "", errNoRows // as a database driver returns it
	}, command.WithRegistry(r)).
		WithBadRequests(func(err error) bool { return errors.Is(err, errNoRows) }).
		WithFallback(func(ctx context.Context, id int, err error) (string, error) { return "anonymous", nil })

	_, err := getUser.Execute(context.Background(), 42)
	fmt.Println(errors.Is(err, errNoRows), command.IsBadRequest(err))
	// Output: true true
}
