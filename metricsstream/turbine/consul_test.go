package turbine

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ordersService is Consul's health answer for orders with passing
// checks: two instances with addresses of their own, one at its node's.
const ordersService = `[
	{"Node": {"Node": "n2", "Address": "10.0.0.2"}, "Service": {"ID": "orders-2", "Service": "orders", "Address": "10.1.0.9", "Port": 8080}},
	{"Node": {"Node": "n1", "Address": "10.0.0.1"}, "Service": {"ID": "orders-1", "Service": "orders", "Address": "10.1.0.7", "Port": 8080}},
	{"Node": {"Node": "n3", "Address": "10.0.0.3"}, "Service": {"ID": "orders-3", "Service": "orders", "Address": "", "Port": 9000}}
]`

func TestConsulFindsTheInstancesPassing(t *testing.T) {
	reg := newRegistry(t, map[string]registryAnswer{
		"/v1/health/service/orders": {http.StatusOK, ordersService},
		"/v1/health/service/gone":   {http.StatusOK, `[]`},
	})
	urls, err := discovered(Consul(ConsulConfig{Server: reg.URL, Service: "orders", Client: reg.Client()}))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"http://10.0.0.3:9000/hystrix.stream",
		"http://10.1.0.7:8080/hystrix.stream",
		"http://10.1.0.9:8080/hystrix.stream",
	}, urls)
	req := <-reg.requests
	assert.Equal(t, "passing=true", req.URL.RawQuery, "only the instances whose checks pass")
	assert.Empty(t, req.Header.Get("X-Consul-Token"))

	urls, err = discovered(Consul(ConsulConfig{
		Server: reg.URL + "/", Service: "orders", Tag: "metrics", Datacenter: "eu-1", Token: "secret",
		Scheme: "https", Path: "/actuator/hystrix.stream", Port: 8081, Client: reg.Client(),
	}))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"https://10.0.0.3:8081/actuator/hystrix.stream",
		"https://10.1.0.7:8081/actuator/hystrix.stream",
		"https://10.1.0.9:8081/actuator/hystrix.stream",
	}, urls)
	req = <-reg.requests
	assert.Equal(t, "dc=eu-1&passing=true&tag=metrics", req.URL.RawQuery)
	assert.Equal(t, "secret", req.Header.Get("X-Consul-Token"))

	urls, err = discovered(Consul(ConsulConfig{Server: reg.URL, Service: "gone", Client: reg.Client()}))
	require.NoError(t, err)
	assert.Empty(t, urls)

	_, err = discovered(Consul(ConsulConfig{Server: reg.URL + "/not-consul", Service: "orders", Client: reg.Client()}))
	assert.EqualError(t, err, "consul: GET "+reg.URL+"/not-consul/v1/health/service/orders?passing=true: 404 Not Found")
}

func TestConsulInstanceWithoutAnAddressFails(t *testing.T) {
	reg := newRegistry(t, map[string]registryAnswer{
		"/v1/health/service/orders": {http.StatusOK, `[{"Node": {"Address": ""}, "Service": {"Address": "", "Port": 8080}}]`},
	})
	_, err := discovered(Consul(ConsulConfig{Server: reg.URL, Service: "orders", Client: reg.Client()}))
	assert.EqualError(t, err, `consul: an instance of orders has no address or port to ask ("", 8080)`)
}

func TestConsulRefusesABadConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  ConsulConfig
		want string
	}{
		{ConsulConfig{Server: "127.0.0.1:8500", Service: "orders"}, `ConsulConfig.Server "127.0.0.1:8500" is not an absolute http or https URL`},
		{ConsulConfig{Server: "http://127.0.0.1:8500"}, `ConsulConfig.Service "" is not a service's name`},
		{ConsulConfig{Server: "http://127.0.0.1:8500", Service: "orders", Scheme: "grpc"}, `ConsulConfig.Scheme "grpc" is not http or https`},
		{ConsulConfig{Server: "http://127.0.0.1:8500", Service: "orders", Path: "x"}, `ConsulConfig.Path "x" is not a path`},
		{ConsulConfig{Server: "http://127.0.0.1:8500", Service: "orders", Port: -1}, `ConsulConfig.Port -1 is not a TCP port`},
		{ConsulConfig{Server: "http://127.0.0.1:8500", Service: "orders", Wait: -time.Second}, `ConsulConfig.Wait -1s is not between 0 and 10m0s`},
		{ConsulConfig{Server: "http://127.0.0.1:8500", Service: "orders", Wait: 11 * time.Minute}, `ConsulConfig.Wait 11m0s is not between 0 and 10m0s`},
	} {
		_, err := Consul(tc.cfg)
		assert.ErrorIs(t, err, ErrBadDiscovery)
		assert.ErrorContains(t, err, tc.want)
	}
}

// A client whose Timeout ends a blocking query before Consul answers it
// fails every question after the first: the discovery would keep the
// first instances for ever, saying only that each lookup failed. Consul
// refuses it, as it refuses the configuration's other unusable fields.
func TestConsulRefusesAClientTimeoutWithinWait(t *testing.T) {
	for _, timeout := range []time.Duration{time.Minute, 5 * time.Minute, 5*time.Minute + 5*time.Minute/16} {
		_, err := Consul(ConsulConfig{Server: "http://127.0.0.1:8500", Service: "orders", Wait: 5 * time.Minute,
			Client: &http.Client{Timeout: timeout}})
		assert.ErrorIs(t, err, ErrBadDiscovery, "timeout %v", timeout)
		assert.ErrorContains(t, err, "ConsulConfig.Client", "timeout %v", timeout)
	}
	for _, cfg := range []ConsulConfig{
		{Server: "http://127.0.0.1:8500", Service: "orders", Wait: 5 * time.Minute, Client: &http.Client{Timeout: 6 * time.Minute}},
		{Server: "http://127.0.0.1:8500", Service: "orders", Wait: 5 * time.Minute, Client: &http.Client{}},
		{Server: "http://127.0.0.1:8500", Service: "orders", Client: &http.Client{Timeout: time.Second}}, // no Wait
	} {
		_, err := Consul(cfg)
		assert.NoError(t, err, "%+v", cfg)
	}
}
