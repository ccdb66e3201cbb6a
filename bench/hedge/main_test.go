package hedge

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestRunPrintsEveryWay(t *testing.T) {
	var out strings.Builder
	require.NoError(t, Run(&out, Options{Calls: 300, Rate: 1000, Median: time.Millisecond}))
	t.Log("\n" + out.String())
	for _, name := range []string{"| plain |", "| rxhystrix hedge at p95 |", "| failsafe-go hedge at p95 |"} {
		assert.Contains(t, out.String(), name)
	}
	assert.Error(t, Run(&out, Options{}))
}
