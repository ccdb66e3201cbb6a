package metricsstream

import (
	"context"
	"math"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// The scenarios of Hystrix's RollingCommandEventCounterStreamTest and
// CumulativeCommandEventCounterStreamTest, with 1s buckets over 10s.

func TestRollingCountsAreTheClosedBucketsOfTheWindow(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	recordN(m, 3, Emit, Success)
	record(m, Failure, FallbackEmit, FallbackSuccess)
	record(m, Timeout, FallbackMissing)
	assert.Equal(t, EventTotals{}, m.RollingCounts(), "the bucket in progress is not counted")

	mc.Advance(time.Second)
	var want EventTotals
	want[Emit], want[Success] = 3, 3
	want[Failure], want[FallbackEmit], want[FallbackSuccess] = 1, 1, 1
	want[Timeout], want[FallbackMissing], want[ExceptionThrown] = 1, 1, 1
	assert.Equal(t, want, m.RollingCounts())
	assert.Equal(t, int64(3), m.RollingCount(Success))
	assert.Equal(t, int64(1), m.RollingCount(ExceptionThrown))
	assert.Equal(t, int64(0), m.RollingCount(EventType(-1)))

	// Still there after 9 more buckets, gone after the 10th.
	mc.Advance(9 * time.Second)
	assert.Equal(t, want, m.RollingCounts())
	mc.Advance(time.Second)
	assert.Equal(t, EventTotals{}, m.RollingCounts())
}

func TestRollingCountsSumBuckets(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	for i := range 12 {
		recordN(m, i+1, Success)
		mc.Advance(time.Second)
	}
	// The window holds the buckets of i = 2..11: 3+4+...+12.
	assert.Equal(t, int64(75), m.RollingCount(Success))
	// Cumulative holds them all: 1+2+...+12.
	assert.Equal(t, int64(78), m.CumulativeCount(Success))
}

func TestRollingCountsCountEmissions(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	var c Completion
	c.Events.Add(Emit, 3)
	c.Events.Add(Failure, 1)
	c.Events.Add(FallbackEmit, 4)
	c.Events.Add(FallbackSuccess, 1)
	c.Events.Add(Collapsed, 7)
	m.MarkCompletion(&c)
	mc.Advance(time.Second)
	assert.Equal(t, int64(3), m.RollingCount(Emit))
	assert.Equal(t, int64(4), m.RollingCount(FallbackEmit))
	assert.Equal(t, int64(7), m.RollingCount(Collapsed))
	assert.Equal(t, int64(1), m.RollingCount(FallbackSuccess))
}

// Emission counts may be anything up to math.MaxInt32 per execution
// (EventCounts.Add stops there rather than wrap). Three such executions
// in one bucket add up to more than 32 bits: the rolling and cumulative
// counts must still be their sum, and no other event may gain counts
// from them. When the bucket's slot is reused, what went beyond 32 bits
// stays in the cumulative counts, once, and leaves the slot.
func TestCountsBeyond32BitsPerBucketAreNotCorrupted(t *testing.T) {
	// One processor, so one stripe: the three land in the same slot.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	m, mc := newTestMetrics(t, Config{})
	for range 3 {
		var c Completion
		c.Events.Add(Emit, math.MaxInt32)
		c.Events.Add(Success, 1)
		c.Events.Add(FallbackEmit, math.MaxInt32)
		c.Events.Add(Collapsed, math.MaxInt32)
		m.MarkCompletion(&c)
	}
	mc.Advance(time.Second)
	want := int64(3 * math.MaxInt32)
	rolling := m.RollingCounts()
	assert.Equal(t, want, rolling[Emit])
	assert.Equal(t, int64(3), rolling[Success], "SUCCESS gains the carry of EMIT")
	assert.Equal(t, want, rolling[FallbackEmit])
	assert.Equal(t, int64(0), rolling[FallbackSuccess], "FALLBACK_SUCCESS gains the carry of FALLBACK_EMIT")
	assert.Equal(t, want, rolling[Collapsed])
	cumulative := m.CumulativeCounts()
	assert.Equal(t, want, cumulative[Emit])
	assert.Equal(t, int64(3), cumulative[Success])

	// The bucket of slots seconds reuses the slot of bucket 0.
	mc.Advance(time.Duration(m.rolling.slots-1) * time.Second)
	record(m, Emit, Success)
	mc.Advance(time.Second)
	assert.Equal(t, int64(1), m.RollingCount(Emit))
	assert.Equal(t, want+1, m.CumulativeCount(Emit))
	assert.Equal(t, int64(4), m.CumulativeCount(Success))
	assert.Equal(t, want, m.CumulativeCount(Collapsed))
}

// EXCEPTION_THROWN is not recorded but summed from the exception-producing
// events, as Hystrix's bucket aggregator does, even if the command marks it.
func TestExceptionThrownIsDerived(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	record(m, BadRequest, ExceptionThrown)
	record(m, Failure, FallbackFailure, ExceptionThrown)
	record(m, Timeout, FallbackMissing, ExceptionThrown)
	record(m, SemaphoreRejected, FallbackRejection, ExceptionThrown)
	record(m, Failure, FallbackSuccess)
	mc.Advance(time.Second)
	assert.Equal(t, int64(4), m.RollingCount(ExceptionThrown))
	assert.Equal(t, int64(4), m.CumulativeCount(ExceptionThrown))
}

func TestCumulativeCountsOutliveTheWindowButNotTheBucketInProgress(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	recordN(m, 2, Success)
	assert.Equal(t, int64(0), m.CumulativeCount(Success))
	mc.Advance(time.Second)
	assert.Equal(t, int64(2), m.CumulativeCount(Success))

	mc.Advance(time.Minute)
	recordN(m, 3, Success)
	record(m, ShortCircuited, FallbackSuccess)
	assert.Equal(t, int64(0), m.RollingCount(Success))
	assert.Equal(t, int64(2), m.CumulativeCount(Success))
	mc.Advance(time.Second)
	assert.Equal(t, int64(3), m.RollingCount(Success))
	assert.Equal(t, int64(5), m.CumulativeCount(Success))
	assert.Equal(t, int64(1), m.CumulativeCount(ShortCircuited))
	assert.Equal(t, int64(0), m.CumulativeCount(NumEventTypes))
	c := m.CumulativeCounts()
	assert.Equal(t, int64(5), c[Success])
	assert.Equal(t, int64(1), c[FallbackSuccess])
}

func TestConcurrentExecutionsAndTheirRollingMax(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	assert.Equal(t, int64(1), m.MarkStart())
	assert.Equal(t, int64(2), m.MarkStart())
	assert.Equal(t, int64(3), m.MarkStart())
	assert.Equal(t, int64(3), m.ConcurrentExecutions())
	assert.Equal(t, int64(0), m.RollingMaxConcurrentExecutions(), "the bucket in progress is not counted")

	done := func(concurrencyAtStart int64) {
		c := Completion{ConcurrencyAtStart: concurrencyAtStart, Executed: true}
		c.Events.Add(Success, 1)
		m.MarkCompletion(&c)
	}
	done(3)
	done(2)
	// Completions that never started do not change the concurrency.
	record(m, ShortCircuited, FallbackSuccess)
	record(m, ResponseFromCache)
	assert.Equal(t, int64(1), m.ConcurrentExecutions())

	mc.Advance(time.Second)
	assert.Equal(t, int64(3), m.RollingMaxConcurrentExecutions())
	assert.Equal(t, int64(2), m.MarkStart())
	mc.Advance(time.Second)
	assert.Equal(t, int64(3), m.RollingMaxConcurrentExecutions())
	mc.Advance(9 * time.Second)
	assert.Equal(t, int64(2), m.RollingMaxConcurrentExecutions(), "the max of 3 aged out")
	mc.Advance(time.Second)
	assert.Equal(t, int64(0), m.RollingMaxConcurrentExecutions())
	assert.Equal(t, int64(2), m.ConcurrentExecutions())
}

func TestMarkStartAtUsesTheGivenTime(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	mc.Advance(5 * time.Second)
	m.MarkStartAt(t0.Add(3 * time.Second).UnixNano()) // bucket 3, closed already
	assert.Equal(t, int64(1), m.RollingMaxConcurrentExecutions())
}

func TestCompletionWithoutEndTimeUsesTheClock(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	mc.Advance(1500 * time.Millisecond)
	record(m, Success)
	mc.Advance(499 * time.Millisecond)
	assert.Equal(t, int64(0), m.RollingCount(Success))
	mc.Advance(time.Millisecond)
	assert.Equal(t, int64(1), m.RollingCount(Success))
}

// MarkCompletionAt counts a completion in the bucket of the time it is
// given, whatever c.End says, and a subscriber sees that time as the
// End of a completion that had none.
func TestMarkCompletionAtPlacesTheCompletionAtItsTime(t *testing.T) {
	m, mc := newTestMetrics(t, Config{})
	seen := make(chan Completion, 2)
	sub := m.Completions().SubscribeFunc(context.Background(), func(c Completion) { seen <- c }, nil, nil)
	defer sub.Unsubscribe()
	mc.Advance(2500 * time.Millisecond)
	end := t0.Add(1500 * time.Millisecond) // bucket 1, closed
	var c Completion
	c.Events.Add(Success, 1)
	m.MarkCompletionAt(&c, end.UnixNano())
	stale := Completion{End: t0.Add(2100 * time.Millisecond)} // bucket 2, in progress
	stale.Events.Add(Failure, 1)
	m.MarkCompletionAt(&stale, end.UnixNano())

	assert.Equal(t, int64(1), m.RollingCount(Success), "counted in bucket 1")
	assert.Equal(t, int64(1), m.RollingCount(Failure), "counted in bucket 1, not at its End")
	first, second := <-seen, <-seen
	assert.True(t, first.End.Equal(end), "End set to the time given: %v", first.End)
	assert.True(t, second.End.Equal(stale.End), "an End given is kept: %v", second.End)
}

// A completion so late that a newer bucket holds the slot of its own
// (its caller was descheduled between reading the clock and recording,
// while other goroutines moved a manual clock on by a whole ring) counts
// in the cumulative counts, once, and in neither rolling nor health
// counts: none read since covers its bucket. It used to be dropped.
func TestVeryLateCompletionCountsOnlyCumulatively(t *testing.T) {
	// One processor, so one stripe: the late completion finds the slot of
	// its bucket taken by the newer one.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	m, mc := newTestMetrics(t, Config{})
	mc.Advance(20 * time.Second)
	record(m, Success) // claims the slot of bucket 20
	var late Completion
	late.Events.Add(Failure, 1)
	m.MarkCompletionAt(&late, t0.Add(4*time.Second).UnixNano()) // bucket 4 shares bucket 20's slot
	mc.Advance(time.Second)
	assert.Equal(t, int64(1), m.RollingCount(Success))
	assert.Equal(t, int64(0), m.RollingCount(Failure))
	assert.Equal(t, HealthCounts{Total: 1}, m.HealthCounts())
	assert.Equal(t, int64(1), m.CumulativeCount(Success))
	assert.Equal(t, int64(1), m.CumulativeCount(Failure))

	mc.Advance(15 * time.Second)
	record(m, Success) // recycles the slot again, folding bucket 20 into the totals
	mc.Advance(time.Second)
	assert.Equal(t, int64(2), m.CumulativeCount(Success))
	assert.Equal(t, int64(1), m.CumulativeCount(Failure))
}

func TestCustomRollingWindow(t *testing.T) {
	m, mc := newTestMetrics(t, Config{RollingWindow: 2 * time.Second, Buckets: 4, HealthSnapshotInterval: 100 * time.Millisecond})
	record(m, Success)
	mc.Advance(500 * time.Millisecond)
	require.Equal(t, int64(1), m.RollingCount(Success))
	assert.Equal(t, int64(1), m.HealthCounts().Total)
	// The bucket [0, 500ms) stays in the window until 2.5s.
	mc.Advance(1500*time.Millisecond - time.Nanosecond)
	assert.Equal(t, int64(1), m.RollingCount(Success))
	mc.Advance(500 * time.Millisecond)
	assert.Equal(t, int64(1), m.RollingCount(Success))
	mc.Advance(time.Nanosecond)
	assert.Equal(t, int64(0), m.RollingCount(Success))
	assert.Equal(t, int64(0), m.HealthCounts().Total)
	assert.Equal(t, int64(1), m.CumulativeCount(Success))
}

// A Completion's End read from package time (time.Now, which carries a
// monotonic reading) is placed on the metrics' clock as clock.UnixNanoOf
// places it. clock.Real keeps its own time line when the system clock is
// stepped (an NTP step), so End.UnixNano() would put the completion an
// hour ahead of every reader: out of the rolling and health windows, and
// its slot claimed for a bucket an hour away, which then turns the
// completions of the current bucket in that slot away as late.
func TestCompletionEndFromTimeNowAfterASystemClockStepCountsNow(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1)) // one stripe
	defer clock.StepSystemClock(time.Hour)()
	m := NewRegistry(clock.Real).Command("cmd", Config{})
	c := Completion{End: time.Now()}
	c.Events.Add(Success, 1)
	m.MarkCompletion(&c)
	record(m, Failure) // End zero: now, on the clock's own time line

	later := clock.Real.Now().Add(2 * time.Second) // both buckets closed, in the window
	got := m.rollingAt(later)
	assert.Equal(t, int64(1), got[Success], "the completion ended now")
	assert.Equal(t, int64(1), got[Failure], "a completion of the same bucket is not turned away")
	assert.Equal(t, HealthCounts{Total: 2, Errors: 1, ErrorPercentage: 50}, m.healthAt(later))
}
