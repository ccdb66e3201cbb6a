package prometheus

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"

	"github.com/rxhystrix/rxhystrix/clock"
	"github.com/rxhystrix/rxhystrix/metricsstream"
)

const wantPartitions = `
# HELP rxhystrix_command_partition_guaranteed The execution permits the partition is guaranteed now, for a command with partitions (command.Config.Partitions).
# TYPE rxhystrix_command_partition_guaranteed gauge
rxhystrix_command_partition_guaranteed{command="Search",group="Web",partition="batch"} 3
rxhystrix_command_partition_guaranteed{command="Search",group="Web",partition="live"} 7
# HELP rxhystrix_command_partition_in_flight The partition's executions holding a permit now.
# TYPE rxhystrix_command_partition_in_flight gauge
rxhystrix_command_partition_in_flight{command="Search",group="Web",partition="batch"} 9
rxhystrix_command_partition_in_flight{command="Search",group="Web",partition="live"} 4
# HELP rxhystrix_command_partition_rejected_total The partition's executions refused at the limit, with the partition holding all it is guaranteed, since the command's key was first used.
# TYPE rxhystrix_command_partition_rejected_total counter
rxhystrix_command_partition_rejected_total{command="Search",group="Web",partition="batch"} 12
rxhystrix_command_partition_rejected_total{command="Search",group="Web",partition="live"} 0
`

// Each partition of a command's permits is a series of its own, labelled
// with the partition's name; a command without partitions has none.
func TestCollectorReportsPartitions(t *testing.T) {
	reg := metricsstream.NewRegistry(clock.NewManual(t0))
	reg.Command("Search", metricsstream.Config{}).SetStatusProvider(commandStatus{
		Group: "Web",
		Partitions: []metricsstream.PartitionStatus{
			{Name: "live", Share: 0.7, Guaranteed: 7, InFlight: 4},
			{Name: "batch", Share: 0.3, Guaranteed: 3, InFlight: 9, Rejected: 12},
		},
	})
	reg.Command("Plain", metricsstream.Config{}).SetStatusProvider(commandStatus{})
	c := NewCollector(reg)
	gather(t, c) // what it sends matches what it describes
	assert.NoError(t, testutil.CollectAndCompare(c, strings.NewReader(wantPartitions),
		"rxhystrix_command_partition_guaranteed", "rxhystrix_command_partition_in_flight", "rxhystrix_command_partition_rejected_total"))
}
