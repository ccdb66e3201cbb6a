package main

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/rxhystrix/rxhystrix/metricsstream/turbine"
)

// The eureka: and consul: forms of INSTANCES name the registry by the
// URL of its API, and what to ask it in that URL's query:
//
//	eureka:http://eureka:8761/eureka/?app=ORDERS&path=/actuator/hystrix.stream
//	consul:http://127.0.0.1:8500/?service=orders&tag=metrics&wait=5m
//
// so that a cluster is one flag whatever finds its instances.

// eurekaParams and consulParams are the query parameters of each form,
// and what each sets.
var (
	eurekaParams = map[string]func(*turbine.EurekaConfig, string) error{
		"app":  func(c *turbine.EurekaConfig, v string) error { c.App = v; return nil },
		"path": func(c *turbine.EurekaConfig, v string) error { c.Path = v; return nil },
		"port": func(c *turbine.EurekaConfig, v string) (err error) { c.Port, err = strconv.Atoi(v); return err },
		"ip": func(c *turbine.EurekaConfig, v string) (err error) {
			c.UseIPAddr, err = strconv.ParseBool(v)
			return err
		},
	}
	consulParams = map[string]func(*turbine.ConsulConfig, string) error{
		"service": func(c *turbine.ConsulConfig, v string) error { c.Service = v; return nil },
		"tag":     func(c *turbine.ConsulConfig, v string) error { c.Tag = v; return nil },
		"dc":      func(c *turbine.ConsulConfig, v string) error { c.Datacenter = v; return nil },
		"scheme":  func(c *turbine.ConsulConfig, v string) error { c.Scheme = v; return nil },
		"path":    func(c *turbine.ConsulConfig, v string) error { c.Path = v; return nil },
		"port":    func(c *turbine.ConsulConfig, v string) (err error) { c.Port, err = strconv.Atoi(v); return err },
		"wait":    func(c *turbine.ConsulConfig, v string) (err error) { c.Wait, err = time.ParseDuration(v); return err },
	}
)

// eurekaDiscovery parses an eureka: form, and returns what makes its
// Discovery with a client.
func eurekaDiscovery(s string) (func(*http.Client) (turbine.Discovery, error), error) {
	var cfg turbine.EurekaConfig
	server, err := registryQuery(s, eurekaParams, &cfg)
	if err != nil {
		return nil, err
	}
	cfg.Server = server
	return func(client *http.Client) (turbine.Discovery, error) {
		withClient := cfg
		withClient.Client = client
		return turbine.Eureka(withClient)
	}, nil
}

// consulDiscovery parses a consul: form, and returns what makes its
// Discovery with a client. The ACL token, if any, is
// CONSUL_HTTP_TOKEN's, as Consul's own tools read it, so that it is in
// no flag a process list shows.
func consulDiscovery(s string) (func(*http.Client) (turbine.Discovery, error), error) {
	cfg := turbine.ConsulConfig{Token: os.Getenv("CONSUL_HTTP_TOKEN")}
	server, err := registryQuery(s, consulParams, &cfg)
	if err != nil {
		return nil, err
	}
	cfg.Server = server
	return func(client *http.Client) (turbine.Discovery, error) {
		withClient := cfg
		withClient.Client = client
		return turbine.Consul(withClient)
	}, nil
}

// registryQuery sets cfg from the query of s, a registry's URL, by
// params, and returns s without its query. A parameter params does not
// know, or given twice, or whose value does not parse, is an error.
func registryQuery[C any](s string, params map[string]func(*C, string) error, cfg *C) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", err
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", fmt.Errorf("the query of %q: %w", s, err)
	}
	for name, values := range q {
		set, ok := params[name]
		switch {
		case !ok:
			return "", fmt.Errorf("%q: unknown parameter %q", u.Redacted(), name)
		case len(values) > 1:
			return "", fmt.Errorf("%q: parameter %q is given %d times", u.Redacted(), name, len(values))
		}
		if err := set(cfg, values[0]); err != nil {
			return "", fmt.Errorf("%q: parameter %s=%q: %w", u.Redacted(), name, values[0], err)
		}
	}
	u.RawQuery, u.ForceQuery = "", false
	return u.String(), nil
}
