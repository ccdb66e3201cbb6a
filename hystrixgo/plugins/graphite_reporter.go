package plugins

import (
	"bufio"
	"fmt"
	"io"
	"log"
	"net"
	"sync"
	"time"

	metrics "github.com/rcrowley/go-metrics"

	"github.com/rxhystrix/rxhystrix/clock"
)

// GraphiteCollectorConfig configures InitializeGraphiteCollector.
type GraphiteCollectorConfig struct {
	// GraphiteAddr is the TCP address of the Graphite server's plaintext
	// port (carbon's 2003).
	GraphiteAddr *net.TCPAddr
	// Prefix starts the name of every statistic, as "myapp.hystrix"; it
	// may be empty.
	Prefix string
	// TickInterval is how often the statistics are sent. It also bounds
	// the time one sending may take to connect and to write.
	TickInterval time.Duration
}

// GraphiteReporter sends the metrics of go-metrics' default registry,
// where every GraphiteCollector adds its circuit's, to a Graphite server.
//
// The lines are those of go-metrics' own Graphite exporter, which
// hystrix-go runs: <prefix>.<name>.count for a counter, .value for a
// gauge, and for a timer .count, .min, .max, .mean, .std-dev,
// .50-percentile to .999-percentile (durations in nanoseconds),
// .one-minute, .five-minute, .fifteen-minute and .mean-rate. The reporter
// writes them itself because that exporter cannot be stopped and logs a
// deprecation warning at each start.
type GraphiteReporter struct {
	config   GraphiteCollectorConfig
	registry metrics.Registry
	stop     chan struct{}
	done     chan struct{}
	stopOnce sync.Once
}

// InitializeGraphiteCollector starts sending, every config.TickInterval
// and over a new connection each time, the metrics of go-metrics' default
// registry to config's server. Register NewGraphiteCollector with
// metricCollector.Registry for the circuits' statistics to be there. A
// sending that fails is logged with the standard logger, and the next
// tick tries again.
//
// When config cannot work it returns the error, which matches
// ErrInvalidConfig, with a reporter that sends nothing; hystrix-go took
// such a config and sent nothing without a word.
func InitializeGraphiteCollector(config *GraphiteCollectorConfig) (*GraphiteReporter, error) {
	return startGraphiteReporter(config, metrics.DefaultRegistry, clock.Real)
}

func startGraphiteReporter(config *GraphiteCollectorConfig, r metrics.Registry, clk clock.Clock) (*GraphiteReporter, error) {
	g := &GraphiteReporter{registry: r, stop: make(chan struct{}), done: make(chan struct{})}
	if err := config.validate(); err != nil {
		close(g.done)
		return g, err
	}
	g.config = *config
	go g.run(clk.NewTicker(config.TickInterval))
	return g, nil
}

func (c *GraphiteCollectorConfig) validate() error {
	switch {
	case c == nil:
		return fmt.Errorf("%w: the config is nil", ErrInvalidConfig)
	case c.GraphiteAddr == nil:
		return fmt.Errorf("%w: GraphiteAddr is nil; want the server's TCP address", ErrInvalidConfig)
	case c.TickInterval <= 0:
		return fmt.Errorf("%w: TickInterval %v is not positive", ErrInvalidConfig, c.TickInterval)
	}
	return nil
}

// Close stops the sending, after waiting for one under way. It sends
// nothing more: the counters are cumulative, so the next process's first
// report carries on from where Graphite's graphs end.
func (g *GraphiteReporter) Close() error {
	g.stopOnce.Do(func() { close(g.stop) })
	<-g.done
	return nil
}

func (g *GraphiteReporter) run(t clock.Ticker) {
	defer close(g.done)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case now := <-t.C():
			if err := g.send(now); err != nil {
				log.Printf("plugins: sending to graphite at %v: %v", g.config.GraphiteAddr, err)
			}
		}
	}
}

// send writes every metric, stamped now, over a new connection, as
// go-metrics does: the plaintext protocol has no session to keep, and a
// connection per sending outlives a restart of the server.
func (g *GraphiteReporter) send(now time.Time) error {
	d := net.Dialer{Timeout: g.config.TickInterval}
	conn, err := d.Dial("tcp", g.config.GraphiteAddr.String())
	if err != nil {
		return err
	}
	// Closing reports nothing worth knowing once the lines are written:
	// the kernel has them, and TCP tells no more.
	defer conn.Close()
	// Sockets keep wall-clock deadlines, whatever clock ticks.
	if err := conn.SetWriteDeadline(time.Now().Add(g.config.TickInterval)); err != nil {
		return err
	}
	w := bufio.NewWriter(conn)
	writeGraphite(w, g.registry, g.config.Prefix, now.Unix())
	return w.Flush()
}

// The percentiles a timer or histogram sends, and their names, as
// go-metrics' exporter has them.
var (
	graphitePercentiles     = []float64{0.5, 0.75, 0.95, 0.99, 0.999}
	graphitePercentileNames = []string{"50", "75", "95", "99", "999"}
)

// graphiteDistribution is what a go-metrics histogram and timer have in
// common: the figures of their samples.
type graphiteDistribution interface {
	Count() int64
	Min() int64
	Max() int64
	Mean() float64
	StdDev() float64
	Percentiles([]float64) []float64
}

// writeGraphite writes r's metrics to w in Graphite's plaintext protocol,
// "<name> <value> <unix seconds>" a line, in go-metrics' names and
// formats. A kind of metric go-metrics' exporter does not send (a health
// check, a bare EWMA) is not sent. w keeps the first write error; the
// caller's Flush reports it.
func writeGraphite(w io.Writer, r metrics.Registry, prefix string, ts int64) {
	r.Each(func(name string, m any) {
		if prefix != "" {
			name = prefix + "." + name
		}
		line := func(stat, format string, v any) {
			fmt.Fprintf(w, "%s.%s "+format+" %d\n", name, stat, v, ts)
		}
		distribution := func(d graphiteDistribution) {
			line("count", "%d", d.Count())
			line("min", "%d", d.Min())
			line("max", "%d", d.Max())
			line("mean", "%.2f", d.Mean())
			line("std-dev", "%.2f", d.StdDev())
			for i, p := range d.Percentiles(graphitePercentiles) {
				line(graphitePercentileNames[i]+"-percentile", "%.2f", p)
			}
		}
		switch m := m.(type) {
		case metrics.Counter:
			line("count", "%d", m.Count())
		case metrics.Gauge:
			line("value", "%d", m.Value())
		case metrics.GaugeFloat64:
			line("value", "%f", m.Value())
		case metrics.Histogram:
			distribution(m.Snapshot())
		case metrics.Meter:
			s := m.Snapshot()
			line("count", "%d", s.Count())
			line("one-minute", "%.2f", s.Rate1())
			line("five-minute", "%.2f", s.Rate5())
			line("fifteen-minute", "%.2f", s.Rate15())
			line("mean", "%.2f", s.RateMean())
		case metrics.Timer:
			t := m.Snapshot()
			distribution(t)
			line("one-minute", "%.2f", t.Rate1())
			line("five-minute", "%.2f", t.Rate5())
			line("fifteen-minute", "%.2f", t.Rate15())
			line("mean-rate", "%.2f", t.RateMean())
		}
	})
}
