package timerlist

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

var epoch = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// dueRecorder is an owner that records when its entry came due.
type dueRecorder struct {
	name string
	mu   *sync.Mutex
	log  *[]string
}

func (d dueRecorder) Expire(int64) {
	d.mu.Lock()
	*d.log = append(*d.log, d.name)
	d.mu.Unlock()
}

// One List keeps its entries in the order they are due, whatever the
// order they came in, tells each owner exactly when due, and forgets an
// entry stopped; its one clock timer is re-armed for the earliest entry
// left.
func TestListTellsEachEntryWhenDue(t *testing.T) {
	mc := clock.NewManual(epoch)
	l := &List{clock: mc}
	var mu sync.Mutex
	var log []string
	fired := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), log...)
	}
	now := clock.UnixNano(mc)
	entries := map[string]*Entry{}
	for _, w := range []struct {
		name string
		at   time.Duration
	}{{"c", 30 * time.Millisecond}, {"a", 10 * time.Millisecond}, {"b", 20 * time.Millisecond}, {"gone", 15 * time.Millisecond}, {"a2", 10 * time.Millisecond}} {
		entries[w.name] = &Entry{}
		assert.False(t, l.Add(entries[w.name], dueRecorder{w.name, &mu, &log}, now+int64(w.at)))
	}
	entries["gone"].Stop()
	assert.Equal(t, 1, mc.Pending(), "one timer for every entry")

	mc.Advance(10*time.Millisecond - 1)
	assert.Empty(t, fired())
	mc.Advance(1)
	assert.Equal(t, []string{"a", "a2"}, fired(), "in the order they came, when due together")
	mc.Advance(10 * time.Millisecond)
	assert.Equal(t, []string{"a", "a2", "b"}, fired(), "the entry stopped is never told")
	mc.Advance(10 * time.Millisecond)
	assert.Equal(t, []string{"a", "a2", "b", "c"}, fired())
	assert.Zero(t, mc.Pending(), "no entry left: the timer stays unarmed")

	// An entry due earlier than the timer is armed for re-arms it.
	now = clock.UnixNano(mc)
	assert.False(t, l.Add(entries["c"], dueRecorder{"c", &mu, &log}, now+int64(time.Second)))
	assert.False(t, l.Add(entries["b"], dueRecorder{"b", &mu, &log}, now+int64(time.Millisecond)))
	mc.Advance(time.Millisecond)
	assert.Equal(t, []string{"a", "a2", "b", "c", "b"}, fired())
	// An entry due already is for the caller to act on.
	assert.True(t, l.Add(entries["a"], dueRecorder{"a", &mu, &log}, now))
}

// Entries in owners of their own spread over every List of a Set, none
// taking more than about twice its share.
func TestPickForSpreadsEntriesOverTheLists(t *testing.T) {
	set := NewSet(clock.NewManual(epoch))
	counts := make(map[*List]int)
	const n = 16 * shards
	owners := make([]*struct {
		_ [48]byte
		e Entry
	}, n)
	for i := range owners {
		owners[i] = new(struct {
			_ [48]byte
			e Entry
		})
		counts[set.PickFor(&owners[i].e)]++
	}
	assert.Len(t, counts, shards, "every List takes entries")
	for _, c := range counts {
		assert.LessOrEqual(t, c, 2*n/shards)
	}
	assert.Same(t, set.PickFor(&owners[0].e), set.PickFor(&owners[0].e), "an entry's List is always the same")
}

// A deadline at the Unix epoch (a manual clock that starts there, as
// many tests' do) is a deadline like any other: an entry added after it,
// due later, does not move the timer past it.
func TestListEntryDueAtTheEpochIsToldWhenTheClockNextMoves(t *testing.T) {
	mc := clock.NewManual(time.Unix(0, 0))
	l := &List{clock: mc}
	var mu sync.Mutex
	var log []string
	first, second := &Entry{}, &Entry{}
	assert.True(t, l.Add(first, dueRecorder{"epoch", &mu, &log}, 0), "due already")
	assert.False(t, l.Add(second, dueRecorder{"later", &mu, &log}, int64(10*time.Millisecond)))
	mc.Advance(time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, []string{"epoch"}, log, "told at the clock's next move, not 10ms later")
	second.Stop()
}

// funcClock is a Clock of a user's, as clock.Clock lets one be written: a
// struct value that reads the time through a function, and so is not
// comparable.
type funcClock struct {
	clock.Clock
	now func() time.Time
}

func (c funcClock) Now() time.Time { return c.now() }

// For serves any Clock, HedgeSingle's among them: one whose dynamic type
// cannot be a map key made For panic ("hash of unhashable type") where it
// looked the clock up.
func TestForAnUnhashableClock(t *testing.T) {
	mc := clock.NewManual(epoch)
	c := funcClock{Clock: mc, now: mc.Now}
	type wrapped struct{ clock.Clock } // comparable, but holds c
	require.NotPanics(t, func() { For(wrapped{c}) })
	var set *Set
	require.NotPanics(t, func() { set = For(c) })
	var e Entry
	fired := make(chan int64, 1)
	assert.False(t, set.PickFor(&e).Add(&e, expireFunc(func(due int64) { fired <- due }), clock.UnixNano(mc)+int64(time.Second)))
	mc.Advance(time.Second)
	select {
	case <-fired:
	default:
		t.Fatal("the entry did not come due")
	}
}

type expireFunc func(int64)

func (f expireFunc) Expire(due int64) { f(due) }
