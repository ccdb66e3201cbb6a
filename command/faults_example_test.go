package command_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/rxhystrix/rxhystrix/command"
)

// A command that fails the requests a test marks, and only those: the
// injected error stands for its downstream's, so the fallback answers,
// and the status counts the fault.
func ExampleFaultConfig() {
	reg := command.NewRegistry()
	defer reg.Close()
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		return fmt.Sprint("user-", id), nil
	}, command.WithRegistry(reg), command.WithConfig(command.Config{
		Isolation: command.SemaphoreIsolation,
		Faults:    command.FaultConfig{Enabled: true, ErrorPercentage: 100, MarkedOnly: true},
	})).WithFallback(func(ctx context.Context, id int, err error) (string, error) {
		fmt.Println("fallback for:", errors.Unwrap(err))
		return "anonymous", nil
	})

	ctx := context.Background()
	user, _ := getUser.Execute(ctx, 7)
	fmt.Println("a user's request:", user)
	user, _ = getUser.Execute(command.WithFaultInjection(ctx, "GetUser"), 7)
	fmt.Println("a marked request:", user)
	fmt.Println("faults injected:", getUser.Metrics().Snapshot().Status.Faults.Errors)
	// Output:
	// a user's request: user-7
	// fallback for: command: injected fault
	// a marked request: anonymous
	// faults injected: 1
}
