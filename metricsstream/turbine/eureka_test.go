package turbine

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ordersApp is a Eureka server's answer for ORDERS: three instances UP
// (on the http port, on the secure port, on a management port), one
// DOWN and one STARTING.
const ordersApp = `{"application": {"name": "ORDERS", "instance": [
	{"hostName": "a.local", "ipAddr": "10.0.0.1", "status": "UP",
	 "port": {"$": 8080, "@enabled": "true"}, "securePort": {"$": 443, "@enabled": "false"}},
	{"hostName": "b.local", "ipAddr": "10.0.0.2", "status": "UP",
	 "port": {"$": 8080, "@enabled": "false"}, "securePort": {"$": 8443, "@enabled": "true"}},
	{"hostName": "c.local", "ipAddr": "10.0.0.3", "status": "UP",
	 "port": {"$": 8080, "@enabled": "true"}, "securePort": {"$": 443, "@enabled": "false"},
	 "metadata": {"management.port": "9090", "zone": "a"}},
	{"hostName": "d.local", "ipAddr": "10.0.0.4", "status": "DOWN",
	 "port": {"$": 8080, "@enabled": "true"}, "securePort": {"$": 443, "@enabled": "false"}},
	{"hostName": "e.local", "ipAddr": "10.0.0.5", "status": "STARTING",
	 "port": {"$": 8080, "@enabled": "true"}, "securePort": {"$": 443, "@enabled": "false"}}
]}}`

// billingApp is Eureka's answer for an application of one instance:
// its instance is an object, not an array of one.
const billingApp = `{"application": {"name": "BILLING", "instance":
	{"hostName": "billing.local", "ipAddr": "10.0.1.1", "status": "UP",
	 "port": {"$": "7001", "@enabled": "true"}, "securePort": {"$": "7002", "@enabled": "false"}}}}`

func TestEurekaFindsTheInstancesUp(t *testing.T) {
	reg := newRegistry(t, map[string]registryAnswer{
		"/eureka/apps/ORDERS":  {http.StatusOK, ordersApp},
		"/eureka/apps/BILLING": {http.StatusOK, billingApp},
		"/eureka/apps/EMPTY":   {http.StatusOK, `{"application": {"name": "EMPTY"}}`},
		"/eureka/apps/NULL":    {http.StatusOK, `{"application": {"name": "NULL", "instance": null}}`},
	})
	cfg := EurekaConfig{Server: reg.URL + "/eureka", App: "ORDERS", Client: reg.Client()}
	urls, err := discovered(Eureka(cfg))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"http://a.local:8080/hystrix.stream",
		"http://c.local:9090/hystrix.stream",
		"https://b.local:8443/hystrix.stream",
	}, urls)
	req := <-reg.requests
	assert.Equal(t, "application/json", req.Header.Get("Accept"), "Eureka answers XML unless asked for JSON")

	cfg.Path, cfg.UseIPAddr = "/actuator/hystrix.stream?delay=1000", true
	urls, err = discovered(Eureka(cfg))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"http://10.0.0.1:8080/actuator/hystrix.stream?delay=1000",
		"http://10.0.0.3:9090/actuator/hystrix.stream?delay=1000",
		"https://10.0.0.2:8443/actuator/hystrix.stream?delay=1000",
	}, urls)

	cfg.Path, cfg.UseIPAddr, cfg.Port = "", false, 8081
	urls, err = discovered(Eureka(cfg))
	require.NoError(t, err)
	assert.Equal(t, []string{
		"http://a.local:8081/hystrix.stream",
		"http://c.local:8081/hystrix.stream",
		"https://b.local:8081/hystrix.stream",
	}, urls, "Port overrides the registered ports and the management port")

	urls, err = discovered(Eureka(EurekaConfig{Server: reg.URL + "/eureka/", App: "BILLING", Client: reg.Client()}))
	require.NoError(t, err)
	assert.Equal(t, []string{"http://billing.local:7001/hystrix.stream"}, urls, "one instance, as an object")

	for _, empty := range []string{"EMPTY", "NULL"} {
		urls, err = discovered(Eureka(EurekaConfig{Server: reg.URL + "/eureka/", App: empty, Client: reg.Client()}))
		require.NoError(t, err, empty)
		assert.Empty(t, urls, "%s: an application without instances", empty)
	}

	urls, err = discovered(Eureka(EurekaConfig{Server: reg.URL + "/eureka/", App: "GONE", Client: reg.Client()}))
	require.NoError(t, err)
	assert.Empty(t, urls, "an application Eureka does not know has no instances")
	assert.NotNil(t, urls)
}

func TestEurekaInstanceWithoutAPortFails(t *testing.T) {
	reg := newRegistry(t, map[string]registryAnswer{
		"/eureka/apps/ORDERS": {http.StatusOK, `{"application": {"instance": [
			{"hostName": "a.local", "status": "UP", "port": {"@enabled": "true"}}]}}`},
		"/eureka/apps/BILLING": {http.StatusOK, `{"application": {"instance": [
			{"hostName": "b.local", "status": "UP", "port": {"$": 8080, "@enabled": "true"},
			 "metadata": {"management.port": "admin"}}]}}`},
	})
	_, err := discovered(Eureka(EurekaConfig{Server: reg.URL + "/eureka/", App: "ORDERS", Client: reg.Client()}))
	assert.EqualError(t, err, "eureka: an instance of ORDERS: a.local has no port to ask")
	_, err = discovered(Eureka(EurekaConfig{Server: reg.URL + "/eureka/", App: "BILLING", Client: reg.Client()}))
	assert.EqualError(t, err, "eureka: an instance of BILLING: b.local has no port to ask", "a management.port that is not a number")
}

func TestEurekaRefusesABadConfig(t *testing.T) {
	for _, tc := range []struct {
		cfg  EurekaConfig
		want string
	}{
		{EurekaConfig{Server: "eureka:8761", App: "ORDERS"}, `EurekaConfig.Server "eureka:8761" is not an absolute http or https URL`},
		{EurekaConfig{Server: "http://eureka:8761/eureka/"}, `EurekaConfig.App "" is not an application's name`},
		{EurekaConfig{Server: "http://eureka:8761/eureka/", App: "A/B"}, `EurekaConfig.App "A/B" is not an application's name`},
		{EurekaConfig{Server: "http://eureka:8761/eureka/", App: "ORDERS", Path: "hystrix.stream"}, `EurekaConfig.Path "hystrix.stream" is not a path`},
		{EurekaConfig{Server: "http://eureka:8761/eureka/", App: "ORDERS", Port: 70000}, `EurekaConfig.Port 70000 is not a TCP port`},
	} {
		_, err := Eureka(tc.cfg)
		assert.ErrorIs(t, err, ErrBadDiscovery)
		assert.ErrorContains(t, err, tc.want)
	}
}

// A Eureka answer of 200 that is not an application's (no "application"
// object: a proxy's, another service's) fails the discovery, which keeps
// the instances found before, rather than finding no instance and taking
// every instance out of the sum.
func TestEurekaAnswerThatIsNotAnApplicationFails(t *testing.T) {
	for _, body := range []string{`{}`, `null`, `{"applications": {"application": []}}`} {
		reg := newRegistry(t, map[string]registryAnswer{"/eureka/apps/ORDERS": {http.StatusOK, body}})
		urls, err := discovered(Eureka(EurekaConfig{Server: reg.URL + "/eureka/", App: "ORDERS", Client: reg.Client()}))
		assert.ErrorContains(t, err, `eureka: the answer for ORDERS has no "application"`, body)
		assert.Nil(t, urls, body)
	}
}
