package command_test

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
)

// A backlog lets a call that finds every permit taken wait for one,
// rather than be refused at once: here the key's one permit is held,
// the second call waits, and it runs once the first gives the permit
// back.
func ExampleBacklogConfig() {
	r := command.NewRegistry()
	defer r.Close()
	held, giveBack := make(chan struct{}), make(chan struct{})
	reserve := command.New("Reserve", func(ctx context.Context, item int) (string, error) {
		if item == 1 {
			close(held)
			<-giveBack
		}
		return fmt.Sprint("reserved item ", item), nil
	}, command.WithRegistry(r), command.WithConfig(command.Config{
		Isolation:             command.SemaphoreIsolation,
		MaxConcurrentRequests: 1,
		Timeout:               -1,
		Backlog:               command.BacklogConfig{Size: 10, Timeout: 5 * time.Second},
	}))
	ctx := context.Background()
	first, second := make(chan string, 1), make(chan string, 1)
	go func() { v, _ := reserve.Execute(ctx, 1); first <- v }()
	<-held
	go func() { v, _ := reserve.Execute(ctx, 2); second <- v }()

	metrics := reserve.Metrics()
	for st, _ := metrics.Status(); st.Backlog.Waiting == 0; st, _ = metrics.Status() {
		runtime.Gosched() // until the second call waits
	}
	st, _ := metrics.Status()
	fmt.Printf("%d of %d waiting, %s\n", st.Backlog.Waiting, st.Backlog.Size, st.Backlog.Order)
	close(giveBack)
	fmt.Println(<-first)
	fmt.Println(<-second)
	// Output:
	// 1 of 10 waiting, LIFO
	// reserved item 1
	// reserved item 2
}
