package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/rxhystrix/rxhystrix/internal/javaprops"
	"github.com/rxhystrix/rxhystrix/metricsstream/turbine"
)

// Netflix Turbine's own configuration (its config.properties), which
// -config serves as Turbine did, so that a fleet moves to this turbine
// with the file it has:
//
//	turbine.aggregator.clusterConfig=api,batch
//	turbine.ConfigPropertyBasedDiscovery.api.instances=10.0.0.7,10.0.0.8
//	turbine.ConfigPropertyBasedDiscovery.batch.instances=10.0.1.9
//	turbine.instanceUrlSuffix=:8080/hystrix.stream
//	turbine.instanceUrlSuffix.batch=:9090/actuator/hystrix.stream
//
// Each cluster's instances are read from the file again every -interval,
// as Turbine reads its dynamic properties again, so that an instance
// added to the file is read and one taken out leaves the sum; the
// clusters are those the file names when the turbine starts, as
// Turbine starts a monitor per cluster once.
const (
	clusterConfigProperty = "turbine.aggregator.clusterConfig"
	instancesPrefix       = "turbine.ConfigPropertyBasedDiscovery."
	instancesSuffix       = ".instances"
	urlSuffixProperty     = "turbine.instanceUrlSuffix"
	discoveryProperty     = "InstanceDiscovery.impl"
)

// turbineConfig is what a Turbine configuration says.
type turbineConfig struct {
	clusters  []string            // in the order of turbine.aggregator.clusterConfig
	instances map[string][]string // each cluster's streams' URLs
	ignored   []string            // the properties of Turbine's that have no effect here, in order
}

// errBadConfig is a -config file that cannot be served.
var errBadConfig = errors.New("bad -config")

// readTurbineConfig reads the Turbine configuration at path.
func readTurbineConfig(path string) (turbineConfig, error) {
	f, err := os.Open(path)
	if err != nil {
		return turbineConfig{}, fmt.Errorf("%w: %w", errBadConfig, err)
	}
	defer f.Close()
	props, err := javaprops.Parse(f)
	if err == nil {
		var cfg turbineConfig
		if cfg, err = parseTurbineConfig(props); err == nil {
			return cfg, nil
		}
	}
	return turbineConfig{}, fmt.Errorf("%w %s: %w", errBadConfig, path, err)
}

// parseTurbineConfig reads the clusters of props as Turbine's
// ConfigPropertyBasedDiscovery does: the clusters of
// turbine.aggregator.clusterConfig ("default" when it is not set), the
// instances of each a list of host names (with their ports, or not), and
// the URL of an instance's stream "http://" + its host + the suffix of
// turbine.instanceUrlSuffix.CLUSTER, or of turbine.instanceUrlSuffix. An
// instance that names its scheme (https://10.0.0.7) keeps it, beyond
// Turbine, for instances read over TLS.
//
// Where Turbine would start without a cluster's instances, or with a
// discovery this turbine does not have, it is an error that names the
// property: a cluster without instances or a suffix, an empty instance,
// the instances or the suffix of a cluster that is not listed (a typo
// that Turbine ignores), another InstanceDiscovery.impl.
func parseTurbineConfig(props map[string]string) (turbineConfig, error) {
	if impl, ok := props[discoveryProperty]; ok && !strings.HasSuffix(strings.TrimSuffix(impl, ".class"), ".ConfigPropertyBasedDiscovery") {
		return turbineConfig{}, fmt.Errorf("%s=%s: -config reads the instances the file lists (ConfigPropertyBasedDiscovery); -cluster NAME=eureka:, consul:, dns: or srv: finds them in a registry", discoveryProperty, impl)
	}
	cfg := turbineConfig{instances: map[string][]string{}}
	cfg.clusters = []string{turbine.DefaultCluster}
	if list := props[clusterConfigProperty]; list != "" {
		cfg.clusters = nil
		for name := range strings.SplitSeq(list, ",") {
			name = strings.TrimSpace(name)
			switch {
			case name == "":
				return turbineConfig{}, fmt.Errorf("%s=%s: an empty cluster name", clusterConfigProperty, list)
			case strings.ContainsAny(name, clusterNameForbidden):
				return turbineConfig{}, fmt.Errorf("%s: the name %q cannot be a query's cluster", clusterConfigProperty, name)
			case slices.Contains(cfg.clusters, name):
				return turbineConfig{}, fmt.Errorf("%s: cluster %q is listed twice", clusterConfigProperty, name)
			}
			cfg.clusters = append(cfg.clusters, name)
		}
	}
	for _, name := range cfg.clusters {
		urls, err := instancesOf(props, name)
		if err != nil {
			return turbineConfig{}, err
		}
		cfg.instances[name] = urls
	}
	for _, key := range slices.Sorted(maps.Keys(props)) {
		if cluster, ok := clusterOf(key); ok {
			if _, listed := cfg.instances[cluster]; !listed {
				return turbineConfig{}, fmt.Errorf("%s names cluster %q, which %s does not list", key, cluster, clusterConfigProperty)
			}
			continue
		}
		if key != clusterConfigProperty && key != urlSuffixProperty && key != discoveryProperty && strings.HasPrefix(key, "turbine.") {
			cfg.ignored = append(cfg.ignored, key)
		}
	}
	return cfg, nil
}

