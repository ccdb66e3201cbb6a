package command_test

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
)

// A request context gives the commands of one request a cache and a log:
// the second and third lookups of user 42 are served from the cache.
func ExampleWithRequestContext() {
	mc := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := command.NewRegistry(command.WithClock(mc))
	defer reg.Close()
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		mc.Advance(12 * time.Millisecond) // the call takes 12ms
		return "user-" + strconv.Itoa(id), nil
	}, command.WithRegistry(reg)).WithCacheKey(strconv.Itoa)

	ctx := command.WithRequestContext(context.Background()) // at the start of the request
	for range 3 {
		u, err := getUser.Execute(ctx, 42)
		fmt.Println(u, err)
	}
	fmt.Println(command.RequestLogFrom(ctx))
	// Output:
	// user-42 <nil>
	// user-42 <nil>
	// user-42 <nil>
	// GetUser[SUCCESS][12ms], GetUser[SUCCESS, RESPONSE_FROM_CACHE][0ms]x2
}

// The request log reads as Hystrix's: executions with the same events are
// counted together, with the sum of their latencies.
func ExampleRequestLog_String() {
	mc := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := command.NewRegistry(command.WithClock(mc))
	defer reg.Close()
	getOrders := command.New("GetOrders", func(ctx context.Context, user string) ([]string, error) {
		mc.Advance(time.Second) // too slow: the timeout fires
		<-ctx.Done()
		return nil, ctx.Err()
	}, command.WithRegistry(reg), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation})).WithFallback(func(ctx context.Context, user string, err error) ([]string, error) {
		return nil, nil // no orders shown
	})
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		mc.Advance(5 * time.Millisecond)
		return "user-" + strconv.Itoa(id), nil
	}, command.WithRegistry(reg))

	ctx := command.WithRequestContext(context.Background())
	for id := range 2 {
		u, _ := getUser.Execute(ctx, id)
		_, _ = getOrders.Execute(ctx, u)
	}
	log := command.RequestLogFrom(ctx)
	fmt.Println(log)
	fmt.Println(log.Executions()[1].Events.Contains(metricsstream.Timeout))
	// Output:
	// GetUser[SUCCESS][10ms]x2, GetOrders[TIMEOUT, FALLBACK_SUCCESS][2000ms]x2
	// true
}

// A collapser sends the requests that arrive within its window to the
// batch function as one call.
func ExampleNewCollapser() {
	mc := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := command.NewRegistry(command.WithClock(mc))
	defer reg.Close()
	getUsers := command.NewCollapser("GetUser", func(ctx context.Context, ids []int) ([]string, error) {
		fmt.Println("batch of", ids)
		users := make([]string, len(ids))
		for i, id := range ids {
			users[i] = "user-" + strconv.Itoa(id)
		}
		return users, nil
	}, command.WithRegistry(reg))

	ctx := command.WithRequestContext(context.Background())
	f1, f2, f3 := getUsers.Queue(ctx, 1), getUsers.Queue(ctx, 2), getUsers.Queue(ctx, 3)
	mc.Advance(command.DefaultCollapserDelay) // the window closes
	for _, f := range []interface {
		Get(context.Context) (string, error)
	}{f1, f2, f3} {
		fmt.Println(f.Get(ctx))
	}
	fmt.Println(command.RequestLogFrom(ctx))
	// Output:
	// batch of [1 2 3]
	// user-1 <nil>
	// user-2 <nil>
	// user-3 <nil>
	// GetUserBatch[SUCCESS, COLLAPSED][0ms]
}

// tenantKey is the context key of a caller's tenant.
type tenantKey struct{}

// A batch function reads what its callers' contexts hold: here the
// tenant of each argument's callers.
func ExampleBatchOf() {
	mc := clock.NewManual(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	reg := command.NewRegistry(command.WithClock(mc))
	defer reg.Close()
	getUsers := command.NewCollapser("GetUser", func(ctx context.Context, ids []int) ([]string, error) {
		batch, _ := command.BatchOf(ctx)
		for _, c := range batch.Callers {
			fmt.Printf("user %d for %s\n", ids[c.Arg], c.Context.Value(tenantKey{}))
		}
		return make([]string, len(ids)), nil
	}, command.WithRegistry(reg))

	ctx := command.WithRequestContext(context.Background())
	f1 := getUsers.Queue(context.WithValue(ctx, tenantKey{}, "acme"), 1)
	f2 := getUsers.Queue(context.WithValue(ctx, tenantKey{}, "globex"), 2)
	f3 := getUsers.Queue(context.WithValue(ctx, tenantKey{}, "initech"), 1)
	mc.Advance(command.DefaultCollapserDelay)
	for _, f := range []*observable.Future[string]{f1, f2, f3} {
		f.Get(ctx)
	}
	// Output:
	// user 1 for acme
	// user 1 for initech
	// user 2 for globex
}
