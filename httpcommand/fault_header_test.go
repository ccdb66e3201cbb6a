package httpcommand

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// markSeen is what a service saw of its request's mark.
type markSeen struct {
	keys   []string
	marked bool
	header string
}

// A request's mark for fault injection goes from service to service: the
// front service reads it from the header into its request's context, its
// Transport writes it on the request to the back service, which reads it
// again; a request without the header is marked nowhere.
func TestFaultHeaderCarriesTheMarkThroughServices(t *testing.T) {
	reg := command.NewRegistry()
	t.Cleanup(reg.Close)
	var back markSeen
	backSrv := httptest.NewServer(RequestContext(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		back.keys, back.marked = command.FaultInjectionOf(r.Context())
		back.header = r.Header.Get(FaultHeader)
	}), WithFaultHeader(FaultHeader)))
	defer backSrv.Close()
	client := &http.Client{Transport: New(WithRegistry(reg), WithFaultHeader(FaultHeader))}
	var front markSeen
	frontSrv := httptest.NewServer(RequestContext(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		front.keys, front.marked = command.FaultInjectionOf(r.Context())
		req, err := http.NewRequestWithContext(r.Context(), http.MethodGet, backSrv.URL, nil)
		require.NoError(t, err)
		req.Header.Set("X-Trace", "1")
		resp, err := client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.Header{"X-Trace": {"1"}}, req.Header, "the caller's request is not changed")
	}), WithFaultHeader(FaultHeader)))
	defer frontSrv.Close()

	for _, tc := range []struct {
		name, header string
		want         markSeen
		sent         string
	}{
		{"keys", "GetUser, Province%2017", markSeen{keys: []string{"GetUser", "Province 17"}, marked: true}, "GetUser,Province%2017"},
		{"every key", "*", markSeen{marked: true}, "*"},
		{"none", "", markSeen{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			front, back = markSeen{}, markSeen{}
			req, err := http.NewRequest(http.MethodGet, frontSrv.URL, nil)
			require.NoError(t, err)
			if tc.header != "" {
				req.Header.Set(FaultHeader, tc.header)
			}
			resp, err := http.DefaultClient.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, http.StatusOK, resp.StatusCode)
			assert.Equal(t, tc.want, front)
			want := tc.want
			want.header = tc.sent
			assert.Equal(t, want, back)
		})
	}
}

// A malformed header is answered 400, naming the header, and the request
// is not served.
func TestMalformedFaultHeaderIsABadRequest(t *testing.T) {
	for _, v := range []string{"%zz", "GetUser,", ""} {
		served := false
		h := RequestContext(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { served = true }), WithFaultHeader("X-Faults"))
		req := httptest.NewRequest(http.MethodGet, "/", nil)
		req.Header["X-Faults"] = []string{v}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		assert.Equal(t, http.StatusBadRequest, rec.Code, "%q", v)
		assert.True(t, strings.HasPrefix(rec.Body.String(), "httpcommand: header X-Faults: "), rec.Body.String())
		assert.False(t, served)
	}
}

// Without WithFaultHeader, the header is not read.
func TestFaultHeaderIsReadOnlyWhenAsked(t *testing.T) {
	var marked bool
	h := RequestContext(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, marked = command.FaultInjectionOf(r.Context())
	}))
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.Header.Set(FaultHeader, "*")
	h.ServeHTTP(httptest.NewRecorder(), req)
	assert.False(t, marked)
}

func TestWithFaultHeaderPanicsOnABadName(t *testing.T) {
	assert.PanicsWithValue(t, `httpcommand: WithFaultHeader: "Bad Name" is not a valid header field name`, func() { WithFaultHeader("Bad Name") })
}

// A request made by hand without a Header is sent whether or not its
// context is marked for fault injection, as http.Client sends it: it is
// not a failure of the host's when unmarked and a success when marked.
func TestRequestWithoutHeaderIsSentMarkedOrNot(t *testing.T) {
	h := newHarness(t, WithFaultHeader(FaultHeader))
	srv := server(t, status(http.StatusOK))
	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	resp, err := h.transport.RoundTrip(&http.Request{Method: http.MethodGet, URL: u, Host: u.Host})
	require.NoError(t, err)
	assert.Equal(t, "OK", readBody(t, resp))
	ev := h.events(hostOf(srv))
	assert.Equal(t, int64(1), ev[metricsstream.Success])
	assert.Zero(t, ev[metricsstream.Failure], "the host did nothing wrong")
}
