package turbine

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// registry is a fake registry's HTTP API: it answers each path with the
// status and body of answers, and records each request.
type registry struct {
	*httptest.Server
	answers  map[string]registryAnswer
	requests chan *http.Request
}

type registryAnswer struct {
	status int
	body   string
}

func newRegistry(t *testing.T, answers map[string]registryAnswer) *registry {
	t.Helper()
	r := &registry{answers: answers, requests: make(chan *http.Request, 16)}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.requests <- req
		a, ok := r.answers[req.URL.Path]
		if !ok {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		_, _ = w.Write([]byte(a.body))
	}))
	t.Cleanup(r.Close)
	return r
}

// discovered asks d, made with err, for its instances.
func discovered(d Discovery, err error) ([]string, error) {
	if err != nil {
		return nil, fmt.Errorf("the configuration: %w", err)
	}
	return d.Instances(context.Background())
}

func TestStreamPath(t *testing.T) {
	for in, want := range map[string]string{
		"":                          "/hystrix.stream",
		"/actuator/hystrix.stream":  "/actuator/hystrix.stream",
		"/hystrix.stream?delay=500": "/hystrix.stream?delay=500",
	} {
		u, err := streamPath("Path", in)
		require.NoError(t, err, in)
		assert.Equal(t, want, u.String(), in)
	}
	for _, bad := range []string{"hystrix.stream", "http://host/hystrix.stream", "//host/x", "/x#frag", "/%zz"} {
		_, err := streamPath("EurekaConfig.Path", bad)
		assert.ErrorIs(t, err, ErrBadDiscovery, bad)
		assert.ErrorContains(t, err, `EurekaConfig.Path "`+bad+`" is not a path`, bad)
	}
}

func TestRegistryURL(t *testing.T) {
	u, err := registryURL("Server", "http://eureka:8761/eureka")
	require.NoError(t, err)
	assert.Equal(t, "http://eureka:8761/eureka/", u.String())
	for _, bad := range []string{"", "eureka:8761", "ftp://eureka/", "/eureka/", "http://"} {
		_, err := registryURL("ConsulConfig.Server", bad)
		assert.ErrorIs(t, err, ErrBadDiscovery, bad)
		assert.ErrorContains(t, err, `ConsulConfig.Server "`+bad+`" is not an absolute http or https URL`, bad)
	}
	// A fragment is never sent, and a Consul blocking query's index and
	// wait, appended after it, would not be either.
	_, err = Consul(ConsulConfig{Server: "http://consul:8500/#agent", Service: "orders"})
	assert.ErrorIs(t, err, ErrBadDiscovery)
	assert.ErrorContains(t, err, `ConsulConfig.Server "http://consul:8500/#agent" has a fragment`)
	_, err = Eureka(EurekaConfig{Server: "http://eureka:8761/eureka/#x", App: "ORDERS"})
	assert.ErrorIs(t, err, ErrBadDiscovery)
}

func TestRegistryFailuresNameTheAnswer(t *testing.T) {
	reg := newRegistry(t, map[string]registryAnswer{
		"/eureka/apps/ORDERS":          {http.StatusServiceUnavailable, "down"},
		"/eureka/apps/BROKEN":          {http.StatusOK, `{"application": `},
		"/v1/health/service/orders":    {http.StatusInternalServerError, "no leader"},
		"/v1/health/service/malformed": {http.StatusOK, `{"not": "a list"}`},
	})
	client := reg.Client()
	_, err := discovered(Eureka(EurekaConfig{Server: reg.URL + "/eureka/", App: "ORDERS", Client: client}))
	assert.EqualError(t, err, "eureka: GET "+reg.URL+"/eureka/apps/ORDERS: 503 Service Unavailable")
	_, err = discovered(Eureka(EurekaConfig{Server: reg.URL + "/eureka/", App: "BROKEN", Client: client}))
	assert.ErrorContains(t, err, "eureka: GET "+reg.URL+"/eureka/apps/BROKEN: unexpected EOF")
	_, err = discovered(Consul(ConsulConfig{Server: reg.URL, Service: "orders", Client: client}))
	assert.EqualError(t, err, "consul: GET "+reg.URL+"/v1/health/service/orders?passing=true: 500 Internal Server Error")
	_, err = discovered(Consul(ConsulConfig{Server: reg.URL, Service: "malformed", Client: client}))
	assert.ErrorContains(t, err, "consul: GET "+reg.URL+"/v1/health/service/malformed?passing=true: json: cannot unmarshal object")

	withPassword := strings.Replace(reg.URL, "http://", "http://ops:secret@", 1)
	_, err = discovered(Eureka(EurekaConfig{Server: withPassword + "/eureka/", App: "ORDERS", Client: client}))
	assert.ErrorContains(t, err, "GET http://ops:xxxxx@", "the password redacted")
	assert.NotContains(t, err.Error(), "secret")

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	d, err := Consul(ConsulConfig{Server: reg.URL, Service: "orders", Client: client})
	require.NoError(t, err)
	_, err = d.Instances(cancelled)
	assert.ErrorIs(t, err, context.Canceled, "the discovery's context bounds the question")
}

// roundTrip is an http.RoundTripper that is a function.
type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// The registry is asked with the configuration's client, and with
// http.DefaultClient when it has none.
func TestRegistryIsAskedWithTheClient(t *testing.T) {
	client := &http.Client{Transport: roundTrip(func(r *http.Request) (*http.Response, error) {
		rec := httptest.NewRecorder()
		rec.WriteString(`[{"Service": {"Address": "10.1.0.7", "Port": 8080}}]`)
		return rec.Result(), nil
	})}
	urls, err := discovered(Consul(ConsulConfig{Server: "http://consul.invalid:8500", Service: "orders", Client: client}))
	require.NoError(t, err)
	assert.Equal(t, []string{"http://10.1.0.7:8080/hystrix.stream"}, urls)

	reg := newRegistry(t, map[string]registryAnswer{"/v1/health/service/orders": {http.StatusOK, ordersService}})
	t.Cleanup(http.DefaultClient.CloseIdleConnections)
	urls, err = discovered(Consul(ConsulConfig{Server: reg.URL, Service: "orders"}))
	require.NoError(t, err)
	assert.Len(t, urls, 3)
}
