package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/internal/ssetest"
)

// A Turbine configuration's clusters, each instance's URL made of its
// host and its cluster's suffix or the default one; the properties of
// Turbine's that have no effect here are named.
func TestParseTurbineConfig(t *testing.T) {
	cfg, err := parseTurbineConfig(map[string]string{
		"turbine.aggregator.clusterConfig":                     "api, batch",
		"turbine.ConfigPropertyBasedDiscovery.api.instances":   "10.0.0.7, 10.0.0.8",
		"turbine.ConfigPropertyBasedDiscovery.batch.instances": "https://batch.internal:8443",
		"turbine.instanceUrlSuffix":                            ":8080/hystrix.stream",
		"turbine.instanceUrlSuffix.batch":                      "/actuator/hystrix.stream",
		"InstanceDiscovery.impl":                               "com.netflix.turbine.discovery.ConfigPropertyBasedDiscovery",
		"turbine.aggregator.namespaceConfig":                   "x",
		"hystrix.command.default.execution.timeout.enabled":    "false", // not Turbine's
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"api", "batch"}, cfg.clusters)
	assert.Equal(t, map[string][]string{
		"api":   {"http://10.0.0.7:8080/hystrix.stream", "http://10.0.0.8:8080/hystrix.stream"},
		"batch": {"https://batch.internal:8443/actuator/hystrix.stream"},
	}, cfg.instances)
	assert.Equal(t, []string{"turbine.aggregator.namespaceConfig"}, cfg.ignored)

	cfg, err = parseTurbineConfig(map[string]string{
		"turbine.ConfigPropertyBasedDiscovery.default.instances": "a,b",
		"turbine.instanceUrlSuffix":                              ":8080/hystrix.stream",
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"default"}, cfg.clusters, "without a cluster list, as Turbine's")
	assert.Equal(t, []string{"http://a:8080/hystrix.stream", "http://b:8080/hystrix.stream"}, cfg.instances["default"])
}

// What Turbine would start without, or would read another way, is an
// error that names the property.
func TestParseTurbineConfigRefuses(t *testing.T) {
	suffix := "turbine.instanceUrlSuffix"
	for _, tc := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{}, "turbine.ConfigPropertyBasedDiscovery.default.instances is not set"},
		{map[string]string{"turbine.aggregator.clusterConfig": "api,,batch"}, "turbine.aggregator.clusterConfig=api,,batch: an empty cluster name"},
		{map[string]string{"turbine.aggregator.clusterConfig": "api,api"}, `cluster "api" is listed twice`},
		{map[string]string{"turbine.aggregator.clusterConfig": "a b"}, `the name "a b" cannot be a query's cluster`},
		{map[string]string{"turbine.aggregator.clusterConfig": "api", "turbine.ConfigPropertyBasedDiscovery.api.instances": "a"},
			`neither turbine.instanceUrlSuffix.api nor turbine.instanceUrlSuffix is set`},
		{map[string]string{"turbine.aggregator.clusterConfig": "api", "turbine.ConfigPropertyBasedDiscovery.api.instances": "a,,b", suffix: "/s"},
			"turbine.ConfigPropertyBasedDiscovery.api.instances=a,,b: an empty instance"},
		{map[string]string{"turbine.aggregator.clusterConfig": "api", "turbine.ConfigPropertyBasedDiscovery.api.instances": "a",
			"turbine.ConfigPropertyBasedDiscovery.apl.instances": "b", suffix: "/s"},
			`turbine.ConfigPropertyBasedDiscovery.apl.instances names cluster "apl", which turbine.aggregator.clusterConfig does not list`},
		{map[string]string{"turbine.ConfigPropertyBasedDiscovery.default.instances": "a", suffix: "/s", "turbine.instanceUrlSuffix.api": "/t"},
			`turbine.instanceUrlSuffix.api names cluster "api"`},
		{map[string]string{"InstanceDiscovery.impl": "com.netflix.turbine.discovery.EurekaInstanceDiscovery.class"},
			"InstanceDiscovery.impl=com.netflix.turbine.discovery.EurekaInstanceDiscovery.class: -config reads the instances the file lists"},
	} {
		_, err := parseTurbineConfig(tc.props)
		require.Error(t, err, "%v", tc.props)
		assert.Contains(t, err.Error(), tc.want)
	}
}

