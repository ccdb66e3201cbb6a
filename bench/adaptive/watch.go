package adaptive

import (
	"math"
	"time"

	"github.com/rxhystrix/rxhystrix/command"
)

// watchLimit reads the pool's size every interval between from and to,
// and returns a function that stops and returns the least and greatest.
func watchLimit(reg *command.Registry, key string, from, to time.Time, every time.Duration) func() (lo, hi int) {
	stop := make(chan struct{})
	done := make(chan struct{})
	lo, hi := math.MaxInt, 0
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case now := <-t.C:
				if now.Before(from) || now.After(to) {
					continue
				}
				if pm, ok := reg.Metrics().LookupPool(key); ok {
					if st, ok := pm.Status(); ok {
						lo, hi = min(lo, st.CoreSize), max(hi, st.CoreSize)
					}
				}
			}
		}
	}()
	return func() (int, int) {
		close(stop)
		<-done
		if hi == 0 {
			lo = 0
		}
		return lo, hi
	}
}
