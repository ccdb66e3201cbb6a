package plugins_test

import (
	"fmt"
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
