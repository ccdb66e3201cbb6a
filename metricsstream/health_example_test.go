package metricsstream_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/rxhystrix/rxhystrix/breaker"
	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// The health of a service names its open circuits: here one forced open
// by configuration.
func ExampleHealthHandler() {
	reg := command.NewRegistry(command.WithClock(clock.NewManual(start)))
	defer reg.Close()
	getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) { return "ann", nil },
		command.WithRegistry(reg), command.WithConfig(command.Config{Group: "Users", Breaker: breaker.Config{ForceOpen: true}}))
	_, err := getUser.Execute(context.Background(), 1)
	fmt.Println(errors.Is(err, command.ErrShortCircuited))

	rec := httptest.NewRecorder()
	metricsstream.HealthHandler(reg.Metrics()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/health", nil))
	fmt.Print(rec.Code, " ", rec.Body)
	// Output:
	// true
	// 200 {"status":"CIRCUIT_OPEN","openCircuitBreakers":["Users::GetUser"]}
}
