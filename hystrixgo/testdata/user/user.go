// Package user is a program written against hystrix-go, which the tests
// type-check against the drop-in with only its imports changed.
package user

import (
	"context"
	"errors"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/afex/hystrix-go/hystrix"
	metricCollector "github.com/afex/hystrix-go/hystrix/metric_collector"
	"github.com/afex/hystrix-go/hystrix/rolling"
	"github.com/afex/hystrix-go/plugins"
)

type collector struct{ n *rolling.Number }

func (c *collector) Update(r metricCollector.MetricResult) {
	c.n.Increment(r.Attempts + r.Errors + r.Successes + r.Failures + r.Rejects + r.ShortCircuits +
		r.Timeouts + r.FallbackSuccesses + r.FallbackFailures + r.ContextCanceled +
		r.ContextDeadlineExceeded + r.ConcurrencyInUse)
	_ = r.TotalDuration + r.RunDuration
}

func (c *collector) Reset() {}

var _ metricCollector.MetricCollector = (*collector)(nil)

func readDefault(d *metricCollector.DefaultMetricCollector, now time.Time) float64 {
	var t *rolling.Timing = d.TotalDuration()
	_ = t.Percentile(99) + t.Mean() + d.RunDuration().Mean()
	_ = t.SortedDurations()
	return d.NumRequests().Sum(now) + d.Errors().Max(now) + d.Successes().Avg(now) +
		d.Failures().Sum(now) + d.Rejects().Sum(now) + d.ShortCircuits().Sum(now) +
		d.Timeouts().Sum(now) + d.FallbackSuccesses().Sum(now) + d.FallbackFailures().Sum(now) +
		d.ContextCanceled().Sum(now) + d.ContextDeadlineExceeded().Sum(now)
}

func Main() error {
	hystrix.DefaultTimeout = 2000
	hystrix.DefaultMaxConcurrent = 20
	hystrix.DefaultVolumeThreshold = 10
	hystrix.DefaultSleepWindow = 1000
	hystrix.DefaultErrorPercentThreshold = 25
	hystrix.SetLogger(log.New(os.Stderr, "", 0))
	hystrix.SetLogger(hystrix.NoopLogger{})
	hystrix.SetLogger(hystrix.DefaultLogger)

	metricCollector.Registry.Register(func(name string) metricCollector.MetricCollector {
		return &collector{n: rolling.NewNumber()}
	})
	_ = metricCollector.Registry.InitializeMetricCollectors("x")
	// Registry is a variable of the registry type: its address has the
	// methods, and can be handed to code that registers.
	var registrar interface {
		Register(func(string) metricCollector.MetricCollector)
	} = &metricCollector.Registry
	_ = registrar

	hystrix.ConfigureCommand("get", hystrix.CommandConfig{
		Timeout:                100,
		MaxConcurrentRequests:  5,
		RequestVolumeThreshold: 3,
		SleepWindow:            500,
		ErrorPercentThreshold:  50,
	})
	hystrix.Configure(map[string]hystrix.CommandConfig{"put": {Timeout: 10}})
	var s map[string]*hystrix.Settings = hystrix.GetCircuitSettings()
	var d time.Duration = s["get"].Timeout + s["get"].SleepWindow
	var v uint64 = s["get"].RequestVolumeThreshold
	_, _, _ = d, v, s["get"].MaxConcurrentRequests+s["get"].ErrorPercentThreshold

	err := hystrix.Do("get", func() error { return nil }, func(err error) error {
		if err == hystrix.ErrTimeout || err == hystrix.ErrCircuitOpen || err == hystrix.ErrMaxConcurrency {
			return nil
		}
		var ce hystrix.CircuitError
		if errors.As(err, &ce) {
			return errors.New(ce.Message)
		}
		return err
	})
	_ = hystrix.Do("get", func() error { return nil }, nil)
	err = hystrix.DoC(context.Background(), "get", func(ctx context.Context) error { return nil }, nil)
	var errs chan error = hystrix.Go("get", func() error { return nil }, nil)
	errs = hystrix.GoC(context.Background(), "get", func(ctx context.Context) error { return nil },
		func(ctx context.Context, err error) error { return err })
	select {
	case err = <-errs:
	default:
	}

	cb, created, err := hystrix.GetCircuit("get")
	if created && cb.IsOpen() && cb.AllowRequest() {
		err = cb.ReportEvent([]string{"success"}, time.Now(), time.Millisecond)
	}
	_ = cb.Name
	_ = hystrix.CircuitError{Message: "x"}.Error()

	sh := hystrix.NewStreamHandler()
	sh.Start()
	var h http.Handler = sh
	_ = h
	sh.Stop()
	hystrix.Flush()
	return err
}

// collectors registers hystrix-go's plugins as its README shows.
func collectors() error {
	c, err := plugins.InitializeStatsdCollector(&plugins.StatsdCollectorConfig{
		StatsdAddr: "localhost:8125",
		Prefix:     "myapp.hystrix",
		SampleRate: 0.5,
		FlushBytes: plugins.LANStatsdFlushBytes + plugins.WANStatsdFlushBytes + plugins.GigabitStatsdFlushBytes,
	})
	if err != nil {
		return err
	}
	metricCollector.Registry.Register(c.NewStatsdCollector)
	var _ *plugins.StatsdCollector

	dd, err := plugins.NewDatadogCollector("localhost:8125", "")
	if err != nil {
		return err
	}
	metricCollector.Registry.Register(dd)
	var client plugins.DatadogClient
	metricCollector.Registry.Register(plugins.NewDatadogCollectorWithClient(client))
	var _ *plugins.DatadogCollector
	_ = []string{plugins.DM_CircuitOpen, plugins.DM_Attempts, plugins.DM_Errors, plugins.DM_Successes,
		plugins.DM_Failures, plugins.DM_Rejects, plugins.DM_ShortCircuits, plugins.DM_Timeouts,
		plugins.DM_FallbackSuccesses, plugins.DM_FallbackFailures, plugins.DM_TotalDuration,
		plugins.DM_RunDuration, plugins.DM_ConcurrencyInUse}

	addr, err := net.ResolveTCPAddr("tcp", "localhost:2003")
	if err != nil {
		return err
	}
	plugins.InitializeGraphiteCollector(&plugins.GraphiteCollectorConfig{
		GraphiteAddr: addr,
		Prefix:       "myapp.hystrix",
		TickInterval: 10 * time.Second,
	})
	metricCollector.Registry.Register(plugins.NewGraphiteCollector)
	var _ *plugins.GraphiteCollector
	return nil
}
