// Compose builds an order page from commands composed as Observables:
// with the operators of package observable (Zip2, FlatMap, Merge), with
// rxgo's operators through the bridge of package observable/rxgo (ToRx,
// FromRx), and as futures with Queue; a subscriber of the commands'
// metrics streams counts every execution and its events.
//
// Every command is a Hystrix command: a failing dependency inside a
// composition is answered by its fallback, and the composition goes on.
//
//	go run ./examples/compose
package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/observable"
	"github.com/rxhystrix/rxhystrix/observable/rxgo"
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "compose:", err)
		os.Exit(1)
	}
}

// executions is how many command executions run makes: GetUser 2,
// GetRecommendations 1, GetOrders 2, GetPrice 6.
const executions = 11

func run(w io.Writer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	reg := command.NewRegistry()
	defer reg.Close()
	s := newShop(reg)
	completions := watchCompletions(ctx, s.getUser.Metrics(), s.getRecommendations.Metrics(),
		s.getOrders.Metrics(), s.getPrice.Metrics())
	const userID = 7

	// Zip2 pairs the user with the recommendations, fetched concurrently.
	header, err := observable.Zip2(
		s.getUser.ToObservable(ctx, userID),
		s.getRecommendations.ToObservable(ctx, userID),
		func(u user, recs []string) string {
			return fmt.Sprintf("%s (user %d), recommended: %s", u.Name, u.ID, strings.Join(recs, ", "))
		}).First(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-36s %s\n", "Zip2(GetUser, GetRecommendations):", header)

	// FlatMap chains the orders of the user after the user.
	orders, err := observable.FlatMap(s.getUser.ToObservable(ctx, userID), func(u user) observable.Observable[order] {
		return s.getOrders.ToObservable(ctx, u.ID)
	}).ToSlice(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-36s %s\n", "FlatMap(GetUser -> GetOrders):", formatOrders(orders))

	// rxgo's operators on a command, through the bridge and back.
	big := rxgo.ToRx(s.getOrders.ToObservable(ctx, userID)).
		Filter(func(v any) bool { return v.(order).Total > 100 }).
		Map(func(_ context.Context, v any) (any, error) { return v.(order).ID, nil })
	ids, err := rxgo.FromRx[string](big).ToSlice(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "%-36s %s\n", "rxgo Filter(total > 100).Map(ID):", strings.Join(ids, ", "))

	// Merge runs the price lookups at once and takes the prices as they
	// come.
	skus := []string{"apple", "bread", "cheese"}
	var lookups []observable.Observable[float64]
	for _, sku := range skus {
		lookups = append(lookups, s.getPrice.ToObservable(ctx, sku))
	}
	merged, err := observable.Merge(lookups...).ToSlice(ctx)
	if err != nil {
		return err
	}
	total := 0.0
	for _, p := range merged {
		total += p
	}
	fmt.Fprintf(w, "%-36s %d prices, total %.2f\n", "Merge(GetPrice x3):", len(merged), total)

	// Queue starts each lookup and returns a future at once.
	futures := make([]*observable.Future[float64], len(skus))
	for i, sku := range skus {
		futures[i] = s.getPrice.Queue(ctx, sku)
	}
	var quoted []string
	for i, f := range futures {
		p, err := f.Get(ctx)
		if err != nil {
			return err
		}
		quoted = append(quoted, fmt.Sprintf("%s %.2f", skus[i], p))
	}
	fmt.Fprintf(w, "%-36s %s\n", "Queue(GetPrice) futures:", strings.Join(quoted, ", "))

	// The metrics: one completion per execution, with its events.
	seen := map[string]map[string]int{} // command → events → count
	for range executions {
		select {
		case c := <-completions:
			if seen[c.CommandKey] == nil {
				seen[c.CommandKey] = map[string]int{}
			}
			seen[c.CommandKey][c.Events.String()]++
		case <-ctx.Done():
			return fmt.Errorf("waiting for the completions: %w", ctx.Err())
		}
	}
	fmt.Fprintln(w, "executions seen on the metrics' Completions streams:")
	for _, key := range slices.Sorted(maps.Keys(seen)) {
		for _, events := range slices.Sorted(maps.Keys(seen[key])) {
			fmt.Fprintf(w, "  %-20s %d x %s\n", key, seen[key][events], events)
		}
	}
	return nil
}

func formatOrders(orders []order) string {
	var s []string
	for _, o := range orders {
		s = append(s, fmt.Sprintf("%s %.2f", o.ID, o.Total))
	}
	return strings.Join(s, ", ")
}

// watchCompletions merges the completion streams of the metrics into one
// channel, until ctx ends.
func watchCompletions(ctx context.Context, ms ...*metricsstream.CommandMetrics) <-chan metricsstream.Completion {
	var streams []observable.Observable[metricsstream.Completion]
	for _, m := range ms {
		streams = append(streams, m.Completions())
	}
	ch := make(chan metricsstream.Completion, 64)
	observable.Merge(streams...).SubscribeFunc(ctx, func(c metricsstream.Completion) {
		select {
		case ch <- c:
		case <-ctx.Done():
		}
	}, nil, nil)
	return ch
}
