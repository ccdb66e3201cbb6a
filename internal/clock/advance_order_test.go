package clock

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// An Advance that finishes firing a slow callback after another Advance
// has moved the clock further must not move it back: time on a Manual
// clock never runs backwards however Advances interleave.
func TestManualAdvanceNeverMovesBack(t *testing.T) {
	m := NewManual(start)
	inCallback, proceed := make(chan struct{}), make(chan struct{})
	m.AfterFunc(5*time.Millisecond, func() {
		close(inCallback)
		<-proceed
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Advance(10 * time.Millisecond) // fires the callback at +5ms, which waits
	}()
	<-inCallback
	m.Advance(100 * time.Millisecond) // from +5ms to +105ms
	assert.Equal(t, start.Add(105*time.Millisecond), m.Now())
	close(proceed)
	<-done
	assert.Equal(t, start.Add(105*time.Millisecond), m.Now(), "the first Advance ended after the second")
}
