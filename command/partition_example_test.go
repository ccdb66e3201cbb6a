package command_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/rxhystrix/rxhystrix/command"
)

// Partitions keep a share of a key's permits for the executions that
// need it most: here batch jobs have taken all four permits, and a live
// request is still served, from live's guaranteed half, while another
// batch job is refused.
func ExampleWithPartition() {
	r := command.NewRegistry()
	defer r.Close()
	started, finish := make(chan struct{}), make(chan struct{})
	search := command.New("Search", func(ctx context.Context, query string) (string, error) {
		if command.PartitionFrom(ctx) == "batch" {
			started <- struct{}{}
			<-finish
		}
		return "results for " + query, nil
	}, command.WithRegistry(r), command.WithConfig(command.Config{
		Isolation:             command.SemaphoreIsolation,
		MaxConcurrentRequests: 4,
		Partitions:            []command.Partition{{Name: "live", Share: 0.5}, {Name: "batch", Share: 0.5}},
	}))

	batch := command.WithPartition(context.Background(), "batch")
	done := make(chan error)
	for range 4 {
		go func() {
			_, err := search.Execute(batch, "reindex")
			done <- err
		}()
		<-started
	}

	fmt.Println(search.Execute(command.WithPartition(context.Background(), "live"), "shoes"))
	_, err := search.Execute(batch, "reindex")
	fmt.Println(errors.Is(err, command.ErrSemaphoreRejected))

	st, _ := search.Metrics().Status()
	for _, p := range st.Partitions {
		fmt.Printf("%s: %d in flight of %d guaranteed, %d rejected\n", p.Name, p.InFlight, p.Guaranteed, p.Rejected)
	}
	close(finish)
	for range 4 {
		<-done
	}
	// Output:
	// results for shoes <nil>
	// true
	// live: 0 in flight of 2 guaranteed, 0 rejected
	// batch: 4 in flight of 2 guaranteed, 1 rejected
}
