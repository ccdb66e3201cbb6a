package command_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/observable"
)

// conn stands for a value that holds something open.
type conn struct{ id int }

func (c *conn) Close() { fmt.Println("closed conn", c.id) }

// WithDiscard closes a value nobody receives: here the connection one
// command opened for a pair whose other half failed.
func ExampleCommand_WithDiscard() {
	r := command.NewRegistry()
	defer r.Close()
	cfg := command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation})
	open := command.New("OpenConn", func(ctx context.Context, id int) (*conn, error) {
		return &conn{id: id}, nil
	}, command.WithRegistry(r), cfg).WithDiscard((*conn).Close)
	quota := command.New("GetQuota", func(ctx context.Context, id int) (int, error) {
		return 0, errors.New("quota service down")
	}, command.WithRegistry(r), cfg)

	ctx := context.Background()
	_, err := observable.Zip2(open.ToObservable(ctx, 7), quota.ToObservable(ctx, 7),
		func(c *conn, q int) string { return fmt.Sprint(c.id, q) }).First(ctx)
	fmt.Println(err)
	// Output:
	// closed conn 7
	// GetQuota failed and no fallback available (cause: quota service down)
}

// A collapser's WithDiscard closes the results of its batches that no
// caller receives: here a batch that answered three connections for two
// requests, so that neither request can have its own.
func ExampleCollapser_WithDiscard() {
	r := command.NewRegistry()
	defer r.Close()
	open := command.NewCollapser("OpenConns", func(ctx context.Context, ids []int) ([]*conn, error) {
		return []*conn{{id: 1}, {id: 2}, {id: 3}}, nil
	}, command.WithRegistry(r), command.WithCollapserConfig(command.CollapserConfig{
		Scope: command.GlobalScope, MaxRequestsInBatch: 2,
	})).WithDiscard((*conn).Close)

	ctx := context.Background()
	first, second := open.Queue(ctx, 1), open.Queue(ctx, 2)
	_, err1 := first.Get(ctx)
	_, err2 := second.Get(ctx)
	fmt.Println(errors.Is(err1, command.ErrBatchResultCount), errors.Is(err2, command.ErrBatchResultCount))
	// Output:
	// closed conn 1
	// closed conn 2
	// closed conn 3
	// true true
}

// An ObservableCommand's WithDiscard closes a value nobody receives: here
// the connection its Observable opened only after the timeout, when the
// fallback had answered.
func ExampleObservableCommand_WithDiscard() {
	r := command.NewRegistry()
	defer r.Close()
	open := command.NewObservable("OpenConnStream", func(ctx context.Context, id int) observable.Observable[*conn] {
		return observable.FromFunc(func(ctx context.Context) (*conn, error) {
			<-ctx.Done() // slow: the timeout ends the wait
			return &conn{id: id}, nil
		})
	}, command.WithRegistry(r), command.WithConfig(command.Config{
		Isolation: command.SemaphoreIsolation,
		Timeout:   10 * time.Millisecond,
	})).WithFallback(func(ctx context.Context, id int, err error) (*conn, error) {
		return &conn{id: 0}, nil // a shared, idle connection
	}).WithDiscard((*conn).Close)

	conns, err := open.Execute(context.Background(), 7)
	fmt.Println(len(conns), conns[0].id, err)
	// Output:
	// closed conn 7
	// 1 0 <nil>
}
