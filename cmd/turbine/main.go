// Turbine serves the sums of the Hystrix metrics streams of clusters of
// instances, as Netflix's Turbine server did, with the Hystrix dashboard
// page and the instances' Prometheus metrics beside them: one process to
// deploy in front of a fleet of rxhystrix (or Java Hystrix) services.
//
//	go run github.com/rxhystrix/rxhystrix/cmd/turbine \
//		-cluster orders=dns:http://orders.shop.svc.cluster.local:8080/hystrix.stream \
//		-cluster batch=http://10.0.0.7:8080/hystrix.stream,http://10.0.0.8:8080/hystrix.stream \
//		-cluster billing='eureka:http://eureka:8761/eureka/?app=BILLING&path=/actuator/hystrix.stream'
//
// Each -cluster flag is NAME=INSTANCES, where INSTANCES is
//
//   - a comma-separated list of the instances' stream URLs;
//   - dns:URL, an instance at each address of URL's host name (a
//     Kubernetes headless Service), found again every -interval;
//   - srv:URL, an instance at each SRV record of URL's host name, found
//     again every -interval;
//   - eureka:URL?app=APP, an instance for each instance of APP that the
//     Eureka server whose REST API is at URL lists UP, found again every
//     -interval; the query may also say path=/actuator/hystrix.stream
//     (the streams' path; /hystrix.stream by default), port=N (the
//     streams' port, in place of the registered one) and ip=true (ask
//     each instance by its address, not its host name);
//   - consul:URL?service=NAME, an instance for each instance of NAME
//     whose checks pass in the Consul agent whose HTTP API is at URL,
//     found again every -interval; the query may also say tag=, dc=,
//     scheme=https, path= and port=, and wait=5m, which finds them
//     again as soon as they change (Consul's blocking queries, each
//     waiting up to 5m for a change), and the environment's
//     CONSUL_HTTP_TOKEN is the ACL token.
//
// With -config FILE it serves too the clusters of a Java Turbine's
// config.properties, the file a fleet moving from Netflix's Turbine has:
//
//	turbine.aggregator.clusterConfig=api,batch
//	turbine.ConfigPropertyBasedDiscovery.api.instances=10.0.0.7,10.0.0.8
//	turbine.ConfigPropertyBasedDiscovery.batch.instances=10.0.1.9
//	turbine.instanceUrlSuffix=:8080/hystrix.stream
//	turbine.instanceUrlSuffix.batch=:9090/actuator/hystrix.stream
//
// Each instance's stream is http:// + its host + its cluster's suffix (or
// the default suffix), as Turbine makes it; an instance that names its
// scheme (https://10.0.0.7) keeps it. The clusters are those the file
// lists at start ("default" when it lists none), as Turbine starts a
// monitor for each once; their instances are read from the file again
// every -interval, as Turbine reads its properties again, so that an
// instance added is read and one taken out leaves the sum. A file that
// Turbine would not start with (a cluster without instances or a suffix,
// instances of a cluster it does not list, another
// InstanceDiscovery.impl) is refused, naming the property; Turbine's
// other properties are named as having no effect.
//
// In Kubernetes, a headless Service (clusterIP: None) selecting the pods
// of a service gives dns: the addresses of its ready pods; a named port of
// that Service gives srv: its records, under a name such as
// _metrics._tcp.orders.shop.svc.cluster.local. A lookup that fails keeps
// the instances found before, and the page and /metrics say so.
//
// With -tls-cert and -tls-key it serves HTTPS (and HTTP/2, so that a
// page's streams share one connection), reading the certificate again
// when its files change, as a certificate rotated on disk by
// cert-manager does; a pair that no longer loads is reported and the
// one before stays in use; with -client-ca it serves only readers that
// present a certificate of one of those authorities, read again when the
// file changes, likewise. The instances'
// streams and the registries are read over https with the system's
// roots and those of -ca, read again when its file changes (a connection
// made before goes on), and with -client-cert and -client-key the
// turbine presents a certificate to those that ask for one (mutual
// TLS), read again likewise.
//
// It serves, on -listen:
//
//	/                          the clusters, each linked to its dashboard, and their instances (redrawn every 5s)
//	/turbine.stream?cluster=N  the sum of cluster N, as Turbine's; a cluster named "default" without ?cluster=
//	/hystrix/                  the dashboard page, of the first cluster or of the stream ?stream= names
//	/metrics                   each instance's state as Prometheus metrics, labelled cluster
//
// until it is interrupted (SIGINT or SIGTERM), when it closes the streams
// and returns.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "turbine:", err)
		os.Exit(2)
	}
}
