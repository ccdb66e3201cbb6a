package adaptive

import (
	"fmt"
	"math"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/limit"
)

// Variant is the load on A and B's capacity for it.
type Variant struct {
	Name     string
	Rate     int // calls a second into A, each calling B
	Capacity int // calls of A's that B works on at once
}

// Variants are the seed's service and its fleet, one machine's share.
var Variants = []Variant{
	{Name: "30 requests/s", Rate: 30, Capacity: 12},
	{Name: "6,000 requests/s over 60 machines, one machine", Rate: 100, Capacity: 40},
}

// Timeline is the scenario, in scenario time.
type Timeline struct {
	Before, Slow, After time.Duration // how long B is fast, slow, fast again
	Usual, Slowed       time.Duration // B's latency when fast and when slow
}

// Seed004 is the seed's timeline: 200ms, 500ms for 20 s, 200ms.
var Seed004 = Timeline{Before: 10 * time.Second, Slow: 20 * time.Second, After: 30 * time.Second,
	Usual: 200 * time.Millisecond, Slowed: 500 * time.Millisecond}

// Total is the scenario's length.
func (t Timeline) Total() time.Duration { return t.Before + t.Slow + t.After }

// latencyAt is B's latency at scenario time s.
func (t Timeline) latencyAt(s time.Duration) time.Duration {
	if s >= t.Before && s < t.Before+t.Slow {
		return t.Slowed
	}
	return t.Usual
}

// Row is one configuration of A's command.
type Row struct {
	Name    string
	Pool    command.PoolConfig
	Timeout time.Duration // scenario time; 0 means the default, 1 s
}

// SeedPoolSize is the seed's rule for a rate: rate × 0.2 s + 4.
func SeedPoolSize(rate int) int { return int(math.Ceil(float64(rate)*0.2)) + 4 }

// Rows are the configurations compared for v.
func Rows(v Variant) []Row {
	seed := SeedPoolSize(v.Rate)
	return []Row{
		{Name: fmt.Sprintf("fixed %d, 300ms (the seed's pair)", seed), Pool: command.PoolConfig{CoreSize: seed}, Timeout: 300 * time.Millisecond},
		{Name: fmt.Sprintf("fixed %d, 300ms (too small)", seed/2), Pool: command.PoolConfig{CoreSize: seed / 2}, Timeout: 300 * time.Millisecond},
		{Name: fmt.Sprintf("fixed %d, 1s (too large)", 10*seed), Pool: command.PoolConfig{CoreSize: 10 * seed}},
		{Name: "adaptive Vegas, defaults", Pool: command.PoolConfig{AdaptiveLimit: limit.Vegas{}}},
		{Name: "adaptive Gradient2, defaults", Pool: command.PoolConfig{AdaptiveLimit: limit.Gradient2{}}},
		{Name: "adaptive AIMD, defaults", Pool: command.PoolConfig{AdaptiveLimit: limit.AIMD{}}},
		// The pool untuned, the timeout the seed's: every figure compares
		// with the pair's at the same timeout.
		{Name: "adaptive Vegas, 300ms", Pool: command.PoolConfig{AdaptiveLimit: limit.Vegas{}}, Timeout: 300 * time.Millisecond},
		{Name: "adaptive Gradient2, 300ms", Pool: command.PoolConfig{AdaptiveLimit: limit.Gradient2{}}, Timeout: 300 * time.Millisecond},
		{Name: "adaptive AIMD, 300ms", Pool: command.PoolConfig{AdaptiveLimit: limit.AIMD{}}, Timeout: 300 * time.Millisecond},
	}
}
