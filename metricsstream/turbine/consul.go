package turbine

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
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
	// Wait, when not 0, makes each question after the first a blocking
	// query: Consul answers when the service's instances change, or
	// after Wait with them as they were, so that an Aggregator reads a
	// change as soon as Consul knows it rather than at its next
	// interval (see [WaitingDiscovery]). Consul bounds it to 10 minutes.
	// Zero asks every interval.
	Wait time.Duration
	// Client asks the agent; nil is http.DefaultClient. Its Timeout, if
	// any, must be longer than Wait and the sixteenth of it that Consul
	// may add, which would otherwise end every blocking query.
	Client *http.Client
}

// maxConsulWait is the longest wait of a blocking query that Consul
// allows.
const maxConsulWait = 10 * time.Minute

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
// With cfg.Wait, the discovery is a [WaitingDiscovery]: each question
// after the first carries the X-Consul-Index of the answer before it and
// waits for a newer one. As Consul asks of its clients, an index that
// goes backwards (a snapshot restored) makes the next question one that
// does not wait, and an index of zero or none is taken as 1.
//
// A configuration that cannot be used (no Service, a Server that is not
// an absolute http or https URL, a Scheme other than http and https, a
// Path that is not a path, a Port out of range, a Wait that is negative
// or longer than Consul's 10 minutes, a Client whose Timeout would end
// a blocking query before Consul answers it) is an error that names the
// field and matches [ErrBadDiscovery].
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
	if cfg.Wait < 0 || cfg.Wait > maxConsulWait {
		return nil, fmt.Errorf("%w: ConsulConfig.Wait %v is not between 0 and %v", ErrBadDiscovery, cfg.Wait, maxConsulWait)
	}
	if maxWait := cfg.Wait + cfg.Wait/16; cfg.Wait > 0 && cfg.Client != nil && cfg.Client.Timeout != 0 && cfg.Client.Timeout <= maxWait {
		// Every question after the first would time out.
		return nil, fmt.Errorf("%w: ConsulConfig.Client's Timeout %v does not exceed the %v a blocking query of Wait %v may take",
			ErrBadDiscovery, cfg.Client.Timeout, maxWait, cfg.Wait)
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
	return &consulDiscovery{cfg: cfg, health: health.String(), header: header, path: path}, nil
}

type consulDiscovery struct {
	cfg    ConsulConfig
	health string // the service's health resource, with the query
	header http.Header
	path   *url.URL

	mu    sync.Mutex
	index uint64 // the X-Consul-Index to wait past; 0 asks without waiting
}

// MaxWait is cfg.Wait and the sixteenth of it that Consul may add to
// spread the answers of many waiting clients.
func (d *consulDiscovery) MaxWait() time.Duration { return d.cfg.Wait + d.cfg.Wait/16 }

// question returns the URL of the next question: the health resource,
// and, with cfg.Wait and an index from an answer before, the blocking
// query's parameters.
func (d *consulDiscovery) question() string {
	d.mu.Lock()
	index := d.index
	d.mu.Unlock()
	if d.cfg.Wait == 0 || index == 0 {
		return d.health
	}
	wait := (d.cfg.Wait + time.Millisecond - 1) / time.Millisecond // whole milliseconds, rounded up
	return d.health + "&index=" + strconv.FormatUint(index, 10) + "&wait=" + strconv.FormatInt(int64(wait), 10) + "ms"
}

// answered keeps the X-Consul-Index of an answer, as Consul's blocking
// queries ask: an index lower than the one before is forgotten, so that
// the next question does not wait, and one that is missing or zero is
// taken as 1.
func (d *consulDiscovery) answered(h http.Header) {
	index, err := strconv.ParseUint(h.Get("X-Consul-Index"), 10, 64)
	if err != nil || index == 0 {
		index = 1
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if index < d.index {
		index = 0
	}
	d.index = index
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

func (d *consulDiscovery) Instances(ctx context.Context) ([]string, error) {
	var entries []consulEntry
	h, err := getJSON(ctx, d.cfg.Client, d.question(), d.header, &entries)
	if err != nil {
		return nil, fmt.Errorf("consul: %w", err)
	}
	d.answered(h)
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
