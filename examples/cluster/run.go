package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/metricsstream/dashboard"
	rxprometheus "github.com/rxhystrix/rxhystrix/metricsstream/prometheus"
	"github.com/rxhystrix/rxhystrix/metricsstream/turbine"
)

// run starts the three instances and the cluster's page, drives the
// traffic for opts.Duration while it prints the cluster's GetUser every
// second, and stops everything; with opts.Serve, it serves the page until
// ctx ends first.
func run(ctx context.Context, out io.Writer, opts options) error {
	if opts.Duration <= 0 {
		return fmt.Errorf("-duration %v: it must be positive", opts.Duration)
	}
	var instances []*instance
	var streams []string
	for range 3 {
		in, err := startInstance()
		if err != nil {
			return err
		}
		defer in.stop()
		instances = append(instances, in)
		streams = append(streams, in.url)
	}
	agg, err := turbine.New(streams)
	if err != nil {
		return err
	}
	defer agg.Close() // first: stop reading the instances

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	pageDone := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/turbine.stream", agg.Handler(metricsstream.WithShutdown(pageDone)))
	mux.Handle("/hystrix/", dashboard.Handler(dashboard.WithStreamURL("../turbine.stream"), dashboard.WithRequestsURL("")))
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(rxprometheus.NewTurbineCollector(agg))
	mux.Handle("/metrics", promhttp.HandlerFor(metrics, promhttp.HandlerOpts{}))
	page := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	var served sync.WaitGroup
	served.Go(func() { page.Serve(ln) })
	defer func() {
		close(pageDone)
		shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		page.Shutdown(shutdownCtx)
		served.Wait()
	}()
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(out, "three instances of one service; the third one's users service fails every call\n"+
		"  the cluster's dashboard  %s/hystrix/\n"+
		"  the sum of the streams   %s/turbine.stream\n"+
		"  the instances' metrics   %s/metrics\n\n", base, base, base)

	traffic, stopTraffic := context.WithTimeout(ctx, opts.Duration)
	defer stopTraffic()
	var calls sync.WaitGroup
	for i, in := range instances {
		failing := i == len(instances)-1
		calls.Go(func() { in.traffic(traffic, failing) })
	}
	err = watch(traffic, out, base+"/turbine.stream")
	stopTraffic()
	calls.Wait()
	if err != nil {
		return err
	}
	connected, err := connectedInstances(base + "/metrics")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n/metrics: %d of %d instances connected\n", connected, len(instances))
	if opts.Serve {
		fmt.Fprintf(out, "\nserving %s/hystrix/ until Ctrl-C\n", base)
		<-ctx.Done()
	}
	return nil
}

// connectedInstances scrapes url as Prometheus does and counts the
// instances whose rxhystrix_turbine_instance_connected is 1.
func connectedInstances(url string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	n := 0
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if line := lines.Text(); strings.HasPrefix(line, "rxhystrix_turbine_instance_connected{") && strings.HasSuffix(line, "} 1") {
			n++
		}
	}
	return n, lines.Err()
}

// commandCard is what the dashboard reads of a HystrixCommand of the sum.
type commandCard struct {
	Type, Name      string
	RequestCount    float64
	ErrorPercentage float64
	ReportingHosts  float64
	Window          float64         `json:"propertyValue_metricsRollingStatisticalWindowInMilliseconds"`
	Open            json.RawMessage `json:"isCircuitBreakerOpen"`
}

// watch reads the stream at url as a dashboard does until ctx ends, and
// prints the cluster's GetUser about once a second, in the figures of its
// card: a host's share where Turbine summed over the hosts.
func watch(ctx context.Context, out io.Writer, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	fmt.Fprintf(out, "%-5s %-8s %-6s %-16s %-15s %s\n", "t", "command", "hosts", "calls/s a host", "errors a host", "circuit")
	start, last := time.Now(), time.Now()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || time.Since(last) < time.Second {
			continue
		}
		var c commandCard
		if json.Unmarshal([]byte(data), &c) != nil || c.Type != "HystrixCommand" || c.Name != "GetUser" || c.ReportingHosts == 0 {
			continue
		}
		last = time.Now()
		hosts := c.ReportingHosts
		seconds := c.Window / hosts / 1000
		fmt.Fprintf(out, "%-5s %-8s %-6.0f %-16.1f %-15s %s\n", fmt.Sprintf("%.0fs", time.Since(start).Seconds()), c.Name, hosts,
			c.RequestCount/seconds/hosts, fmt.Sprintf("%.0f %%", c.ErrorPercentage/hosts), circuit(c.Open))
	}
	if ctx.Err() != nil {
		return nil // the run is over
	}
	return fmt.Errorf("the stream of the sum ended: %v", sc.Err())
}

// circuit words isCircuitBreakerOpen as the dashboard does: Open, Closed,
// or, when the hosts differ, how many are open and closed.
func circuit(raw json.RawMessage) string {
	var open bool
	if json.Unmarshal(raw, &open) == nil {
		if open {
			return "Open"
		}
		return "Closed"
	}
	var hosts struct {
		Open   int `json:"true"`
		Closed int `json:"false"`
	}
	if json.Unmarshal(raw, &hosts) == nil {
		return fmt.Sprintf("Open %d Closed %d", hosts.Open, hosts.Closed)
	}
	return string(raw)
}
