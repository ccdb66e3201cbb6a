package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream/turbine"
)

// clusterFlag is the -cluster flags, in their order.
type clusterFlag []clusterSpec

// clusterSpec is one -cluster flag: NAME=INSTANCES.
type clusterSpec struct {
	name string
	// Exactly one of the two.
	urls      []string          // a list of streams
	discovery turbine.Discovery // dns: or srv:
	what      string            // INSTANCES, as given
}

// shown is what the index page says of c's instances: INSTANCES with the
// URLs' passwords redacted.
func (c clusterSpec) shown() string {
	lookup, rest := "", c.what
	for _, prefix := range []string{"dns:", "srv:"} {
		if r, ok := strings.CutPrefix(c.what, prefix); ok {
			lookup, rest = prefix, r
		}
	}
	var urls []string
	for _, s := range strings.Split(rest, ",") {
		if u, err := url.Parse(s); err == nil {
			s = u.Redacted()
		}
		urls = append(urls, s)
	}
	return lookup + strings.Join(urls, ",")
}

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
	case strings.ContainsAny(name, " &?#/"):
		return fmt.Errorf("%w %q: the name %q cannot be a query's cluster", errBadCluster, s, name)
	}
	for _, c := range *f {
		if c.name == name {
			return fmt.Errorf("%w %q: cluster %q is given twice", errBadCluster, s, name)
		}
	}
	spec := clusterSpec{name: name, what: what}
	var err error
	switch {
	case strings.HasPrefix(what, "dns:"):
		spec.discovery, err = turbine.DNS(strings.TrimPrefix(what, "dns:"), nil)
	case strings.HasPrefix(what, "srv:"):
		spec.discovery, err = turbine.SRV(strings.TrimPrefix(what, "srv:"), nil)
	default:
		spec.urls = strings.Split(what, ",") // turbine.New checks them
	}
	if err != nil {
		return fmt.Errorf("%w %q: %w", errBadCluster, s, err)
	}
	*f = append(*f, spec)
	return nil
}

// aggregator starts reading the cluster's instances, with opts.
func (c clusterSpec) aggregator(interval time.Duration, opts ...turbine.Option) (*turbine.Aggregator, error) {
	if c.discovery != nil {
		return turbine.New(nil, append(opts, turbine.WithDiscovery(c.discovery, interval))...)
	}
	return turbine.New(c.urls, opts...)
}
