package prometheus

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

const wantBacklog = `
# HELP rxhystrix_command_backlog_size The most executions that may wait for a permit in the command's backlog, for a command that has one (command.Config.Backlog).
# TYPE rxhystrix_command_backlog_size gauge
rxhystrix_command_backlog_size{command="Search",group="Web"} 50
# HELP rxhystrix_command_backlog_waiting Executions waiting for a permit in the command's backlog now.
# TYPE rxhystrix_command_backlog_waiting gauge
rxhystrix_command_backlog_waiting{command="Search",group="Web"} 7
`

// A command with a backlog reports its size and its waiters; a command
// without has neither series.
func TestCollectorReportsBacklogs(t *testing.T) {
	reg := metricsstream.NewRegistry(clock.NewManual(t0))
	reg.Command("Search", metricsstream.Config{}).SetStatusProvider(commandStatus{
		Group:   "Web",
		Backlog: metricsstream.BacklogStatus{Size: 50, Order: "LIFO", Waiting: 7},
	})
	reg.Command("Plain", metricsstream.Config{}).SetStatusProvider(commandStatus{})
	c := NewCollector(reg)
	gather(t, c)
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(wantBacklog),
		"rxhystrix_command_backlog_size", "rxhystrix_command_backlog_waiting"))
}
