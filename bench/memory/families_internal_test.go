package memory

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestFamiliesMakeAndReleaseKeys makes a few keys with every family, so a
// family that cannot make a key is caught without running benchmarks.
func TestFamiliesMakeAndReleaseKeys(t *testing.T) {
	for _, f := range families() {
		t.Run(f.name, func(t *testing.T) {
			create, release := f.open(t, 3)
			for i := range 3 {
				create(context.Background(), fmt.Sprintf("memory-test-%s-%d", f.name, i))
			}
			release()
		})
	}
}

// TestSettleReportsGoroutines checks that settle sees a goroutine that is
// still running and stops counting it once it has ended.
func TestSettleReportsGoroutines(t *testing.T) {
	_, before := settle()
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		<-stop
	}()
	_, during := settle()
	close(stop)
	<-stopped
	_, after := settle()
	assert.Equal(t, before+1, during)
	assert.Equal(t, before, after)
}

// TestReferenceFamilyFirst checks that the first rxhystrix family, which
// benchreport divides every row of the table by, is rxhystrix itself and
// not the hystrix-go drop-in.
func TestReferenceFamilyFirst(t *testing.T) {
	var ours []string
	for _, f := range families() {
		if strings.HasPrefix(f.name, "rxhystrix") {
			ours = append(ours, f.name)
		}
	}
	assert.Equal(t, []string{"rxhystrix", "rxhystrix-hystrixgo"}, ours)
}
