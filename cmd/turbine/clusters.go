package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream/turbine"
)

// clusterFlag is the -cluster flags, in their order.
type clusterFlag []clusterSpec

// clusterSpec is one -cluster flag: NAME=INSTANCES.
type clusterSpec struct {
	name   string
	lookup string   // "dns:", "srv:", "eureka:" or "consul:" for a cluster looked up, "" for a list
	urls   []string // the streams listed, or the one URL looked up
	// discover returns the Discovery of a cluster looked up, whose
	// registry (Eureka's, Consul's) is asked with client; nil for a list.
	discover func(client *http.Client) (turbine.Discovery, error)
	// initial are the instances read until the first lookup answers: a
	// -config cluster's, as its file lists them at start, so that a file
	// whose instances cannot be read is refused then; nil for others.
	initial []string
}

// lookups are the prefixes of INSTANCES that are looked up again and
// again, rather than listed.
var lookups = []string{"dns:", "srv:", "eureka:", "consul:"}

// shown is what the index page says of c's instances: INSTANCES with the
// URLs' passwords redacted.
func (c clusterSpec) shown() string {
	urls := make([]string, len(c.urls))
	for i, s := range c.urls {
		if u, err := url.Parse(s); err == nil {
			s = u.Redacted()
		}
		urls[i] = s
	}
	return c.lookup + strings.Join(urls, ",")
}

// stream is the path of c's sum.
func (c clusterSpec) stream() string {
	return "/turbine.stream?cluster=" + url.QueryEscape(c.name)
}

// clusterNameForbidden are the characters a cluster's name cannot have,
// since it is a query's value in the stream's URL.
const clusterNameForbidden = " &?#/"

// errBadCluster is a -cluster flag that cannot be served.
var errBadCluster = errors.New("bad -cluster")

func (f *clusterFlag) String() string {
	var out []string
	for _, c := range *f {
		out = append(out, c.name+"="+c.shown())
	}
	return strings.Join(out, " ")
}

// Set parses NAME=INSTANCES, and refuses a name given twice.
func (f *clusterFlag) Set(s string) error {
	name, what, ok := strings.Cut(s, "=")
	switch {
	case !ok || name == "" || what == "":
		return fmt.Errorf("%w %q: want NAME=INSTANCES", errBadCluster, s)
	case strings.ContainsAny(name, clusterNameForbidden):
		return fmt.Errorf("%w %q: the name %q cannot be a query's cluster", errBadCluster, s, name)
	}
	for _, c := range *f {
		if c.name == name {
			return fmt.Errorf("%w %q: cluster %q is given twice", errBadCluster, s, name)
		}
	}
	spec := clusterSpec{name: name}
	for _, prefix := range lookups {
		if rest, ok := strings.CutPrefix(what, prefix); ok {
			spec.lookup, spec.urls = prefix, []string{rest}
		}
	}
	var err error
	switch spec.lookup {
	case "dns:":
		spec.discover = func(*http.Client) (turbine.Discovery, error) { return turbine.DNS(spec.urls[0], nil) }
	case "srv:":
		spec.discover = func(*http.Client) (turbine.Discovery, error) { return turbine.SRV(spec.urls[0], nil) }
	case "eureka:":
		spec.discover, err = eurekaDiscovery(spec.urls[0])
	case "consul:":
		spec.discover, err = consulDiscovery(spec.urls[0])
	default:
		spec.urls = strings.Split(what, ",") // turbine.New checks them
	}
	if err == nil && spec.discover != nil {
		_, err = spec.discover(nil) // so that a bad flag is refused as it is parsed
	}
	if err != nil {
		return fmt.Errorf("%w %q: %w", errBadCluster, s, err)
	}
	*f = append(*f, spec)
	return nil
}

// aggregator starts reading the cluster's instances with client, which
// also asks its registry, with opts.
func (c clusterSpec) aggregator(client *http.Client, interval time.Duration, opts ...turbine.Option) (*turbine.Aggregator, error) {
	opts = append(opts, turbine.WithHTTPClient(client))
	if c.discover == nil {
		return turbine.New(c.urls, opts...)
	}
	d, err := c.discover(client)
	if err != nil {
		return nil, err
	}
	a, err := turbine.New(c.initial, append(opts, turbine.WithDiscovery(d, interval))...)
	if err != nil && c.initial != nil {
		return nil, fmt.Errorf("%w %s: %w", errBadConfig, c.urls[0], err)
	}
	return a, err
}
