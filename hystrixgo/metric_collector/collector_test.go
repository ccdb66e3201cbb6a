package metricCollector

import (
	"reflect"
	"testing"
	"time"
)

type recorder struct {
	name    string
	updates []MetricResult
	resets  int
}

func (r *recorder) Update(m MetricResult) { r.updates = append(r.updates, m) }
func (r *recorder) Reset()                { r.resets++ }

func TestRegistry(t *testing.T) {
	reg := &metricCollectorRegistry{}
	if got := reg.InitializeMetricCollectors("a"); len(got) != 0 {
		t.Fatalf("empty registry made %d collectors; want 0", len(got))
	}
	var names []string
	for range 2 {
		reg.Register(func(name string) MetricCollector {
			names = append(names, name)
			return &recorder{name: name}
		})
	}
	got := reg.InitializeMetricCollectors("circuit")
	if len(got) != 2 || !reflect.DeepEqual(names, []string{"circuit", "circuit"}) {
		t.Fatalf("InitializeMetricCollectors made %d collectors, factories saw %q; want 2, each once with the name", len(got), names)
	}
}

func TestDefaultMetricCollector(t *testing.T) {
	c := NewDefaultMetricCollector("x").(*DefaultMetricCollector)
	c.Update(MetricResult{Attempts: 1, Successes: 1, RunDuration: 5 * time.Millisecond, TotalDuration: 6 * time.Millisecond})
	c.Update(MetricResult{Attempts: 1, Errors: 1, Timeouts: 1, FallbackSuccesses: 1})
	c.Update(MetricResult{Attempts: 1, ContextCanceled: 1, FallbackFailures: 1})
	now := time.Now()
	counts := []struct {
		name string
		got  float64
		want float64
	}{
		{"NumRequests", c.NumRequests().Sum(now), 3},
		{"Errors", c.Errors().Sum(now), 1},
		{"Successes", c.Successes().Sum(now), 1},
		{"Failures", c.Failures().Sum(now), 0},
		{"Timeouts", c.Timeouts().Sum(now), 1},
		{"FallbackSuccesses", c.FallbackSuccesses().Sum(now), 1},
		{"FallbackFailures", c.FallbackFailures().Sum(now), 1},
		{"ContextCanceled", c.ContextCanceled().Sum(now), 1},
		{"ContextDeadlineExceeded", c.ContextDeadlineExceeded().Sum(now), 0},
		{"Rejects", c.Rejects().Sum(now), 0},
		{"ShortCircuits", c.ShortCircuits().Sum(now), 0},
	}
	for _, n := range counts {
		if n.got != n.want {
			t.Errorf("%s().Sum = %v; want %v", n.name, n.got, n.want)
		}
	}
	if got := c.RunDuration().Percentile(100); got != 5 {
		t.Errorf("RunDuration().Percentile(100) = %v; want 5", got)
	}
	if got := c.TotalDuration().Percentile(100); got != 6 {
		t.Errorf("TotalDuration().Percentile(100) = %v; want 6", got)
	}
	c.Reset()
	if got := c.NumRequests().Sum(time.Now()); got != 0 {
		t.Errorf("after Reset NumRequests().Sum = %v; want 0", got)
	}
}
