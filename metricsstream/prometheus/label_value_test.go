package prometheus

import (
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rxhystrix/rxhystrix/internal/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLabelValue(t *testing.T) {
	cases := []struct{ key, want string }{
		{"GetUser", "GetUser"},
		{"", ""},
		{"snow ☃ and 😀", "snow ☃ and 😀"},
		{`C:\path`, `C:\path`},
		{"bad-\xff", `bad-\xff`},
		{"bad-\xfe", `bad-\xfe`},
		{"\xe2\x82 cut short", `\xe2\x82 cut short`},
		{"\xed\xa0\x80", `\xed\xa0\x80`}, // a surrogate is not UTF-8
		{"back\\slash \xff", `back\\slash \xff`},
		{`bad-\xff`, `bad-\\xff`}, // valid, but would pass for the escaped "bad-\xff"
	}
	for _, c := range cases {
		assert.Equal(t, c.want, labelValue(c.key), "%q", c.key)
	}
}

// unescapeLabel undoes labelValue's escaping.
func unescapeLabel(t *testing.T, v string) string {
	var b []byte
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' {
			b = append(b, v[i])
			continue
		}
		require.Less(t, i+1, len(v), "a lone backslash ends %q", v)
		if v[i+1] == '\\' {
			b = append(b, '\\')
			i++
			continue
		}
		require.Equal(t, byte('x'), v[i+1], "an unknown escape in %q", v)
		require.LessOrEqual(t, i+4, len(v), "a short \\x escape in %q", v)
		n, err := strconv.ParseUint(v[i+2:i+4], 16, 8)
		require.NoError(t, err)
		b = append(b, byte(n))
		i += 3
	}
	return string(b)
}

// Every label value is valid UTF-8, and tells its key: no two keys share
// one. A key left as it is has no \x in it; every escaped one has.
func FuzzLabelValue(f *testing.F) {
	for _, s := range []string{"", "a", "\xff", `\xff`, `\`, `\\`, "\\\xff", "é", "\xed\xa0\x80", `a\x`, "\xe2\x82"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		v := labelValue(key)
		require.True(t, utf8.ValidString(v), "%q gave %q", key, v)
		if v == key {
			require.NotContains(t, v, `\x`)
			return
		}
		require.Contains(t, v, `\x`, "%q gave %q", key, v)
		require.Equal(t, key, unescapeLabel(t, v), "%q gave %q", key, v)
	})
}

// Keys that are not valid UTF-8 get distinct label values, and the scrape
// of the others succeeds.
func TestCollectorScrapesKeysThatAreNotUTF8(t *testing.T) {
	mc := clock.NewManual(t0)
	reg := metricsstream.NewRegistry(mc)
	for _, key := range []string{"ok", "bad-\xff", "bad-\xfe"} {
		record(reg.Command(key, metricsstream.Config{}), 0, metricsstream.Success)
		reg.Pool(key, metricsstream.Config{})
		reg.Collapser(key, metricsstream.Config{}).MarkBatch(1)
	}
	reg.Command("grouped", metricsstream.Config{}).SetStatusProvider(commandStatus{Group: "group-\xff"})
	mc.Advance(10 * time.Second)
	pr := prometheus.NewPedanticRegistry()
	pr.MustRegister(NewCollector(reg))
	srv := httptest.NewServer(promhttp.HandlerFor(pr, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)

	body := scrape(t, srv.URL) // HTTP 200
	assert.Contains(t, body, `rxhystrix_command_events_total{command="ok",event="SUCCESS",group="ok"} 1`)
	assert.Contains(t, body, `rxhystrix_command_events_total{command="bad-\\xff",event="SUCCESS",group="bad-\\xff"} 1`)
	assert.Contains(t, body, `rxhystrix_command_events_total{command="bad-\\xfe",event="SUCCESS",group="bad-\\xfe"} 1`)
	assert.Contains(t, body, `rxhystrix_command_circuit_open{command="grouped",group="group-\\xff"} 0`)

	mfs, err := pr.Gather()
	require.NoError(t, err)
	values := func(metric, label string) []string {
		var vs []string
		for _, mf := range mfs {
			if mf.GetName() == metric {
				for _, m := range mf.GetMetric() {
					vs = append(vs, labels(m.GetLabel())[label])
				}
			}
		}
		return vs
	}
	assert.Equal(t, []string{`bad-\xfe`, `bad-\xff`, "grouped", "ok"}, values("rxhystrix_command_health_requests", "command"))
	assert.Equal(t, []string{`bad-\xfe`, `bad-\xff`, "ok"}, values("rxhystrix_pool_active_commands", "pool"))
	assert.Contains(t, body, `rxhystrix_collapser_events_total{collapser="bad-\\xfe",event="BATCH_EXECUTED"} 1`)
	assert.Contains(t, body, `rxhystrix_collapser_events_total{collapser="bad-\\xff",event="BATCH_EXECUTED"} 1`)
}
