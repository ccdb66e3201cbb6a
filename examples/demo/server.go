package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/httpcommand"
	"github.com/rxhystrix/rxhystrix/hystrixprops"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/metricsstream/dashboard"
	rxprometheus "github.com/rxhystrix/rxhystrix/metricsstream/prometheus"
)

// newHandler mounts what a service mounts to be watched: the dashboard at
// /hystrix/ with the stream of reg's commands at /hystrix/stream, the
// same stream at /hystrix.stream (where Netflix's dashboard and Turbine
// look, as the README mounts it), Hystrix's configuration, utilization
// and request events streams at their paths, Prometheus metrics at
// /metrics, the open circuits at /health and the commands' injected
// faults at /faults; and the demo's own API, guarded, at checkoutPath. Streams end when shutdown is closed.
func newHandler(reg *command.Registry, shutdown <-chan struct{}) http.Handler {
	opts := []metricsstream.HandlerOption{
		metricsstream.WithRegistry(reg.Metrics()),
		metricsstream.WithShutdown(shutdown),
	}
	stream := metricsstream.Handler(opts...)
	prom := prometheus.NewRegistry()
	prom.MustRegister(rxprometheus.NewCollector(reg.Metrics()))

	mux := http.NewServeMux()
	mux.Handle("/hystrix/", dashboard.Handler(dashboard.WithStream(stream)))
	mux.Handle("/hystrix.stream", stream)
	mux.Handle("/hystrix/config.stream", metricsstream.ConfigHandler(opts...))
	mux.Handle("/hystrix/utilization.stream", metricsstream.UtilizationHandler(opts...))
	mux.Handle("/hystrix/requests.stream", metricsstream.RequestEventsHandler(opts...))
	mux.Handle("/metrics", promhttp.HandlerFor(prom, promhttp.HandlerOpts{}))
	mux.Handle("/health", metricsstream.HealthHandler(reg.Metrics()))
	mux.Handle("/faults", httpcommand.FaultsHandler(reg, httpcommand.FaultStatuses)) // 127.0.0.1 only: whoever reaches it can fail the calls
	mux.Handle("POST "+checkoutPath, checkoutGuard(reg))
	mux.Handle("GET /{$}", http.RedirectHandler("/hystrix/", http.StatusFound))
	return mux
}

// run serves the demo on ln and drives the commands' traffic until ctx
// ends, drawing the table of the commands on out as disp says; then it
// stops the traffic, ends the streams and shuts the server down. It
// returns nil when it stopped because ctx ended.
func run(ctx context.Context, ln net.Listener, reg *command.Registry, sc scenario, out io.Writer, disp display) error {
	shutdown := make(chan struct{})
	srv := &http.Server{
		Handler:           newHandler(reg, shutdown),
		ReadHeaderTimeout: 10 * time.Second,
	}
	// Shutdown waits for connections to go idle; a stream never does
	// until it is told to end.
	var once sync.Once
	endStreams := func() { once.Do(func() { close(shutdown) }) }
	srv.RegisterOnShutdown(endStreams)

	base := "http://" + ln.Addr().String()
	fmt.Fprintf(out, "rxhystrix demo: five commands and a collapser against simulated downstreams, and a guarded API\n"+
		"  dashboard   %s/hystrix/\n"+
		"  stream      %s/hystrix/stream (and %s/hystrix.stream)\n"+
		"  config      %s/hystrix/config.stream, utilization %s/hystrix/utilization.stream\n"+
		"  requests    %s/hystrix/requests.stream\n"+
		"  prometheus  %s/metrics\n"+
		"  health      %s/health\n"+
		"  faults      %s/faults (curl -X PUT '%s/faults?command=GetUser' -d '{\"enabled\":true,\"errorPercentage\":50,\"for\":\"5m\"}')\n"+
		"  api         POST %s%s\n", base, base, base, base, base, base, base, base, base, base, base, checkoutPath)
	if _, ok := ctx.Deadline(); ok {
		fmt.Fprintln(out, "It stops by itself after -duration; Ctrl-C stops it sooner.")
	} else {
		fmt.Fprintln(out, "Ctrl-C stops it.")
	}

	trafficCtx, stopTraffic := context.WithCancel(ctx)
	defer stopTraffic()
	props := hystrixprops.NewSource(reg, nil)
	polled := make(chan struct{})
	if sc.properties == "" {
		close(polled)
	} else {
		if err := props.SetFile(sc.properties); err != nil {
			ln.Close()
			return err
		}
		for _, why := range props.Properties().Ignored() {
			log.Printf("demo: %s: no effect: %s", sc.properties, why)
		}
		fmt.Fprintf(out, "Hystrix's properties are read from %s, and again when it changes.\n", sc.properties)
		go func() {
			defer close(polled)
			props.PollFile(trafficCtx, sc.properties, time.Second, func(err error) { log.Printf("demo: %v", err) })
		}()
	}
	traffic := startTraffic(trafficCtx, reg, props, sc, base)
	tableDone := disp.start(trafficCtx, out, reg.Metrics())

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()

	var err error
	select {
	case <-ctx.Done():
	case err = <-served: // the listener failed
		served = nil
	}
	stopTraffic()
	traffic.Wait()
	<-polled
	tableDone()
	endStreams()
	stopCtx, cancel := context.WithTimeout(context.Background(), stopTimeout)
	defer cancel()
	if shutErr := srv.Shutdown(stopCtx); err == nil {
		err = shutErr
	}
	if served != nil {
		if serveErr := <-served; err == nil && !errors.Is(serveErr, http.ErrServerClosed) {
			err = serveErr
		}
	}
	if err == nil {
		fmt.Fprintln(out, "stopped")
	}
	return err
}
