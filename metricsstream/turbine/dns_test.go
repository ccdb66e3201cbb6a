package turbine

import (
	"context"
	"errors"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeResolver answers for the names of its maps, and fails for others.
type fakeResolver struct {
	hosts map[string][]string
	srv   map[string][]*net.SRV
}

var errNoSuchHost = errors.New("no such host")

func (r fakeResolver) LookupHost(_ context.Context, host string) ([]string, error) {
	if addrs, ok := r.hosts[host]; ok {
		return addrs, nil
	}
	return nil, errNoSuchHost
}

func (r fakeResolver) LookupSRV(_ context.Context, service, proto, name string) (string, []*net.SRV, error) {
	if service != "" || proto != "" {
		return "", nil, errors.New("the name is to be looked up as it is")
	}
	if recs, ok := r.srv[name]; ok {
		return name, recs, nil
	}
	return "", nil, errNoSuchHost
}

func TestDNSFindsAnInstanceAtEachAddress(t *testing.T) {
	r := fakeResolver{hosts: map[string][]string{
		"orders.shop.svc":  {"10.1.0.9", "10.1.0.7", "10.1.0.7"},
		"orders6.shop.svc": {"fd00::7", "fd00::5"},
	}}
	for _, tc := range []struct {
		template string
		want     []string
	}{
		{"http://orders.shop.svc:8080/hystrix.stream?delay=1000", []string{
			"http://10.1.0.7:8080/hystrix.stream?delay=1000",
			"http://10.1.0.9:8080/hystrix.stream?delay=1000",
		}},
		{"https://user:pw@orders.shop.svc/hystrix.stream", []string{
			"https://user:pw@10.1.0.7/hystrix.stream",
			"https://user:pw@10.1.0.9/hystrix.stream",
		}},
		{"http://orders6.shop.svc:8080/hystrix.stream", []string{
			"http://[fd00::5]:8080/hystrix.stream",
			"http://[fd00::7]:8080/hystrix.stream",
		}},
	} {
		d, err := DNS(tc.template, r)
		require.NoError(t, err)
		urls, err := d.Instances(context.Background())
		require.NoError(t, err)
		assert.Equal(t, tc.want, urls, "%s: sorted, one per address", tc.template)
		for _, u := range urls {
			_, err := parseInstanceURL(u)
			assert.NoError(t, err)
		}
	}

	d, err := DNS("http://gone.shop.svc:8080/hystrix.stream", r)
	require.NoError(t, err)
	_, err = d.Instances(context.Background())
	assert.ErrorIs(t, err, errNoSuchHost)
}

// A dual-stack Service's name has an A and an AAAA record for each pod:
// one family's addresses name each pod once, where both would read every
// pod's stream twice and double its counts in the sum.
func TestDNSReadsADualStackPodOnce(t *testing.T) {
	r := fakeResolver{hosts: map[string][]string{
		"orders.shop.svc": {"fd00::7", "10.1.0.7", "fd00::9", "10.1.0.9"},
	}}
	d, err := DNS("http://orders.shop.svc:8080/hystrix.stream", r)
	require.NoError(t, err)
	urls, err := d.Instances(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{"http://10.1.0.7:8080/hystrix.stream", "http://10.1.0.9:8080/hystrix.stream"}, urls)
}

func TestSRVFindsAnInstanceAtEachRecord(t *testing.T) {
	r := fakeResolver{srv: map[string][]*net.SRV{
		"_metrics._tcp.orders.shop.svc": {
			{Target: "b.orders.shop.svc.", Port: 8081, Priority: 1},
			{Target: "a.orders.shop.svc.", Port: 8080, Priority: 1},
			{Target: "a.orders.shop.svc.", Port: 8080, Priority: 2},
		},
		"_metrics._tcp.none.shop.svc": {{Target: ".", Port: 0}},
	}}
	d, err := SRV("http://_metrics._tcp.orders.shop.svc/hystrix.stream", r)
	require.NoError(t, err)
	urls, err := d.Instances(context.Background())
	require.NoError(t, err)
	assert.Equal(t, []string{
		"http://a.orders.shop.svc:8080/hystrix.stream",
		"http://b.orders.shop.svc:8081/hystrix.stream",
	}, urls)

	d, err = SRV("http://_metrics._tcp.none.shop.svc/hystrix.stream", r)
	require.NoError(t, err)
	urls, err = d.Instances(context.Background())
	require.NoError(t, err)
	assert.Empty(t, urls, `"." is no instance`)

	d, err = SRV("http://_metrics._tcp.gone.shop.svc/hystrix.stream", r)
	require.NoError(t, err)
	_, err = d.Instances(context.Background())
	assert.ErrorIs(t, err, errNoSuchHost)
}

func TestDNSAndSRVRefuseBadTemplates(t *testing.T) {
	for _, tc := range []struct {
		template, want string
		discovery      func(string, Resolver) (Discovery, error)
	}{
		{"ftp://orders/hystrix.stream", `turbine: bad instance URL: "ftp://orders/hystrix.stream" is not an http or https URL`, DNS},
		{"/hystrix.stream", `turbine: bad instance URL: "/hystrix.stream" is not an http or https URL`, SRV},
		{"http://_metrics._tcp.orders:8080/hystrix.stream", `turbine: bad instance URL: "http://_metrics._tcp.orders:8080/hystrix.stream" has a port, which SRV records give`, SRV},
	} {
		d, err := tc.discovery(tc.template, nil)
		assert.Nil(t, d)
		assert.ErrorIs(t, err, ErrBadInstance)
		assert.EqualError(t, err, tc.want)
	}
}

// The system's resolver finds the instance at localhost's address.
func TestDNSDiscoveryOfLocalhostIsSummed(t *testing.T) {
	in := newFakeInstance(t)
	u, err := url.Parse(in.url())
	require.NoError(t, err)
	u.Host = net.JoinHostPort("localhost", u.Port())
	d, err := DNS(u.String(), nil)
	require.NoError(t, err)
	a, mc := newDiscoveredAggregator(t, d, time.Minute)

	in.send(t, commandObject("GetUser", 3, false))
	waitSum(t, a, mc, "the instance at localhost's address is summed", func(s sum) bool {
		return num(s["HystrixCommand GetUser"]["rollingCountSuccess"]) == "3"
	})
	assert.Contains(t, urlsOf(a.Instances()), in.url(), "found by its address (127.0.0.1)")
	s, _ := a.Discovery()
	assert.NoError(t, s.Err)
}
