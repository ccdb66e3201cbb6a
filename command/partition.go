package command

import (
	"context"
	"math"
	"sync/atomic"
	"unicode/utf8"

	"github.com/rxhystrix/rxhystrix/internal/saturate"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

// Partition is a share of a key's execution permits guaranteed to the
// executions whose context names it (see [WithPartition] and
// Config.Partitions), as the partitions of Netflix concurrency-limits'
// limiter guarantee a share of its limit to a kind of caller: live
// traffic before batch jobs, say.
type Partition struct {
	// Name is the name WithPartition gives; non-empty, valid UTF-8 and
	// unique within Config.Partitions.
	Name string
	// Share is the fraction of the permits the partition is guaranteed,
	// in (0, 1]: ⌈permits × Share⌉ of them, at least one, however busy
	// the other partitions are. The shares of a Config add up to at most
	// 1.
	Share float64
}

// MaxPartitions is the number of distinct partition names a key can
// have had: Config.Partitions may name no more, and a Configure that
// would take a key past it is an error. An execution keeps its
// partition in one byte, in the padding of its state, so that a
// subscription keeps to its allocator size class (see runContext).
const MaxPartitions = 255

// partitionKey is the context key of WithPartition's name.
type partitionKey struct{}

// WithPartition returns a copy of ctx that names partition as the
// partition of the executions run with it, or with a context derived
// from it. A key whose Config.Partitions has a Partition of that name
// guarantees them its share of the key's permits; a key without one
// admits them as it admits any execution that names no partition, so a
// name may come from outside (a request's header, say) unchecked.
func WithPartition(ctx context.Context, partition string) context.Context {
	return context.WithValue(ctx, partitionKey{}, partition)
}

// PartitionFrom returns the partition that ctx names (see
// [WithPartition]), or "" if it names none.
func PartitionFrom(ctx context.Context) string {
	name, _ := ctx.Value(partitionKey{}).(string)
	return name
}

// partitionOf returns the partition the subscriber's context names, or
// else the caller's: values are looked up in that order (see valuesOf).
func partitionOf(ctx, callerCtx context.Context) string {
	if name := PartitionFrom(ctx); name != "" || ctx == callerCtx {
		return name
	}
	return PartitionFrom(callerCtx)
}

// partition is the count of one partition name's executions of a key.
//
// A key keeps the partitions its Configs have named for as long as it
// lives, in the order they were first named (keyState.partitions), so
// that an execution can find the one it holds by its index whatever
// Configure has done since it was admitted. What a partition is
// guaranteed is its Share in the Config the execution began with: a name
// that Config does not have is guaranteed nothing.
type partition struct {
	name     string
	inFlight atomic.Int64  // executions of the partition holding a permit
	rejected atomic.Uint64 // executions the partition refused: see acquireInPartition
}

// guaranteed returns the number of permits a partition of share is
// guaranteed of permits: ⌈permits × share⌉, at least 1. share is read as
// the decimal it was written as: a product that exceeds a whole number
// by no more than the binary rounding of a decimal fraction (100 × 0.07
// is 7.000000000000001) is that whole number, so that shares that add
// up to 1 (see partitionSharesSlack) guarantee no more than the permits.
func guaranteed(permits int64, share float64) int64 {
	x := float64(permits) * share
	n := math.Floor(x)
	if x-n > x*partitionShareRounding {
		n++
	}
	return max(1, saturate.Int64(n))
}

// partitionShareRounding is the relative error of permits × share that
// guaranteed puts down to rounding: a few times what a decimal share's
// binary form and the product can add up to (2⁻⁵³ each).
const partitionShareRounding = 1e-15

// addPartitions adds the names of ps that the key has not had to its
// partitions; it is called before the Config that names them is stored,
// so that every name of the key's Config has its partition. It fails,
// adding none, if the key would have more than MaxPartitions names.
func (k *keyState) addPartitions(ps []Partition) error {
	for {
		old := k.partitions.Load()
		var list []*partition
		if old != nil {
			list = *old
		}
		next := list[:len(list):len(list)] // appended to, never written over
		for _, p := range ps {
			if indexOfPartition(list, p.Name) < 0 {
				next = append(next, &partition{name: p.Name})
			}
		}
		switch {
		case len(next) == len(list):
			return nil
		case len(next) > MaxPartitions:
			return invalidConfig("command: Config.Partitions: key %q would have had %d partition names, more than MaxPartitions (%d)",
				k.key, len(next), MaxPartitions)
		case k.partitions.CompareAndSwap(old, &next):
			return nil
		}
	}
}

func indexOfPartition(list []*partition, name string) int {
	for i, p := range list {
		if p.name == name {
			return i
		}
	}
	return -1
}

// partitionShare returns the Share of c's partition named name, or 0 if
// c has none of that name.
func (c *Config) partitionShare(name string) float64 {
	for _, p := range c.Partitions {
		if p.Name == name {
			return p.Share
		}
	}
	return 0
}

// acquireInPartition is acquire for a key with partitions: the execution
// is admitted while fewer than permits executions of the key run, as any
// other; at the limit, it is admitted only if it names a partition that
// holds fewer executions than it is guaranteed (see Config.Partitions).
// The partitions' counts are approximate in the way the permits' are
// (both are counters taken and given back, not a lock): two executions
// of a partition arriving together at the limit may both see room for
// one.
func (e *execution) acquireInPartition(permits int64, name string) bool {
	share := e.cfg.partitionShare(name)
	if share == 0 {
		n, ok := e.k.metrics.TryMarkStartAt(e.start, permits)
		e.concurrency = n
		return ok
	}
	list := *e.k.partitions.Load()
	i := indexOfPartition(list, name) // there: see addPartitions
	p := list[i]
	held := p.inFlight.Add(1)
	n, ok := e.k.metrics.TryMarkStartAt(e.start, permits)
	if !ok {
		if held > guaranteed(permits, share) {
			p.inFlight.Add(-1)
			p.rejected.Add(1)
			return false
		}
		n = e.k.metrics.MarkStartAt(e.start) // beyond the limit, within the guarantee
	}
	e.concurrency, e.partition = n, uint8(i+1)
	return true
}

// releasePartition gives back the partition's count of an execution that
// holds one.
func (e *execution) releasePartition() {
	(*e.k.partitions.Load())[e.partition-1].inFlight.Add(-1)
	e.partition = 0
}

// partitionSharesSlack lets shares that add up to 1 but for the rounding
// of their decimal fractions (0.1 + 0.2 + 0.7) pass.
const partitionSharesSlack = 1e-9

// validatePartitions reports the first partition of c.Partitions that is
// out of range, or partitions that c's isolation cannot have.
func (c *Config) validatePartitions() error {
	if len(c.Partitions) == 0 {
		return nil
	}
	if c.Isolation != SemaphoreIsolation {
		return invalidConfig("command: Config.Partitions: need Isolation SemaphoreIsolation, not %v: a pool's workers are not partitioned", c.Isolation)
	}
	if len(c.Partitions) > MaxPartitions {
		return invalidConfig("command: Config.Partitions: %d partitions, more than MaxPartitions (%d)", len(c.Partitions), MaxPartitions)
	}
	var sum float64
	for i, p := range c.Partitions {
		switch {
		case p.Name == "":
			return invalidConfig("command: Config.Partitions[%d].Name: is empty", i)
		case !utf8.ValidString(p.Name):
			return invalidConfig("command: Config.Partitions[%d].Name: %q is not valid UTF-8", i, p.Name)
		case !(p.Share > 0 && p.Share <= 1):
			return invalidConfig("command: Config.Partitions[%d].Share: %v is not in (0, 1]", i, p.Share)
		}
		for j := range i {
			if c.Partitions[j].Name == p.Name {
				return invalidConfig("command: Config.Partitions[%d].Name: %q is also Partitions[%d]'s", i, p.Name, j)
			}
		}
		sum += p.Share
	}
	if sum > 1+partitionSharesSlack {
		return invalidConfig("command: Config.Partitions: the shares add up to %v, more than 1", sum)
	}
	return nil
}

// partitionStatus reports the partitions of cfg, the key's Config, whose
// permits are permits.
func (k *keyState) partitionStatus(cfg *Config, permits int64) []metricsstream.PartitionStatus {
	list := *k.partitions.Load()
	out := make([]metricsstream.PartitionStatus, 0, len(cfg.Partitions))
	for _, q := range cfg.Partitions {
		p := list[indexOfPartition(list, q.Name)]
		out = append(out, metricsstream.PartitionStatus{
			Name:       q.Name,
			Share:      q.Share,
			Guaranteed: int(guaranteed(permits, q.Share)),
			InFlight:   p.inFlight.Load(),
			Rejected:   p.rejected.Load(),
		})
	}
	return out
}
