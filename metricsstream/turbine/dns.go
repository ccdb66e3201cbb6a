package turbine

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// A Resolver looks up DNS names, as a *net.Resolver does.
type Resolver interface {
	LookupHost(ctx context.Context, host string) (addrs []string, err error)
	LookupSRV(ctx context.Context, service, proto, name string) (cname string, addrs []*net.SRV, err error)
}

var _ Resolver = (*net.Resolver)(nil)

// DNS returns a Discovery of the instances at the addresses (A and AAAA
// records) of streamURL's host: each is streamURL with the address in
// place of the host name, its port, path and query kept. A Kubernetes
// headless Service's name resolves to the addresses of its ready pods:
//
//	d, err := turbine.DNS("http://orders.shop.svc.cluster.local:8080/hystrix.stream", nil)
//
// finds "http://10.1.0.7:8080/hystrix.stream", "http://10.1.0.9:8080/hystrix.stream".
// A name with both A and AAAA records gives the instances of its A
// records alone: a dual-stack Service gives each pod one address of each
// family, and reading both would add every pod to the sum twice.
// r looks the name up; nil is [net.DefaultResolver]. A name that does
// not resolve fails the discovery, which keeps the instances it found
// before. An https stream is then asked by address: its certificate must
// name the address, or the Aggregator's client ([WithHTTPClient]) must
// say which name to verify.
//
// A streamURL that is not an absolute http or https URL is an error that
// names it and matches [ErrBadInstance].
func DNS(streamURL string, r Resolver) (Discovery, error) {
	u, err := parseInstanceURL(streamURL)
	if err != nil {
		return nil, err
	}
	return hostDiscovery{template: u, resolver: resolver(r)}, nil
}

// SRV returns a Discovery of the instances that the SRV records of
// streamURL's host name: each is streamURL with a record's target and
// port in place of its host, its path and query kept. The host is the
// records' whole name, as a Kubernetes Service's named port gives them:
//
//	d, err := turbine.SRV("http://_metrics._tcp.orders.shop.svc.cluster.local/hystrix.stream", nil)
//
// finds "http://10-1-0-7.orders.shop.svc.cluster.local:8080/hystrix.stream", ...
// A record whose target is "." says there is no instance (RFC 2782),
// and gives none. r looks the records up; nil is [net.DefaultResolver].
// A name without records fails the discovery, which keeps the instances
// it found before.
//
// A streamURL that is not an absolute http or https URL, or that has a
// port (the records give the ports), is an error that names it and
// matches [ErrBadInstance].
func SRV(streamURL string, r Resolver) (Discovery, error) {
	u, err := parseInstanceURL(streamURL)
	if err != nil {
		return nil, err
	}
	if u.Port() != "" {
		return nil, fmt.Errorf("%w: %q has a port, which SRV records give", ErrBadInstance, streamURL)
	}
	return srvDiscovery{template: u, resolver: resolver(r)}, nil
}

func resolver(r Resolver) Resolver {
	if r == nil {
		return net.DefaultResolver
	}
	return r
}

type hostDiscovery struct {
	template *url.URL
	resolver Resolver
}

func (d hostDiscovery) Instances(ctx context.Context) ([]string, error) {
	addrs, err := d.resolver.LookupHost(ctx, d.template.Hostname())
	if err != nil {
		return nil, err
	}
	urls := make([]string, 0, len(addrs))
	for _, addr := range oneFamily(addrs) {
		urls = append(urls, withHost(d.template, addr, d.template.Port()))
	}
	return sortedSet(urls), nil
}

// oneFamily returns the IPv4 addresses of addrs if it holds any, and
// addrs otherwise: the addresses of one family name each instance once.
func oneFamily(addrs []string) []string {
	v4 := make([]string, 0, len(addrs))
	for _, a := range addrs {
		if ip, err := netip.ParseAddr(a); err == nil && ip.Unmap().Is4() {
			v4 = append(v4, a)
		}
	}
	if len(v4) == 0 {
		return addrs
	}
	return v4
}

type srvDiscovery struct {
	template *url.URL
	resolver Resolver
}

func (d srvDiscovery) Instances(ctx context.Context) ([]string, error) {
	_, records, err := d.resolver.LookupSRV(ctx, "", "", d.template.Hostname())
	if err != nil {
		return nil, err
	}
	urls := make([]string, 0, len(records))
	for _, rec := range records {
		target := strings.TrimSuffix(rec.Target, ".")
		if target == "" {
			continue // "." : no instance
		}
		urls = append(urls, withHost(d.template, target, strconv.Itoa(int(rec.Port))))
	}
	return sortedSet(urls), nil
}

// withHost returns template with host and port (none if empty) in place
// of its own.
func withHost(template *url.URL, host, port string) string {
	u := *template
	switch {
	case port != "":
		u.Host = net.JoinHostPort(host, port)
	case strings.Contains(host, ":"):
		u.Host = "[" + host + "]" // an IPv6 address
	default:
		u.Host = host
	}
	return u.String()
}

// sortedSet sorts urls and drops repeats: two records of one instance
// (an SRV target listed at two priorities) are one instance.
func sortedSet(urls []string) []string {
	slices.Sort(urls)
	return slices.Compact(urls)
}
