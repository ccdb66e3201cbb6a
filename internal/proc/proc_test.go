package proc

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestIDIsAProcessorNumber(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	seen := make([]int, 64)
	for g := range seen {
		wg.Go(func() {
			for range 100 {
				id := ID()
				if id < 0 || id >= procs {
					seen[g] = -1
					return
				}
				seen[g] = id
				runtime.Gosched()
			}
		})
	}
	wg.Wait()
	for _, id := range seen {
		assert.GreaterOrEqual(t, id, 0)
		assert.Less(t, id, procs)
	}
}

// Two goroutines running at the same time run on different processors, so
// they see different numbers.
func TestGoroutinesRunningAtOnceSeeDifferentIDs(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs two processors")
	}
	var ids [2]atomic.Int64
	var differ atomic.Bool
	var wg sync.WaitGroup
	for g := range ids {
		wg.Go(func() {
			for i := 0; i < 1e8 && !differ.Load(); i++ {
				id := int64(ID())
				ids[g].Store(id + 1)
				if other := ids[1-g].Load(); other != 0 && other != id+1 {
					differ.Store(true)
				}
			}
		})
	}
	wg.Wait()
	assert.True(t, differ.Load())
}

func TestSlotsIsAPowerOfTwoWithinTheLimit(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct{ procs, limit, want int }{
		{1, 8, 1}, {2, 8, 2}, {3, 8, 4}, {5, 8, 8}, {16, 8, 8}, {16, 32, 16}, {6, 1, 1},
	} {
		runtime.GOMAXPROCS(c.procs)
		assert.Equal(t, c.want, Slots(c.limit), "GOMAXPROCS %d, limit %d", c.procs, c.limit)
	}
}

// A limit that is not a power of two is still a limit: the copies are the
// largest power of two within it, never more.
func TestSlotsNeverExceedsALimitThatIsNotAPowerOfTwo(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct{ procs, limit, want int }{
		{8, 6, 4}, {5, 6, 4}, {4, 3, 2}, {16, 12, 8}, {3, 6, 4},
	} {
		runtime.GOMAXPROCS(c.procs)
		assert.Equal(t, c.want, Slots(c.limit), "GOMAXPROCS %d, limit %d", c.procs, c.limit)
	}
}

func BenchmarkID(b *testing.B) {
	b.RunParallel(func(pb *testing.PB) {
		n := 0
		for pb.Next() {
			n += ID()
		}
		runtime.KeepAlive(n)
	})
}
