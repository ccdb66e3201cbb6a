package timerlist

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/rxhystrix/rxhystrix/internal/clock"
)

// modelOwner is an owner in TestSetFollowsTheModel: it records each time
// it is told, and may add its entry again from Expire, as a hedge race
// arms its next delay.
type modelOwner struct {
	m      *setModel
	id     int
	e      Entry
	readd  time.Duration // if not 0, Expire adds the entry again, due readd later
	told   []int64
	pended bool // in the model, the entry is waiting
	due    int64
}

func (o *modelOwner) Expire(due int64) {
	o.pended = false
	o.told = append(o.told, due)
	o.m.order = append(o.m.order, told{o.id, due})
	if o.readd != 0 {
		readd := o.readd
		o.readd = 0
		o.m.add(o, due+int64(readd))
	}
}

type told struct {
	id  int
	due int64
}

type setModel struct {
	t      *rapid.T
	clk    *clock.Manual
	set    *Set
	owners []*modelOwner
	order  []told // every Expire, in the order they came
}

// add puts o's entry in its list, as an owner does, acting on a due time
// reached itself as Add's contract says, and records it in the model.
func (m *setModel) add(o *modelOwner, due int64) {
	o.pended, o.due = true, due
	l := m.set.PickFor(&o.e)
	if l.Add(&o.e, o, due) && o.e.Stop() {
		o.Expire(due)
	}
}

// TestSetFollowsTheModel adds, stops and re-adds entries of many owners
// at random due times, some owners adding again from Expire, while a
// manual clock moves by random steps: each entry waiting must be told
// exactly once, with its due time, once the clock reaches it and not
// before; a stopped entry never, and Stop reports whether it was
// waiting; owners of one List are told in the order they are due; and
// once nothing waits, no clock timer is left armed.
func TestSetFollowsTheModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		mc := clock.NewManual(epoch)
		m := &setModel{t: rt, clk: mc, set: NewSet(mc)}
		n := rapid.IntRange(1, 40).Draw(rt, "owners")
		for i := range n {
			m.owners = append(m.owners, &modelOwner{m: m, id: i})
		}
		rt.Repeat(map[string]func(*rapid.T){
			"add": func(rt *rapid.T) {
				o := rapid.SampledFrom(m.owners).Draw(rt, "owner")
				if o.pended {
					rt.Skip("its entry waits already")
				}
				d := time.Duration(rapid.IntRange(0, 50).Draw(rt, "due in (ms)")) * time.Millisecond
				if rapid.IntRange(0, 3).Draw(rt, "re-adds") == 0 {
					o.readd = time.Duration(rapid.IntRange(1, 20).Draw(rt, "re-added due in (ms)")) * time.Millisecond
				}
				m.add(o, clock.UnixNano(mc)+int64(d))
			},
			"stop": func(rt *rapid.T) {
				o := rapid.SampledFrom(m.owners).Draw(rt, "owner")
				if got := o.e.Stop(); got != o.pended {
					rt.Fatalf("Stop of owner %d: %v, with its entry waiting: %v", o.id, got, o.pended)
				}
				o.pended, o.readd = false, 0
			},
			"advance": func(rt *rapid.T) {
				d := time.Duration(rapid.IntRange(1, 30).Draw(rt, "by (ms)")) * time.Millisecond
				m.advance(d)
			},
		})
		m.advance(time.Hour) // every entry left comes due, re-added ones too
		for _, o := range m.owners {
			if o.pended {
				rt.Fatalf("owner %d waits still, due at %d", o.id, o.due)
			}
		}
		if p := mc.Pending(); p != 0 {
			rt.Fatalf("%d clock timers armed with no entry waiting", p)
		}
	})
}

// advance moves the clock by d, checking each Expire against the model.
func (m *setModel) advance(d time.Duration) {
	m.order = m.order[:0]
	to := clock.UnixNano(m.clk) + int64(d)
	var want []told
	for _, o := range m.owners {
		if o.pended && o.due <= to {
			want = append(want, told{o.id, o.due})
		}
	}
	for _, o := range m.owners {
		o.told = o.told[:0]
	}
	m.clk.Advance(d)
	// Each entry due is told once, with its due time; entries re-added
	// from Expire and due by now as well.
	for _, w := range want {
		o := m.owners[w.id]
		if len(o.told) == 0 || o.told[0] != w.due {
			m.t.Fatalf("owner %d, due at %d (clock at %d): told %v", w.id, w.due, to, o.told)
		}
	}
	for _, o := range m.owners {
		for i, due := range o.told {
			if due > to {
				m.t.Fatalf("owner %d told of %d with the clock at %d", o.id, due, to)
			}
			if i > 0 && due <= o.told[i-1] {
				m.t.Fatalf("owner %d told twice of one due time: %v", o.id, o.told)
			}
		}
		if len(o.told) == 0 && o.pended && o.due <= to {
			m.t.Fatalf("owner %d due at %d never told", o.id, o.due)
		}
	}
	// Within a List, owners are told in the order they are due.
	byList := map[*List][]int64{}
	for _, tl := range m.order {
		l := m.set.PickFor(&m.owners[tl.id].e)
		byList[l] = append(byList[l], tl.due)
	}
	for _, dues := range byList {
		if !slices.IsSorted(dues) {
			m.t.Fatalf("one List told its owners out of order: %v", dues)
		}
	}
	// An owner told and not re-added waits no more.
	for _, o := range m.owners {
		if len(o.told) > 0 && o.pended && o.due <= to {
			m.t.Fatalf("owner %d told, yet waits for %d", o.id, o.due)
		}
	}
}
