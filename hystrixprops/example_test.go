package hystrixprops_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/hystrixprops"
)

// A service moving from Hystrix keeps its properties: the command's own
// property beats the code's value, which beats the default property.
func Example() {
	props, err := hystrixprops.Parse(strings.NewReader(`
hystrix.command.default.execution.isolation.thread.timeoutInMilliseconds=2000
hystrix.command.default.circuitBreaker.requestVolumeThreshold=10
hystrix.command.GetUser.circuitBreaker.errorThresholdPercentage=25
hystrix.command.GetUser.execution.isolation.thread.interruptOnTimeout=false
server.port=8080
`))
	if err != nil {
		fmt.Println(err)
		return
	}
	r := command.NewRegistry()
	defer r.Close()
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		return "Ada", nil
	}, command.WithRegistry(r), command.WithConfig(props.Command("GetUser", command.Config{
		Timeout: 500 * time.Millisecond,
	})))
	fmt.Println(getUser.Execute(context.Background(), 1))

	cfg, _ := r.Config("GetUser")
	b := r.Breaker("GetUser").Config()
	fmt.Println(cfg.Timeout, b.RequestVolumeThreshold, b.ErrorThresholdPercentage)
	fmt.Println(props.Ignored())
	// Output:
	// Ada <nil>
	// 500ms 10 25
	// [hystrix.command.GetUser.execution.isolation.thread.interruptOnTimeout: a run's context always ends at its timeout]
}

// A property Hystrix would ignore, misspelt, is refused.
func ExampleParse() {
	_, err := hystrixprops.Parse(strings.NewReader("hystrix.command.GetUser.circuitBreaker.errorThresholdPercent=25\n"))
	fmt.Println(err)
	// Output:
	// hystrixprops: bad property hystrix.command.GetUser.circuitBreaker.errorThresholdPercent: no such property
}

// A Source puts new properties in force for every command configured
// through it: after its file changed, say.
func ExampleSource_Set() {
	r := command.NewRegistry()
	defer r.Close()
	first, _ := hystrixprops.Parse(strings.NewReader("hystrix.command.default.circuitBreaker.forceOpen=false\n"))
	props := hystrixprops.NewSource(r, first)
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		return "Ada", nil
	}, command.WithRegistry(r), command.WithConfig(props.Command("GetUser", command.Config{})))
	fmt.Println(getUser.Execute(context.Background(), 1))

	next, _ := hystrixprops.Parse(strings.NewReader("hystrix.command.GetUser.circuitBreaker.forceOpen=true\n"))
	fmt.Println(props.Set(next))
	_, err := getUser.Execute(context.Background(), 1)
	fmt.Println(err)
	// Output:
	// Ada <nil>
	// <nil>
	// GetUser short-circuited and no fallback available
}
