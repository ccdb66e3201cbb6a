package peers

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// tailCallers is how many callers share the processors in the tail
// benchmark: the larger level of cep21's matrix.
const tailCallers = 75

// tailRows are the rows that hand each call to another goroutine, whose
// scheduling the tail benchmark is about, and the semaphore row as the
// floor of a call run by its caller.
var tailRows = []string{"cep21-go", "cep21-go-timeout", "hystrix-go", "rxhystrix-pool", "rxhystrix-semaphore"}

// BenchmarkTail times each call of 75 callers on passing work and reports
// the distribution of the calls' latencies, where BenchmarkCircuits
// reports their throughput: a row whose callers wait their turn in the
// scheduler's queues can be fast on average and still keep some calls
// waiting for hundreds of milliseconds, beyond a timeout. Every call
// reads the clock twice more than in BenchmarkCircuits, every row alike.
func BenchmarkTail(b *testing.B) {
	rows := append(peerRows(), ourRows...)
	for _, name := range tailRows {
		i := slices.IndexFunc(rows, func(r row) bool { return r.name == name })
		if i < 0 {
			b.Fatalf("no row %q", name)
		}
		r := rows[i]
		b.Run(r.name, func(b *testing.B) {
			call := r.prepare(b, tailCallers, passes)
			measureTail(b, call)
		})
	}
}

// measureTail runs b.N calls of call split across tailCallers goroutines
// (see runCallers), timing each, and reports the median, the 99th and
// 99.9th percentiles and the maximum of the latencies, in nanoseconds.
func measureTail(b *testing.B, call func() error) {
	latencies := make([][]time.Duration, tailCallers)
	for i := range latencies {
		latencies[i] = make([]time.Duration, share(b.N, tailCallers, i))
	}
	var (
		wrong error
		once  sync.Once
	)
	runCallers(b, tailCallers, func(i, _ int) {
		mine := latencies[i]
		for j := range mine {
			began := time.Now()
			err := call()
			mine[j] = time.Since(began)
			if err != nil {
				once.Do(func() { wrong = err })
			}
		}
	})
	if wrong != nil {
		b.Fatalf("a call failed: %v", wrong)
	}
	all := slices.Concat(latencies...)
	slices.Sort(all)
	at := func(q float64) float64 { return float64(all[int(q*float64(len(all)-1))]) }
	b.ReportMetric(at(0.5), "p50-ns")
	b.ReportMetric(at(0.99), "p99-ns")
	b.ReportMetric(at(0.999), "p99.9-ns")
	b.ReportMetric(float64(all[len(all)-1]), "max-ns")
}
