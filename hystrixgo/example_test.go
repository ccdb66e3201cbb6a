package hystrix_test

import (
	"context"
	"errors"
	"fmt"

	hystrix "github.com/rxhystrix/rxhystrix/hystrixgo"
)

func ExampleDo() {
	hystrix.ConfigureCommand("example_do", hystrix.CommandConfig{Timeout: 500, MaxConcurrentRequests: 5})
	err := hystrix.Do("example_do", func() error {
		return errors.New("downstream down")
	}, func(err error) error {
		fmt.Println("fallback after:", err)
		return nil
	})
	fmt.Println("Do:", err)
	// Output:
	// fallback after: downstream down
	// Do: <nil>
}

func ExampleGo() {
	errs := hystrix.Go("example_go", func() error {
		return errors.New("downstream down")
	}, func(err error) error {
		return errors.New("no cached copy")
	})
	fmt.Println(<-errs)
	// Output: fallback failed with 'no cached copy'. run error was 'downstream down'
}

func ExampleGetCircuit() {
	cb, created, _ := hystrix.GetCircuit("example_circuit")
	_, again, _ := hystrix.GetCircuit("example_circuit")
	fmt.Println(cb.Name, created, again, cb.IsOpen())
	// Output: example_circuit true false false
}

func ExampleDoC() {
	err := hystrix.DoC(context.Background(), "example_doc", func(ctx context.Context) error {
		return nil
	}, nil)
	fmt.Println(err)
	// Output: <nil>
}
