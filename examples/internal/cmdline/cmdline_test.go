package cmdline

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestNoArguments(t *testing.T) {
	parse := func(args ...string) *flag.FlagSet {
		fs := flag.NewFlagSet("provinces", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Duration("hang", 0, "")
		require.NoError(t, fs.Parse(args))
		return fs
	}
	assert.NoError(t, NoArguments(parse("-hang", "2s")))
	assert.EqualError(t, NoArguments(parse("-hang", "2s", "1s")), `unexpected arguments ["1s"]`)
	assert.EqualError(t, NoArguments(parse("x", "-hang", "2s")), `unexpected arguments ["x" "-hang" "2s"]`)
}