// instancesOf returns the URLs of the streams of cluster's instances.
func instancesOf(props map[string]string, cluster string) ([]string, error) {
	key := instancesPrefix + cluster + instancesSuffix
	list := props[key]
	if list == "" {
		return nil, fmt.Errorf("%s is not set: cluster %q has no instance", key, cluster)
	}
	suffix, ok := props[urlSuffixProperty+"."+cluster]
	if !ok {
		suffix, ok = props[urlSuffixProperty]
	}
	if !ok {
		return nil, fmt.Errorf("neither %s.%s nor %s is set: the path of cluster %q's streams is not known", urlSuffixProperty, cluster, urlSuffixProperty, cluster)
	}
	var urls []string
	for host := range strings.SplitSeq(list, ",") {
		host = strings.TrimSpace(host)
		switch {
		case host == "":
			return nil, fmt.Errorf("%s=%s: an empty instance", key, list)
		case !strings.Contains(host, "://"):
			host = "http://" + host
		}
		// A host listed twice is one instance: the Aggregator refuses a
		// list that names one twice.
		if u := host + suffix; !slices.Contains(urls, u) {
			urls = append(urls, u)
		}
	}
	return urls, nil
}

// clusterOf returns the cluster that key is a property of: its
// instances, or its URL suffix.
func clusterOf(key string) (string, bool) {
	if rest, ok := strings.CutPrefix(key, instancesPrefix); ok {
		return strings.CutSuffix(rest, instancesSuffix)
	}
	if rest, ok := strings.CutPrefix(key, urlSuffixProperty+"."); ok {
		return rest, true
	}
	return "", false
}

// addConfig adds the clusters of the Turbine configuration at path, after
// those of the flags, and returns the properties that have no effect.
func (f *clusterFlag) addConfig(path string) (ignored []string, err error) {
	cfg, err := readTurbineConfig(path)
	if err != nil {
		return nil, err
	}
	for _, name := range cfg.clusters {
		if slices.ContainsFunc(*f, func(c clusterSpec) bool { return c.name == name }) {
			return nil, fmt.Errorf("%w %s: cluster %q is given by -cluster too", errBadConfig, path, name)
		}
		*f = append(*f, clusterSpec{name: name, lookup: "config:", urls: []string{path}, initial: cfg.instances[name],
			discover: func(*http.Client) (turbine.Discovery, error) { return configDiscovery(path, name), nil }})
	}
	return cfg.ignored, nil
}

// configDiscovery finds cluster's instances in the Turbine configuration
// at path, read again at each question. A file that no longer reads, or
// no longer lists the cluster, is a lookup that fails: the instances
// found before are still read.
func configDiscovery(path, cluster string) turbine.Discovery {
	return turbine.DiscoveryFunc(func(context.Context) ([]string, error) {
		cfg, err := readTurbineConfig(path)
		if err != nil {
			return nil, err
		}
		urls, ok := cfg.instances[cluster]
		if !ok {
			return nil, fmt.Errorf("%s no longer lists cluster %q in %s: its instances stay until the turbine restarts", path, cluster, clusterConfigProperty)
		}
		return urls, nil
	})
}
