package oteltrace_test

import (
	"context"
	"errors"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/oteltrace"
)

func Example() {
	recorder := tracetest.NewSpanRecorder() // a program exports its spans instead
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder))
	defer tp.Shutdown(context.Background())
	reg := command.NewRegistry()
	defer reg.Close()
	reg.SetTracer(oteltrace.New(tp))

	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) {
		return "", errors.New("users: connection refused")
	}, command.WithRegistry(reg)).WithFallback(func(ctx context.Context, id int, err error) (string, error) {
		return "guest", nil
	})
	v, _ := getUser.Execute(context.Background(), 7)
	fmt.Println("answer:", v)

	for _, s := range recorder.Ended() {
		for _, kv := range s.Attributes() {
			if kv.Key == oteltrace.EventsKey {
				fmt.Println("span:", s.Name(), kv.Value.AsStringSlice(), s.Status().Code)
			}
		}
	}
	// Output:
	// answer: guest
	// span: GetUser [FAILURE FALLBACK_SUCCESS] Unset
}
