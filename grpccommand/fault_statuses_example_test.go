package grpccommand_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"google.golang.org/grpc/status"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/grpccommand"
	"github.com/rxhystrix/rxhystrix/httpcommand"
)

// An operator injects the status a draining server answers into a
// command, over the faults handler, and its callers get it.
func ExampleFaultStatuses() {
	registry := command.NewRegistry()
	defer registry.Close()
	getUser := command.New("GetUser", func(context.Context, int) (string, error) { return "ann", nil },
		command.WithRegistry(registry), command.WithConfig(command.Config{Isolation: command.SemaphoreIsolation}))
	faults := httpcommand.FaultsHandler(registry, grpccommand.FaultStatuses)

	// curl -X PUT 'localhost:9090/faults?command=GetUser' -d '{"enabled":true,...}'
	rec := httptest.NewRecorder()
	faults.ServeHTTP(rec, httptest.NewRequest(http.MethodPut, "/faults?command=GetUser",
		strings.NewReader(`{"enabled":true,"errorPercentage":100,"code":"Unavailable","error":"draining"}`)))
	fmt.Println(rec.Code)

	_, err := getUser.Execute(context.Background(), 7)
	fmt.Println(status.Code(err))
	// Output:
	// 200
	// Unavailable
}
