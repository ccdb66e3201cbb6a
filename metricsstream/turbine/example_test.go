package turbine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"time"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/metricsstream/turbine"
)

// Two instances of a service, each with its own commands and stream, are
// summed into the stream of the cluster.
func Example() {
	var streams []string
	for _, calls := range []int{3, 4} {
		mc := clock.NewManual(time.Unix(1_800_000_000, 0))
		reg := command.NewRegistry(command.WithClock(mc))
		defer reg.Close()
		getUser := command.New("GetUser", func(ctx context.Context, id int) (string, error) { return "ann", nil },
			command.WithRegistry(reg))
		for range calls {
			getUser.Execute(context.Background(), 1)
		}
		mc.Advance(time.Second) // the rolling bucket closes

		instance := httptest.NewServer(metricsstream.Handler(metricsstream.WithRegistry(reg.Metrics())))
		defer instance.Close()
		streams = append(streams, instance.URL+"/hystrix.stream")
	}

	agg, err := turbine.New(streams)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer agg.Close() // before the instances' servers close
	// A dashboard would read agg.Handler(); here the sum is read until
	// both instances are in it.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, event := range strings.Split(string(agg.AppendEvents(nil, time.Now())), "\n\n") {
			var c struct {
				Type, Name          string
				RollingCountSuccess int
				ReportingHosts      int
			}
			data, ok := strings.CutPrefix(event, "data: ")
			if ok && json.Unmarshal([]byte(data), &c) == nil && c.ReportingHosts == 2 {
				fmt.Printf("%s %s: %d successes on %d hosts\n", c.Type, c.Name, c.RollingCountSuccess, c.ReportingHosts)
				return
			}
		}
		runtime.Gosched()
	}
	fmt.Println("the instances were not read")
	// Output:
	// HystrixCommand GetUser: 7 successes on 2 hosts
}

// One Turbine serves its clusters from one path, each by the query's
// cluster, as turbine.stream?cluster=NAME.
func ExampleClusterHandler() {
	api, _ := turbine.New(nil) // a program lists the cluster's instances, or sets them later
	defer api.Close()
	batch, _ := turbine.New(nil)
	defer batch.Close()
	handler := turbine.ClusterHandler(map[string]*turbine.Aggregator{"api": api, "batch": batch})

	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/turbine.stream?cluster=web", nil))
	fmt.Print(rec.Code, " ", rec.Body)
	// Output: 404 turbine: no cluster "web"; the clusters are: api, batch
}

// kubeDNS answers as a cluster's DNS would for a headless Service of
// three ready pods.
type kubeDNS struct{}

func (kubeDNS) LookupHost(_ context.Context, host string) ([]string, error) {
	if host != "orders.shop.svc.cluster.local" {
		return nil, fmt.Errorf("lookup %s: no such host", host)
	}
	return []string{"10.1.0.9", "10.1.0.7", "10.1.0.8"}, nil
}

func (kubeDNS) LookupSRV(_ context.Context, _, _, name string) (string, []*net.SRV, error) {
	return "", nil, fmt.Errorf("lookup %s: no such host", name)
}

// A Turbine finds a service's instances by its DNS name, an instance at
// each address. Given to turbine.New with turbine.WithDiscovery, the
// Discovery is asked again every interval.
func ExampleDNS() {
	pods, err := turbine.DNS("http://orders.shop.svc.cluster.local:8080/hystrix.stream", kubeDNS{})
	if err != nil {
		fmt.Println(err)
		return
	}
	streams, err := pods.Instances(context.Background())
	fmt.Println(strings.Join(streams, "\n"), err)
	// Output:
	// http://10.1.0.7:8080/hystrix.stream
	// http://10.1.0.8:8080/hystrix.stream
	// http://10.1.0.9:8080/hystrix.stream <nil>
}
