package turbine

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClusterHandlerServesTheNamedClustersSum(t *testing.T) {
	api, batch := newFakeInstance(t), newFakeInstance(t)
	apiAgg, apiClock := newAggregator(t, api)
	batchAgg, batchClock := newAggregator(t, batch)
	api.send(t, commandObject("GetUser", 3, false))
	batch.send(t, commandObject("Reindex", 5, false))
	waitSum(t, apiAgg, apiClock, "api is read", func(s sum) bool { return s["HystrixCommand GetUser"] != nil })
	waitSum(t, batchAgg, batchClock, "batch is read", func(s sum) bool { return s["HystrixCommand Reindex"] != nil })

	srv := httptest.NewServer(ClusterHandler(map[string]*Aggregator{"api": apiAgg, DefaultCluster: batchAgg}))
	defer srv.Close()
	for _, tc := range []struct{ query, want, notWant string }{
		{"?cluster=api", `"name":"GetUser"`, "Reindex"},
		{"?cluster=default", `"name":"Reindex"`, "GetUser"},
		{"", `"name":"Reindex"`, "GetUser"},
	} {
		_, frame := firstFrame(t, srv.URL+"/turbine.stream"+tc.query)
		assert.Contains(t, frame, tc.want, tc.query)
		assert.NotContains(t, frame, tc.notWant, tc.query)
	}

	resp, err := http.Get(srv.URL + "/turbine.stream?cluster=web")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	assert.Equal(t, "turbine: no cluster \"web\"; the clusters are: api, default\n", string(body))
}

func TestClusterHandlerPanicsOnAClusterNoOneCanRead(t *testing.T) {
	a, _ := newAggregator(t)
	assert.PanicsWithValue(t, `turbine: ClusterHandler: cluster "" has an empty name or a nil Aggregator`, func() {
		ClusterHandler(map[string]*Aggregator{"": a})
	})
	assert.Panics(t, func() { ClusterHandler(map[string]*Aggregator{"api": nil}) })
}

// firstFrame returns the header of the stream at url and the events of
// its first frame.
func firstFrame(t *testing.T, url string) (http.Header, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	var frame strings.Builder
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		if strings.HasPrefix(line, "ping:") {
			return resp.Header, frame.String()
		}
		frame.WriteString(line)
	}
}

// A cluster parameter that does not read (a malformed escape, a
// semicolon, which net/url drops the whole parameter for) names a
// cluster all the same: the request must not get the default cluster's
// sum as if it had named none, a dashboard drawing another cluster's
// commands under the name asked for.
func TestClusterHandlerDoesNotServeTheDefaultForAClusterItCannotRead(t *testing.T) {
	def, _ := newAggregator(t)
	api, _ := newAggregator(t)
	srv := httptest.NewServer(ClusterHandler(map[string]*Aggregator{"api": api, DefaultCluster: def}))
	defer srv.Close()
	for query, want := range map[string]int{
		"?cluster=api%zz":         http.StatusBadRequest,
		"?cluster=api;batch":      http.StatusNotFound,
		"?x=1&cluster=api%2&y=2":  http.StatusBadRequest,
		"?cluster=&cluster=api":   http.StatusOK, // the first, empty: none named
		"?bad%zz=1&cluster=api":   http.StatusOK, // other parameters are not read
		"?cluster=api&cluster=%z": http.StatusOK, // the first counts
	} {
		ctx, cancel := context.WithTimeout(context.Background(), failAfter)
		req, err := http.NewRequestWithContext(ctx, http.MethodHead, srv.URL+"/turbine.stream"+query, nil)
		require.NoError(t, err)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		cancel()
		assert.Equal(t, want, resp.StatusCode, query)
	}
}
