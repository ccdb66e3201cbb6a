package observable

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// dueRecorder is a race that records when its hedge came due.
type dueRecorder struct {
	name string
	mu   *sync.Mutex
	log  *[]string
}

func (d dueRecorder) hedgeDue(int64) {
	d.mu.Lock()
	*d.log = append(*d.log, d.name)
	d.mu.Unlock()
}

// One hedgeTimers keeps its waits in the order they are due, whatever the
// order they came in, fires each exactly when due, and forgets a wait
// taken out; its one clock timer is re-armed for the earliest wait left.
func TestHedgeTimersFireEachWaitWhenDue(t *testing.T) {
	mc := clock.NewManual(epoch)
	ht := &hedgeTimers{clock: mc}
	var mu sync.Mutex
	var log []string
	fired := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), log...)
	}
	now := clock.UnixNano(mc)
	waits := map[string]*hedgeWait{}
	for _, w := range []struct {
		name string
		at   time.Duration
	}{{"c", 30 * time.Millisecond}, {"a", 10 * time.Millisecond}, {"b", 20 * time.Millisecond}, {"gone", 15 * time.Millisecond}, {"a2", 10 * time.Millisecond}} {
		waits[w.name] = &hedgeWait{race: dueRecorder{w.name, &mu, &log}}
		assert.False(t, ht.add(waits[w.name], now+int64(w.at)))
	}
	ht.remove(waits["gone"])
	assert.Equal(t, 1, mc.Pending(), "one timer for every wait")

	mc.Advance(10*time.Millisecond - 1)
	assert.Empty(t, fired())
	mc.Advance(1)
	assert.Equal(t, []string{"a", "a2"}, fired(), "in the order they came, when due together")
	mc.Advance(10 * time.Millisecond)
	assert.Equal(t, []string{"a", "a2", "b"}, fired(), "the wait taken out never fires")
	mc.Advance(10 * time.Millisecond)
	assert.Equal(t, []string{"a", "a2", "b", "c"}, fired())
	assert.Zero(t, mc.Pending(), "no wait left: the timer stays unarmed")

	// A wait due earlier than the timer is armed for re-arms it.
	now = clock.UnixNano(mc)
	assert.False(t, ht.add(waits["c"], now+int64(time.Second)))
	assert.False(t, ht.add(waits["b"], now+int64(time.Millisecond)))
	mc.Advance(time.Millisecond)
	assert.Equal(t, []string{"a", "a2", "b", "c", "b"}, fired())
	// A wait due already is for the caller to fire.
	assert.True(t, ht.add(waits["a"], now))
}
