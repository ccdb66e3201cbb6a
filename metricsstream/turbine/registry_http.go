package turbine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// The Eureka and Consul discoveries ask their registry's HTTP API with
// net/http and encoding/json: each is one GET and a few fields of its
// answer, where the registries' client libraries (Netflix's eureka-client
// has no Go port; hashicorp/consul/api) would bring a module and its
// dependencies for one call.

// ErrBadDiscovery is the error of a discovery's configuration that
// cannot be used: a registry URL that is not http or https or that has
// a fragment, a missing application name, a stream path that is not a
// path.
var ErrBadDiscovery = errors.New("turbine: bad discovery configuration")

// maxRegistryAnswer bounds the answer read from a registry: a list of
// instances, not a stream.
const maxRegistryAnswer = 16 << 20

// DefaultStreamPath is the path of an instance's stream when a
// discovery's configuration names none: where metricsstream.Handler and
// Hystrix's servlet are usually mounted.
const DefaultStreamPath = "/hystrix.stream"

// registryURL checks s, a registry's base URL, and returns it with one
// trailing slash, to which the API's path is added.
func registryURL(field, s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: %s %q is not an absolute http or https URL", ErrBadDiscovery, field, s)
	}
	if u.Fragment != "" {
		// Never sent, it would end every question's URL: a Consul
		// blocking query's index and wait would be in it.
		return nil, fmt.Errorf("%w: %s %q has a fragment", ErrBadDiscovery, field, s)
	}
	u.Path = strings.TrimSuffix(u.Path, "/") + "/"
	u.RawPath = ""
	return u, nil
}

// streamPath checks s, the path (and query) of an instance's stream, and
// returns it as a URL of those alone; "" is DefaultStreamPath.
func streamPath(field, s string) (*url.URL, error) {
	if s == "" {
		s = DefaultStreamPath
	}
	u, err := url.Parse(s)
	if err != nil || !strings.HasPrefix(s, "/") || u.Scheme != "" || u.Host != "" || u.Fragment != "" {
		return nil, fmt.Errorf("%w: %s %q is not a path, with a query if any", ErrBadDiscovery, field, s)
	}
	return &url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery}, nil
}

// checkPort checks an override of the instances' port: 0 (none) or a
// TCP port.
func checkPort(field string, port int) error {
	if port < 0 || port > 65535 {
		return fmt.Errorf("%w: %s %d is not a TCP port", ErrBadDiscovery, field, port)
	}
	return nil
}

// instanceURL returns the URL of the stream at path on host:port, by
// scheme.
func instanceURL(scheme, host string, port int, path *url.URL) string {
	u := *path
	u.Scheme = scheme
	return withHost(&u, host, strconv.Itoa(port))
}

// errRegistryNotFound is in the error of a registry's 404 answer: Eureka's
// for an application it does not know.
var errRegistryNotFound = errors.New("404 Not Found")

// getJSON asks client for u with header, decodes the answer's JSON into
// v, and returns the answer's header. A status other than 200 is an
// error that names it, and matches errRegistryNotFound for a 404.
func getJSON(ctx context.Context, client *http.Client, u string, header http.Header, v any) (http.Header, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	req.Header.Set("Accept", "application/json")
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusNotFound:
		return nil, fmt.Errorf("GET %s: %w", redacted(u), errRegistryNotFound)
	default:
		return nil, fmt.Errorf("GET %s: %s", redacted(u), resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxRegistryAnswer)).Decode(v); err != nil {
		return nil, fmt.Errorf("GET %s: %w", redacted(u), err)
	}
	return resp.Header, nil
}

// redacted is u with its password, if any, replaced, for an error.
func redacted(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Redacted()
	}
	return u
}
