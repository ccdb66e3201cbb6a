package turbine

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// ConsulConfig says where Consul lists a service's instances, and where
// each serves its stream.
type ConsulConfig struct {
	// Server is the base URL of a Consul agent's HTTP API:
	// "http://127.0.0.1:8500".
	Server string
	// Service is the service's name, as its instances register it.
	Service string
	// Tag, when not "", keeps the instances registered with that tag.
	Tag string
	// Datacenter, when not "", asks for the service in that datacenter
	// rather than the agent's.
	Datacenter string
	// Token, when not "", is the ACL token the question is asked with
	// (X-Consul-Token).
	Token string
	// Scheme is "http" or "https", the scheme of the instances' streams;
	// "" is http.
	Scheme string
	// Path is the path of each instance's stream, with a query if any;
	// "" is DefaultStreamPath.
	Path string
	// Port, when not 0, is the port of each instance's stream, in place
	// of the one it registered: a management port of its own.
	Port int
	// Client asks the agent; nil is http.DefaultClient.
	Client *http.Client
}

// Consul returns a Discovery of the instances of a service whose health
// checks all pass in Consul (its health endpoint's passing filter): each
// is the stream at cfg.Path on the address and port the instance
// registered (the node's address when the instance gave none).
//
//	d, err := turbine.Consul(turbine.ConsulConfig{Server: "http://127.0.0.1:8500", Service: "orders"})
//
// A service that Consul does not know has no instances. A failure fails
// the discovery, which keeps the instances it found before.
//
// A configuration that cannot be used (no Service, a Server that is not
// an absolute http or https URL, a Scheme other than http and https, a
// Path that is not a path, a Port out of range) is an error that names
// the field and matches [ErrBadDiscovery].
func Consul(cfg ConsulConfig) (Discovery, error) {
	server, err := registryURL("ConsulConfig.Server", cfg.Server)
	if err != nil {
		return nil, err
	}
	if cfg.Service == "" || strings.Contains(cfg.Service, "/") {
		return nil, fmt.Errorf("%w: ConsulConfig.Service %q is not a service's name", ErrBadDiscovery, cfg.Service)
	}
	switch cfg.Scheme {
	case "":
		cfg.Scheme = "http"
	case "http", "https":
	default:
		return nil, fmt.Errorf("%w: ConsulConfig.Scheme %q is not http or https", ErrBadDiscovery, cfg.Scheme)
	}
	path, err := streamPath("ConsulConfig.Path", cfg.Path)
	if err != nil {
		return nil, err
	}
	if err := checkPort("ConsulConfig.Port", cfg.Port); err != nil {
		return nil, err
	}
	health := server.JoinPath("v1", "health", "service", cfg.Service)
	q := url.Values{"passing": {"true"}}
	if cfg.Tag != "" {
		q.Set("tag", cfg.Tag)
	}
	if cfg.Datacenter != "" {
		q.Set("dc", cfg.Datacenter)
	}
	health.RawQuery = q.Encode()
	var header http.Header
	if cfg.Token != "" {
		header = http.Header{"X-Consul-Token": {cfg.Token}}
	}
	return consulDiscovery{cfg: cfg, health: health.String(), header: header, path: path}, nil
}

type consulDiscovery struct {
	cfg    ConsulConfig
	health string // the service's health resource, with the query
	header http.Header
	path   *url.URL
}

// consulEntry is the part of an entry of Consul's health answer that the
// discovery reads.
type consulEntry struct {
	Node struct {
		Address string
	}
	Service struct {
		Address string
		Port    int
	}
}

func (d consulDiscovery) Instances(ctx context.Context) ([]string, error) {
	var entries []consulEntry
	if err := getJSON(ctx, d.cfg.Client, d.health, d.header, &entries); err != nil {
		return nil, fmt.Errorf("consul: %w", err)
	}
	urls := make([]string, 0, len(entries))
	for _, e := range entries {
		host := e.Service.Address
		if host == "" {
			host = e.Node.Address
		}
		port := e.Service.Port
		if d.cfg.Port != 0 {
			port = d.cfg.Port
		}
		if host == "" || port <= 0 || port > 65535 {
			return nil, fmt.Errorf("consul: an instance of %s has no address or port to ask (%q, %d)", d.cfg.Service, host, port)
		}
		urls = append(urls, instanceURL(d.cfg.Scheme, host, port, d.path))
	}
	return sortedSet(urls), nil
}
