// Package turbine sums the Hystrix metrics streams of a cluster's
// instances into one stream, as Netflix's Turbine does, so that one
// dashboard shows the whole cluster: each command's counts summed over
// the instances, its latency percentiles summed too (a dashboard divides
// them by reportingHosts), and its circuit open on some hosts and closed
// on others.
//
//	agg, err := turbine.New([]string{
//		"http://10.0.0.7:8080/hystrix.stream",
//		"http://10.0.0.8:8080/hystrix.stream",
//	})
//	if err != nil {
//		log.Fatal(err)
//	}
//	defer agg.Close()
//	mux.Handle("/turbine.stream", agg.Handler())
//	mux.Handle("/hystrix/", dashboard.Handler(dashboard.WithStreamURL("../turbine.stream")))
//
// The instances are any Hystrix streams: rxhystrix services'
// metricsstream.Handler, Java Hystrix services' hystrix.stream, or other
// Turbines.
//
// # Finding the instances
//
// [WithDiscovery] makes the Aggregator ask a [Discovery] for the
// instances, at once and then every interval, as Turbine's
// InstanceDiscovery: [DNS] finds one at each address of a name (a
// Kubernetes headless Service), [SRV] one at each SRV record (a named
// port), [Eureka] one for each instance of an application that Eureka
// lists UP, as Turbine's Eureka discovery did, [Consul] one for each
// instance of a service whose checks pass, and a [DiscoveryFunc] asks
// anything else (another registry, a file).
//
//	pods, err := turbine.DNS("http://orders.shop.svc.cluster.local:8080/hystrix.stream", nil)
//	if err != nil {
//		log.Fatal(err)
//	}
//	agg, err := turbine.New(nil, turbine.WithDiscovery(pods, 30*time.Second))
//
// Eureka and Consul are asked over their HTTP APIs, with net/http: one
// GET each time, where their client libraries would bring modules of
// their own. With ConsulConfig.Wait, Consul is a [WaitingDiscovery]: its
// blocking queries answer when the instances change, and the Aggregator
// asks again as soon as they do, so that a new instance is read within
// a second of Consul's knowing it rather than at the next interval.
//
// A discovery that fails keeps the instances found before; an instance
// really gone then shows as not connected. [Aggregator.Discovery] says
// how the last one went, and the metrics packages report it.
// [Aggregator.SetInstances] sets the list by hand.
//
// # The sum
//
// Objects add up when they have the same type and name. For each:
//
//   - a number is the sum of the instances' numbers
//     (rollingCountSuccess, errorPercentage, latencyExecute_mean, and the
//     propertyValue_* settings too);
//   - an object of numbers (latencyExecute's percentiles) is summed
//     member by member;
//   - anything else (isCircuitBreakerOpen, the group, a setting that is
//     not a number) is the instances' value where they agree, and otherwise an object counting
//     the instances that have each value, as {"false":2,"true":1};
//   - reportingHosts is the number of instances summed (an instance that
//     is a Turbine counts its own hosts), currentTime the latest, and
//     instanceId is left out.
//
// The page of package dashboard and the Hystrix Dashboard divide what
// must be divided (percentiles, means, the error percentage, the rolling
// window's length) by reportingHosts, and draw the circuit as "Open 1
// Closed 2".
//
// # Clusters
//
// The command cmd/turbine of this module is a Turbine server made of this
// package: clusters named by flags, their dashboards and their metrics.
// One Aggregator is one cluster. [ClusterHandler] serves several from one
// path, as Turbine serves turbine.stream?cluster=NAME, the URL the Hystrix
// Dashboard's first page asks for; a request that names no cluster gets
// [DefaultCluster]. Their instances' metrics (metricsstream/prometheus's
// NewTurbineCollector) tell the clusters apart with a label each collector
// is registered under, as prometheus.WrapRegistererWith gives it.
//
// # Instances that come and go
//
// An instance whose stream fails, ends or cannot be read, or writes
// nothing (not even a ping) for [WithStaleAfter] (10s), as a host gone
// without closing its connections, is asked again after [WithRetryDelay]
// (1s), and [Aggregator.Instances] says why.
// While it is not read, its objects are out of the sum, so the sum is
// always that of the instances read now and reportingHosts counts them.
// An object that an instance stops writing leaves the sum after
// [WithStaleAfter] (10s); when no instance writes a type and name any
// more, the stream says "deleteData" for it, for as long again, so that a
// dashboard drops its card.
//
// Aggregator.Instances says, per instance, whether it is read and how
// much of it is in the sum; the same figures are metrics to alert on
// through metricsstream/prometheus's NewTurbineCollector and otelmetrics's
// RegisterTurbine.
//
// # Differences from Turbine
//
//   - currentTime is the latest instance's; Turbine summed it too.
//   - A number that is not an integer is summed; Turbine counted it as
//     a string.
//   - Objects of an instance that is no longer read leave the sum at
//     once; Turbine 2 kept summing an instance's last values.
//   - The stream has metricsstream's transport: a frame at once and one
//     every 500ms (or ?delay=), at most 5 clients of each cluster,
//     Hystrix's headers.
//   - The clusters a Turbine serves are those its program gives
//     [ClusterHandler], an Aggregator each, rather than those its
//     configuration names.
//   - The instances are found by the Aggregator's Discovery, in DNS,
//     Eureka or Consul, or by a DiscoveryFunc anywhere else, not by
//     Eureka alone.
//
// # Goroutines
//
// Each instance is read on a goroutine of its own, from New or
// SetInstances until it is removed or [Aggregator.Close] returns, and a
// Discovery is asked on one more, from New until Close; the
// streams of [Aggregator.Handler] run on their requests' goroutines.
package turbine
