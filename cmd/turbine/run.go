package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/rxhystrix/rxhystrix/metricsstream/dashboard"
	rxprometheus "github.com/rxhystrix/rxhystrix/metricsstream/prometheus"
	"github.com/rxhystrix/rxhystrix/metricsstream/turbine"
)

// run parses args, serves the clusters until ctx ends, and returns. It
// writes the address it serves on to out, and the flags' usage to usage.
func run(ctx context.Context, args []string, out, usage io.Writer) error {
	fs := flag.NewFlagSet("turbine", flag.ContinueOnError)
	fs.SetOutput(usage)
	var clusters clusterFlag
	fs.Var(&clusters, "cluster", "a cluster to serve, NAME=URL[,URL...], NAME=dns:URL, NAME=srv:URL, NAME=eureka:URL?app=APP or NAME=consul:URL?service=NAME (repeatable)")
	var config string
	fs.Func("config", "a Turbine config.properties whose clusters to serve too (turbine.aggregator.clusterConfig, turbine.ConfigPropertyBasedDiscovery.NAME.instances, turbine.instanceUrlSuffix), their instances read again every -interval", func(s string) error {
		if config != "" {
			// A second file would silently replace the first, whose
			// clusters would not be served.
			return fmt.Errorf("given twice (%s and %s): one file lists every cluster", config, s)
		}
		config = s
		return nil
	})
	listen := fs.String("listen", ":7979", "the address to serve on")
	interval := fs.Duration("interval", 30*time.Second, "how often dns:, srv:, eureka: and consul: clusters are looked up again")
	retryDelay := fs.Duration("retry-delay", turbine.DefaultRetryDelay, "how long an instance whose stream failed waits before it is asked again")
	staleAfter := fs.Duration("stale-after", turbine.DefaultStaleAfter, "how long an instance may write nothing, and an object it stopped writing stays in the sum; more than the 500ms of Hystrix's stream")
	var tlsf tlsFlags
	tlsf.register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	var ignored []string
	if config != "" {
		var err error
		if ignored, err = clusters.addConfig(config); err != nil {
			return err
		}
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case len(clusters) == 0:
		return errors.New("no -cluster or -config to serve")
	case *interval <= 0:
		return fmt.Errorf("-interval %v is not positive", *interval)
	case *retryDelay <= 0:
		return fmt.Errorf("-retry-delay %v is not positive", *retryDelay)
	case *staleAfter <= 0:
		return fmt.Errorf("-stale-after %v is not positive", *staleAfter)
	case *staleAfter <= metricsstream.DefaultStreamInterval:
		// Within one frame of Hystrix's stream, every instance would be
		// given up between two frames, and its objects would leave the
		// sum between two of theirs.
		return fmt.Errorf("-stale-after %v does not exceed %v, the interval of Hystrix's stream", *staleAfter, metricsstream.DefaultStreamInterval)
	}

	serverTLS, err := tlsf.serverConfig(out)
	if err != nil {
		return err
	}
	client, err := tlsf.client(out)
	if err != nil {
		return err
	}
	defer client.CloseIdleConnections()

	aggregators := make(map[string]*turbine.Aggregator, len(clusters))
	defer func() {
		for _, a := range aggregators {
			a.Close()
		}
	}()
	metrics := prometheus.NewRegistry()
	for _, c := range clusters {
		a, err := c.aggregator(client, *interval, turbine.WithRetryDelay(*retryDelay), turbine.WithStaleAfter(*staleAfter))
		if err != nil {
			return fmt.Errorf("cluster %s: %w", c.name, err)
		}
		aggregators[c.name] = a
		labelled := prometheus.WrapRegistererWith(prometheus.Labels{"cluster": c.name}, metrics)
		if err := labelled.Register(rxprometheus.NewTurbineCollector(a)); err != nil {
			return err
		}
	}

	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return err
	}
	scheme := "http"
	if serverTLS != nil {
		scheme = "https"
	}
	streamsDone := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/turbine.stream", turbine.ClusterHandler(aggregators, metricsstream.WithShutdown(streamsDone)))
	// Without ?stream=, the page draws the first cluster.
	mux.Handle("/hystrix/", dashboard.Handler(dashboard.WithStreamURL(clusters[0].stream()), dashboard.WithRequestsURL("")))
	mux.Handle("/metrics", promhttp.HandlerFor(metrics, promhttp.HandlerOpts{}))
	mux.Handle("/{$}", indexHandler(clusters, aggregators))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, TLSConfig: serverTLS}
	var served sync.WaitGroup
	served.Go(func() {
		if serverTLS != nil {
			srv.ServeTLS(ln, "", "") // with HTTP/2, so that a page's streams share one connection
			return
		}
		srv.Serve(ln)
	})
	fmt.Fprintf(out, "turbine: serving %d clusters on %s://%s/\n", len(clusters), scheme, ln.Addr())
	for _, key := range ignored {
		fmt.Fprintf(out, "turbine: %s: %s has no effect here\n", config, key)
	}

	<-ctx.Done()
	close(streamsDone) // the streams end, so that Shutdown need not wait for their clients
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdownCtx)
	served.Wait()
	return err
}
