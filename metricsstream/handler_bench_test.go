package metricsstream

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkHandlerFrame measures one frame of the dashboard stream: the
// snapshot and the JSON of 20 commands with latencies and 5 pools, written
// into a stream's reused buffer. Each client of the stream pays it every
// interval (500ms).
func BenchmarkHandlerFrame(b *testing.B) {
	reg, mc := newStreamRegistry()
	for i := range 20 {
		m := reg.Command("Command"+strconv.Itoa(i), Config{})
		m.SetStatusProvider(commandStatus{Group: "Group", Pool: "Pool" + strconv.Itoa(i%5)})
		for j := range 50 {
			recordEvents(m, time.Duration(j+1)*time.Millisecond, time.Duration(j+2)*time.Millisecond, Success)
		}
	}
	for i := range 5 {
		p := reg.Pool("Pool"+strconv.Itoa(i), Config{})
		p.SetStatusProvider(poolStatus{CoreSize: 10})
		p.MarkStart()
		p.MarkDone()
	}
	mc.Advance(10 * time.Second)
	h := Handler(WithRegistry(reg)).(*handler)
	var f frame
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		b.SetBytes(int64(len(f.build(h))))
	}
}
