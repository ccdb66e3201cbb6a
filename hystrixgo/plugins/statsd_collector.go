package plugins

import (
	"errors"
	"fmt"
	"time"

	"github.com/cactus/go-statsd-client/v5/statsd"

	metricCollector "github.com/rxhystrix/rxhystrix/hystrixgo/metric_collector"
)

// The FlushBytes hystrix-go suggests: the largest packets that pass a
// WAN, a LAN (the default) and a network with gigabit jumbo frames
// unfragmented.
const (
	WANStatsdFlushBytes     = 512
	LANStatsdFlushBytes     = 1432
	GigabitStatsdFlushBytes = 8932
)

// statsdFlushInterval is how long a statistic waits in the buffer at
// most, as in hystrix-go.
const statsdFlushInterval = time.Second

// StatsdCollectorConfig configures InitializeStatsdCollector.
type StatsdCollectorConfig struct {
	// StatsdAddr is the statsd server's UDP address, host:port.
	StatsdAddr string
	// Prefix starts the name of every statistic, as "myapp.hystrix".
	Prefix string
	// SampleRate is the share of statistics sent, from 0 to 1; 0 means 1,
	// every one.
	SampleRate float32
	// FlushBytes is the most bytes sent in one packet; 0 means
	// LANStatsdFlushBytes.
	FlushBytes int
}

// StatsdCollectorClient is a statsd client shared by the collectors of
// every circuit.
type StatsdCollectorClient struct {
	client     statsd.Statter
	sampleRate float32
}

// InitializeStatsdCollector returns a client that sends to config's
// server. When config cannot work, or the address does not resolve, it
// returns the error together with a client that sends nothing, as
// hystrix-go does, so that a program that only logs the error keeps
// running.
func InitializeStatsdCollector(config *StatsdCollectorConfig) (*StatsdCollectorClient, error) {
	noop := &StatsdCollectorClient{client: (*statsd.Client)(nil), sampleRate: 1}
	if err := config.validate(); err != nil {
		return noop, err
	}
	flushBytes := config.FlushBytes
	if flushBytes == 0 {
		flushBytes = LANStatsdFlushBytes
	}
	sampleRate := config.SampleRate
	if sampleRate == 0 {
		sampleRate = 1
	}
	c, err := statsd.NewBufferedClient(config.StatsdAddr, config.Prefix, statsdFlushInterval, flushBytes)
	if err != nil {
		return noop, fmt.Errorf("plugins: statsd client for %q: %w", config.StatsdAddr, err)
	}
	return &StatsdCollectorClient{client: c, sampleRate: sampleRate}, nil
}

// ErrInvalidConfig is matched, with errors.Is, by the error of a
// StatsdCollectorConfig or a GraphiteCollectorConfig that cannot work.
var ErrInvalidConfig = errors.New("plugins: invalid collector config")

func (c *StatsdCollectorConfig) validate() error {
	switch {
	case c == nil:
		return fmt.Errorf("%w: the config is nil", ErrInvalidConfig)
	case c.StatsdAddr == "":
		return fmt.Errorf("%w: StatsdAddr is empty; want host:port", ErrInvalidConfig)
	case c.FlushBytes < 0:
		return fmt.Errorf("%w: FlushBytes %d is negative", ErrInvalidConfig, c.FlushBytes)
	case !(c.SampleRate >= 0 && c.SampleRate <= 1): // NaN too
		return fmt.Errorf("%w: SampleRate %v is not between 0 and 1", ErrInvalidConfig, c.SampleRate)
	}
	return nil
}

// Close sends the statistics still buffered and stops the client's
// sending goroutine; collectors of the client send nothing after it.
func (s *StatsdCollectorClient) Close() error { return s.client.Close() }

// NewStatsdCollector returns the collector of the circuit name, for
// metricCollector.Registry.Register. It panics if s was not made by
// InitializeStatsdCollector.
func (s *StatsdCollectorClient) NewStatsdCollector(name string) metricCollector.MetricCollector {
	if s.client == nil {
		panic("plugins: NewStatsdCollector on a StatsdCollectorClient not made by InitializeStatsdCollector")
	}
	return &StatsdCollector{client: s.client, sampleRate: s.sampleRate, names: circuitStatNames(name)}
}

// StatsdCollector sends one circuit's results to statsd.
type StatsdCollector struct {
	client     statsd.StatSender
	sampleRate float32
	names      statNames
}

// Update sends the statistics of one finished command. A statistic that
// cannot be sent is logged with the standard logger, as hystrix-go does.
func (g *StatsdCollector) Update(r metricCollector.MetricResult) {
	if v, ok := circuitOpen(r); ok {
		g.send(g.client.Gauge(g.names.circuitOpen, v, g.sampleRate), g.names.circuitOpen)
	}
	for i, n := range resultCounts(r) {
		g.count(g.names.counters[i], n)
	}
	g.send(g.client.TimingDuration(g.names.totalDuration, r.TotalDuration, g.sampleRate), g.names.totalDuration)
	g.send(g.client.TimingDuration(g.names.runDuration, r.RunDuration, g.sampleRate), g.names.runDuration)
	g.send(g.client.Timing(g.names.concurrencyInUse, int64(100*r.ConcurrencyInUse), g.sampleRate), g.names.concurrencyInUse)
}

// count sends a counter that is not 0.
func (g *StatsdCollector) count(name string, n float64) {
	if n != 0 {
		g.send(g.client.Inc(name, int64(n), g.sampleRate), name)
	}
}

func (g *StatsdCollector) send(err error, name string) { logUnsent("statsd", name, err) }

// Reset does nothing: statsd keeps no state of the circuit here.
func (g *StatsdCollector) Reset() {}
