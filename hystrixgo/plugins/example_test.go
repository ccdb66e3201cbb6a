package plugins_test

import (
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	hystrix "github.com/rxhystrix/rxhystrix/hystrixgo"
	metricCollector "github.com/rxhystrix/rxhystrix/hystrixgo/metric_collector"
	"github.com/rxhystrix/rxhystrix/hystrixgo/plugins"
)

// A program sends its circuits' metrics to statsd as hystrix-go's README
// shows; here a UDP socket stands in for the statsd server.
func ExampleInitializeStatsdCollector() {
	server, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer server.Close()

	c, err := plugins.InitializeStatsdCollector(&plugins.StatsdCollectorConfig{
		StatsdAddr: server.LocalAddr().String(),
		Prefix:     "myapp.hystrix",
	})
	if err != nil {
		fmt.Println("could not initialize statsd client:", err)
		return
	}
	metricCollector.Registry.Register(c.NewStatsdCollector)
	defer hystrix.Flush()

	_ = hystrix.Do("get_user", func() error { return nil }, nil)
	c.Close() // send what is buffered now

	buf := make([]byte, 64<<10)
	server.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, _, err := server.ReadFrom(buf)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, line := range strings.Split(string(buf[:n]), "\n") {
		if strings.HasSuffix(line, "|c") || strings.HasSuffix(line, "|g") {
			fmt.Println(line)
		}
	}
	// Output:
	// myapp.hystrix.get_user.circuitOpen:0|g
	// myapp.hystrix.get_user.attempts:1|c
	// myapp.hystrix.get_user.successes:1|c
}

// A program sends its circuits' metrics to Graphite as hystrix-go's
// README shows; here a TCP listener stands in for carbon.
func ExampleInitializeGraphiteCollector() {
	carbon, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer carbon.Close()

	reporter, err := plugins.InitializeGraphiteCollector(&plugins.GraphiteCollectorConfig{
		GraphiteAddr: carbon.Addr().(*net.TCPAddr),
		Prefix:       "myapp.hystrix",
		TickInterval: 50 * time.Millisecond,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reporter.Close()
	metricCollector.Registry.Register(plugins.NewGraphiteCollector)
	defer hystrix.Flush()

	_ = hystrix.Do("get_orders", func() error { return nil }, nil)

	// Read what arrives, tick after tick, until the call is in it.
	carbon.SetDeadline(time.Now().Add(10 * time.Second))
	for {
		conn, err := carbon.Accept()
		if err != nil {
			fmt.Println(err)
			return
		}
		sent, _ := io.ReadAll(conn)
		conn.Close()
		if !strings.Contains(string(sent), ".get_orders.attempts.") {
			continue
		}
		for _, line := range strings.Split(string(sent), "\n") {
			// name value timestamp; the counters of get_orders only
			if f := strings.Fields(line); len(f) == 3 && strings.Contains(f[0], ".get_orders.") && strings.HasSuffix(f[0], ".count") &&
				!strings.Contains(f[0], "Duration") {
				fmt.Println(f[0], f[1])
			}
		}
		return
	}
	// Unordered output:
	// myapp.hystrix.get_orders.attempts.count 1
	// myapp.hystrix.get_orders.successes.count 1
}

// A client of one's own receives each statistic, tagged with the circuit.
// Registered with metricCollector.Registry, the factory makes the
// collector of each circuit; here one is made and given one result.
func ExampleNewDatadogCollectorWithClient() {
	newCollector := plugins.NewDatadogCollectorWithClient(printingClient{})
	newCollector("get_invoice").Update(metricCollector.MetricResult{Attempts: 1, Successes: 1})
	// Output:
	// gauge hystrix.circuitOpen 0 [hystrixcircuit:get_invoice]
	// count hystrix.attempts 1 [hystrixcircuit:get_invoice]
	// count hystrix.successes 1 [hystrixcircuit:get_invoice]
}

// printingClient prints the gauges and counters it is given.
type printingClient struct{}

func (printingClient) Count(name string, v int64, tags []string, _ float64) error {
	fmt.Println("count", name, v, tags)
	return nil
}

func (printingClient) Gauge(name string, v float64, tags []string, _ float64) error {
	fmt.Println("gauge", name, v, tags)
	return nil
}

func (printingClient) TimeInMilliseconds(string, float64, []string, float64) error { return nil }