// -config is refused when its file does not read, names a cluster that
// a -cluster flag names too, or lists instances that are not streams the
// turbine can read (as a -cluster flag listing them is, rather than
// served as a cluster that never has an instance); and when it is given
// twice, which would serve the last file's clusters alone.
func TestRunRefusesABadConfig(t *testing.T) {
	dir := t.TempDir()
	bad := writeFile(t, dir, "bad.properties", []byte("turbine.aggregator.clusterConfig=api\n"))
	good := writeFile(t, dir, "good.properties", []byte("turbine.ConfigPropertyBasedDiscovery.default.instances=a\nturbine.instanceUrlSuffix=/s\n"))
	ftp := writeFile(t, dir, "ftp.properties", []byte("turbine.ConfigPropertyBasedDiscovery.default.instances=ftp://10.0.0.7\nturbine.instanceUrlSuffix=:8080/hystrix.stream\n"))
	twice := writeFile(t, dir, "twice.properties", []byte("turbine.ConfigPropertyBasedDiscovery.default.instances=10.0.0.7, HTTP://10.0.0.7\nturbine.instanceUrlSuffix=:8080/hystrix.stream\n"))
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-config", filepath.Join(dir, "none")}, "bad -config: open "},
		{[]string{"-config", bad}, "bad -config " + bad + ": turbine.ConfigPropertyBasedDiscovery.api.instances is not set"},
		{[]string{"-cluster", "default=http://10.0.0.7/s", "-config", good}, `bad -config ` + good + `: cluster "default" is given by -cluster too`},
		{[]string{"-config", ftp}, "bad -config " + ftp + `: turbine: bad instance URL: "ftp://10.0.0.7:8080/hystrix.stream" is not an http or https URL`},
		{[]string{"-config", twice}, "bad -config " + twice + ": "},
		{[]string{"-config", good, "-config", ftp}, "-config: given twice"},
	} {
		err := run(ended(), tc.args, &strings.Builder{}, &strings.Builder{})
		require.Error(t, err, "%q", tc.args)
		assert.Contains(t, err.Error(), tc.want, "%q", tc.args)
	}
}

// The turbine serves the clusters of a Turbine configuration, beside
// those of its flags, and reads their instances from the file again
// every -interval: an instance put in its place is read, and the one
// taken out leaves.
func TestRunServesATurbineConfig(t *testing.T) {
	first, second := ssetest.NewStream(), ssetest.NewStream()
	t.Cleanup(first.Close)
	t.Cleanup(second.Close)
	firstSrv, secondSrv := httptest.NewServer(first), httptest.NewServer(second)
	t.Cleanup(firstSrv.Close)
	t.Cleanup(secondSrv.Close)
	host := func(srv *httptest.Server) string { return srv.Listener.Addr().String() }

	config := filepath.Join(t.TempDir(), "config.properties")
	rewrite := rewriter(t, config)
	rewrite([]byte("turbine.aggregator.clusterConfig=api\n"+
		"turbine.ConfigPropertyBasedDiscovery.api.instances="+host(firstSrv)+"\n"+
		"turbine.instanceUrlSuffix=/hystrix.stream\n"+
		"turbine.aggregator.namespaceConfig=prod\n"), 0)
	base, output := startedWithOutput(t, "-config", config, "-interval", "10ms")
	firstStream, secondStream := "http://"+host(firstSrv)+"/hystrix.stream", "http://"+host(secondSrv)+"/hystrix.stream"
	connected := func(stream string) string {
		return `rxhystrix_turbine_instance_connected{cluster="api",instance="` + stream + `"} 1`
	}
	waitFor(t, http.DefaultClient, base+"/metrics", connected(firstStream))
	assert.Contains(t, output(), config+": turbine.aggregator.namespaceConfig has no effect here")
	page := waitFor(t, http.DefaultClient, base+"/", "config:"+config+" · looked up every 10ms")
	assert.Contains(t, page, `<h2 id="api">api</h2>`)

	rewrite([]byte("turbine.aggregator.clusterConfig=api\n"+
		"turbine.ConfigPropertyBasedDiscovery.api.instances="+host(secondSrv)+"\n"+
		"turbine.instanceUrlSuffix=/hystrix.stream\n"), 1)
	metrics := waitFor(t, http.DefaultClient, base+"/metrics", connected(secondStream))
	assert.NotContains(t, metrics, firstStream, "the instance taken out of the file left")
}

// A host listed twice is one instance, as Turbine reads it: were it
// listed twice, every lookup of the file would be refused by
// SetInstances ("listed twice"), and the cluster would have no instance.
func TestParseTurbineConfigListsAnInstanceOnce(t *testing.T) {
	cfg, err := parseTurbineConfig(map[string]string{
		"turbine.ConfigPropertyBasedDiscovery.default.instances": "10.0.0.7, 10.0.0.8, 10.0.0.7",
		"turbine.instanceUrlSuffix":                              ":8080/hystrix.stream",
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"http://10.0.0.7:8080/hystrix.stream", "http://10.0.0.8:8080/hystrix.stream"}, cfg.instances["default"])
}
