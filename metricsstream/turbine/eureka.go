package turbine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// EurekaConfig says where a Eureka server lists an application's
// instances, and where each serves its stream.
type EurekaConfig struct {
	// Server is the base URL of the Eureka server's REST API, as a
	// Eureka client's serviceUrl names it: "http://eureka:8761/eureka/".
	Server string
	// App is the application's name, as its instances register it
	// ("ORDERS"); Eureka compares names without regard to case.
	App string
	// Path is the path of each instance's stream, with a query if any;
	// "" is DefaultStreamPath. A Spring Boot service serves it at
	// "/actuator/hystrix.stream".
	Path string
	// Port, when not 0, is the port of each instance's stream, in place
	// of the one it registered: a management port of its own.
	Port int
	// UseIPAddr names each instance by the address it registered
	// (ipAddr), in place of its host name (hostName).
	UseIPAddr bool
	// Client asks the server; nil is http.DefaultClient. Its Timeout, or
	// the discovery's interval, bounds each question.
	Client *http.Client
}

// Eureka returns a Discovery of the instances that a Eureka server lists
// UP for an application, as Turbine's Eureka discovery finds them: each
// is the stream at cfg.Path on the instance's host name and port, https
// on its secure port when that is enabled, http on its port otherwise. An
// instance whose metadata has a "management.port" (a Spring Boot
// service's separate management server, as Spring Cloud's Turbine reads
// it) is asked on that port; cfg.Port, when set, overrides both.
//
//	d, err := turbine.Eureka(turbine.EurekaConfig{Server: "http://eureka:8761/eureka/", App: "ORDERS"})
//
// An application that the server does not know (404) has no instances:
// Eureka forgets an application whose instances have all gone. Any other
// failure fails the discovery, which keeps the instances it found before.
//
// A configuration that cannot be used (no App, a Server that is not an
// absolute http or https URL, a Path that is not a path, a Port out of
// range) is an error that names the field and matches [ErrBadDiscovery].
func Eureka(cfg EurekaConfig) (Discovery, error) {
	server, err := registryURL("EurekaConfig.Server", cfg.Server)
	if err != nil {
		return nil, err
	}
	if cfg.App == "" || strings.Contains(cfg.App, "/") {
		return nil, fmt.Errorf("%w: EurekaConfig.App %q is not an application's name", ErrBadDiscovery, cfg.App)
	}
	path, err := streamPath("EurekaConfig.Path", cfg.Path)
	if err != nil {
		return nil, err
	}
	if err := checkPort("EurekaConfig.Port", cfg.Port); err != nil {
		return nil, err
	}
	apps := server.JoinPath("apps", cfg.App)
	return eurekaDiscovery{cfg: cfg, apps: apps.String(), path: path}, nil
}

type eurekaDiscovery struct {
	cfg  EurekaConfig
	apps string // the application's resource
	path *url.URL
}

// eurekaApplication is the part of Eureka's answer for an application
// that the discovery reads.
type eurekaApplication struct {
	// Application is nil in an answer that is not an application's.
	Application *struct {
		// Instance is one instance's object or an array of them: Eureka's
		// JSON, written from its XML, makes an array of one an object.
		Instance json.RawMessage `json:"instance"`
	} `json:"application"`
}

type eurekaInstance struct {
	HostName   string            `json:"hostName"`
	IPAddr     string            `json:"ipAddr"`
	Status     string            `json:"status"`
	Port       eurekaPort        `json:"port"`
	SecurePort eurekaPort        `json:"securePort"`
	Metadata   map[string]string `json:"metadata"`
}

// eurekaPort is a port as Eureka writes it: {"$": 8080, "@enabled": "true"}.
type eurekaPort struct {
	Number  json.Number `json:"$"`
	Enabled string      `json:"@enabled"`
}

func (p eurekaPort) enabled() bool { return p.Enabled == "true" }

func (d eurekaDiscovery) Instances(ctx context.Context) ([]string, error) {
	var app eurekaApplication
	_, err := getJSON(ctx, d.cfg.Client, d.apps, nil, &app)
	switch {
	case errors.Is(err, errRegistryNotFound):
		return []string{}, nil
	case err != nil:
		return nil, fmt.Errorf("eureka: %w", err)
	}
	if app.Application == nil {
		// Not Eureka's answer (a proxy's, another service's): reading it
		// as no instance would take every instance out of the sum.
		return nil, fmt.Errorf("eureka: the answer for %s has no \"application\"", d.cfg.App)
	}
	var instances []eurekaInstance
	switch raw := bytes.TrimSpace(app.Application.Instance); {
	case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
	case raw[0] == '{':
		instances = make([]eurekaInstance, 1)
		err = json.Unmarshal(raw, &instances[0])
	default:
		err = json.Unmarshal(raw, &instances)
	}
	if err != nil {
		return nil, fmt.Errorf("eureka: the instances of %s: %w", d.cfg.App, err)
	}
	urls := make([]string, 0, len(instances))
	for _, in := range instances {
		if in.Status != "UP" {
			continue // STARTING, OUT_OF_SERVICE, DOWN: not serving
		}
		u, err := d.instanceURL(in)
		if err != nil {
			return nil, fmt.Errorf("eureka: an instance of %s: %w", d.cfg.App, err)
		}
		urls = append(urls, u)
	}
	return sortedSet(urls), nil
}

// instanceURL returns the URL of in's stream.
func (d eurekaDiscovery) instanceURL(in eurekaInstance) (string, error) {
	host := in.HostName
	if d.cfg.UseIPAddr || host == "" {
		host = in.IPAddr
	}
	if host == "" {
		return "", fmt.Errorf("no hostName or ipAddr")
	}
	scheme, registered := "http", in.Port
	if in.SecurePort.enabled() {
		scheme, registered = "https", in.SecurePort
	}
	port, err := strconv.Atoi(string(registered.Number))
	if m, ok := in.Metadata["management.port"]; ok {
		port, err = strconv.Atoi(m)
	}
	if d.cfg.Port != 0 {
		port, err = d.cfg.Port, nil
	}
	if err != nil || port <= 0 || port > 65535 {
		return "", fmt.Errorf("%s has no port to ask", host)
	}
	return instanceURL(scheme, host, port, d.path), nil
}
