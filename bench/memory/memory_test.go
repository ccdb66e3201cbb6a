package memory

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// keyFamily is one implementation measured: how to make a key and run one
// call through it, and how to let go of all the keys made.
type keyFamily struct {
	name string
	// open prepares a run that will make keys keys; the returned create
	// makes the key called name
	// and one passing call through it, failing tb on a wrong result, and
	// release drops every key made, as far as the implementation allows.
	open func(tb testing.TB, keys int) (create func(ctx context.Context, name string), release func())
}

// ourFamilies holds the rxhystrix family; rxhystrix_test.go fills it.
var ourFamilies []keyFamily

func families() []keyFamily {
	return append([]keyFamily{hystrixGoFamily(), cep21DefaultFamily(), cep21HystrixFamily()}, ourFamilies...)
}

func BenchmarkMemoryPerKey(b *testing.B) {
	for _, f := range families() {
		b.Run(f.name, func(b *testing.B) {
			names := make([]string, b.N)
			for i := range names {
				names[i] = fmt.Sprintf("memory-%s-%d-%d", f.name, b.N, i)
			}
			create, release := f.open(b, b.N)
			ctx := context.Background()
			before, goroutinesBefore := settle()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				create(ctx, names[i])
			}
			b.StopTimer()
			during, goroutinesDuring := settle()
			release()
			time.Sleep(timeoutsFired)
			after, goroutinesAfter := settle()
			runtime.KeepAlive(names)

			n := float64(b.N)
			b.ReportMetric(float64(int64(during)-int64(before))/n, "bytes/key")
			b.ReportMetric(float64(int64(after)-int64(before))/n, "retained-bytes/key")
			b.ReportMetric(float64(goroutinesDuring-goroutinesBefore)/n, "goroutines/key")
			b.ReportMetric(float64(goroutinesAfter-goroutinesBefore)/n, "leaked-goroutines/key")
		})
	}
}

// timeoutsFired is how long the release of the keys is given for the
// timers their calls armed to fire: every family's default timeout is
// 1 s, and a timer holds what it needs until it fires (rxhystrix's pool
// callers leave theirs armed between calls), so that retained-bytes/key
// is what an implementation never frees, not what it frees a timeout
// later.
const timeoutsFired = 1500 * time.Millisecond

// settle waits until the goroutine count has stopped changing (calls that
// finish asynchronously, such as hystrix-go's metric updates, have ended),
// collects garbage twice, and returns the memory in use (live heap plus
// goroutine stacks) and the goroutine count. It gives up waiting after two
// seconds.
func settle() (inUse uint64, goroutines int) {
	deadline := time.Now().Add(2 * time.Second)
	last, steady := runtime.NumGoroutine(), 0
	for steady < 3 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		n := runtime.NumGoroutine()
		if n == last {
			steady++
		} else {
			last, steady = n, 0
		}
	}
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc + ms.StackInuse, runtime.NumGoroutine()
}
