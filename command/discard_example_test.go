package command_test

import (
	"context"
	"errors"
	"fmt"

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
