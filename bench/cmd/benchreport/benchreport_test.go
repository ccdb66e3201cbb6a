package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sample = `goos: linux
goarch: amd64
pkg: github.com/rxhystrix/rxhystrix/bench/peers
cpu: Test CPU @ 2.00GHz
BenchmarkCircuits/passing/c=1/direct-2         	 1000	  2.0 ns/op	 0 B/op	 0 allocs/op
BenchmarkCircuits/passing/c=1/cep21-minimal-2  	 1000	100.0 ns/op	 0 B/op	 0 allocs/op
BenchmarkCircuits/passing/c=1/gobreaker-2      	 1000	 80.0 ns/op	 0 B/op	 0 allocs/op
BenchmarkCircuits/passing/c=1/rxhystrix-semaphore-2 	 1000	 40.0 ns/op	 0 B/op	 0 allocs/op
BenchmarkCircuits/passing/c=1/direct-2         	 1000	  4.0 ns/op	 0 B/op	 0 allocs/op
BenchmarkCircuits/passing/c=1/direct-2         	 1000	  3.0 ns/op	 0 B/op	 0 allocs/op
BenchmarkCircuits/failing/c=1/gobreaker-2      	 1000	 50.0 ns/op	 0.99 shorted/op	 0 B/op	 0 allocs/op
PASS
ok  	github.com/rxhystrix/rxhystrix/bench/peers	1.0s
pkg: github.com/rxhystrix/rxhystrix/bench/memory
BenchmarkMemoryPerKey/hystrix-go-2 	10000	45000 ns/op	25000 bytes/key	2.000 goroutines/key	23571 B/op	142 allocs/op
BenchmarkMemoryPerKey/cep21-default-2 	10000	1500 ns/op	500 bytes/key	0 goroutines/key	871 B/op	8 allocs/op
BenchmarkSolo 	10	7 ns/op
`

func parseSample(t *testing.T) *Input {
	t.Helper()
	in, err := Parse(strings.NewReader(sample), 2)
	require.NoError(t, err)
	return in
}

func TestParse(t *testing.T) {
	in := parseSample(t)
	assert.Equal(t, "Test CPU @ 2.00GHz", in.CPU)
	require.Len(t, in.Benchmarks, 8)

	direct := in.Benchmarks[0]
	assert.Equal(t, "BenchmarkCircuits/passing/c=1/direct", direct.Name, "the -GOMAXPROCS suffix is cut")
	assert.Equal(t, "github.com/rxhystrix/rxhystrix/bench/peers", direct.Pkg)
	assert.Len(t, direct.Runs, 3, "runs of one name are gathered")
	median, ok := direct.Median("ns/op")
	require.True(t, ok)
	assert.Equal(t, 3.0, median)

	failing := in.Benchmarks[4]
	assert.Equal(t, []string{"ns/op", "shorted/op", "B/op", "allocs/op"}, failing.Units)
	v, ok := failing.Median("shorted/op")
	require.True(t, ok)
	assert.Equal(t, 0.99, v)

	mem := in.Benchmarks[5]
	assert.Equal(t, "github.com/rxhystrix/rxhystrix/bench/memory", mem.Pkg)
	assert.Equal(t, "BenchmarkSolo", in.Benchmarks[7].Name)
}

func TestMedianOfEvenRuns(t *testing.T) {
	b := &Benchmark{Runs: []map[string]float64{{"ns/op": 4}, {"ns/op": 1}, {"ns/op": 3}, {"ns/op": 2}}}
	v, ok := b.Median("ns/op")
	require.True(t, ok)
	assert.Equal(t, 2.5, v)
	_, ok = b.Median("B/op")
	assert.False(t, ok)
}

func TestParseRejectsBrokenMetrics(t *testing.T) {
	_, err := Parse(strings.NewReader("BenchmarkX-2 \t 10 \t 5 ns/op 3\n"), 2)
	assert.Error(t, err)
}

func TestTables(t *testing.T) {
	tables := Tables(parseSample(t).Benchmarks, Classifier{Floors: []string{"direct"}, OursPrefix: "rxhystrix"})
	require.Len(t, tables, 4)
	assert.Equal(t, "peers: Circuits/passing/c=1", tables[0].Heading())
	assert.Equal(t, "peers: Circuits/failing/c=1", tables[1].Heading())
	assert.Equal(t, "memory: MemoryPerKey", tables[2].Heading())
	assert.Equal(t, "memory", tables[3].Heading())

	passing := tables[0]
	var kinds []Kind
	for _, r := range passing.Rows {
		kinds = append(kinds, r.Kind)
	}
	assert.Equal(t, []Kind{Floor, Peer, Peer, Ours}, kinds)

	best, v, ok := passing.BestPeer("ns/op")
	require.True(t, ok)
	assert.Equal(t, "gobreaker", best.Label, "the floor is no peer")
	assert.Equal(t, 80.0, v)
	ours, v, ok := passing.OurReference("ns/op")
	require.True(t, ok)
	assert.Equal(t, "rxhystrix-semaphore", ours.Label)
	assert.Equal(t, 40.0, v)

	assert.Equal(t, "ns/op", passing.RatioUnit())
	assert.Equal(t, "bytes/key", tables[2].RatioUnit())
	assert.Equal(t, []string{"ns/op", "B/op", "allocs/op", "shorted/op"}, tables[1].Units())
}

func TestReportRatios(t *testing.T) {
	r := Report{
		GoVersion: "go version go1.26.8 linux/amd64",
		CPU:       "Test CPU",
		Cores:     2,
		Date:      "2026-11-29",
		Commands:  []string{"bench/run.sh", "go test -bench . ./peers/"},
		Missing:   []string{"reactive: not written yet"},
		Tables:    Tables(parseSample(t).Benchmarks, Classifier{Floors: []string{"direct"}, OursPrefix: "rxhystrix"}),
		Sections:  []Section{{Title: "Isolation", Body: "| a |\n|---|\n| 1 |\n"}},
	}
	md := written(t, r)

	assert.Contains(t, md, "```sh\nbench/run.sh\ngo test -bench . ./peers/\n```")
	assert.Contains(t, md, "- reactive: not written yet")
	assert.Contains(t, md, "## peers\n")
	assert.Contains(t, md, "### Circuits/passing/c=1\n")
	assert.Contains(t, md, "× best peer (gobreaker, ns/op) | × rxhystrix-semaphore (ns/op) |")
	assert.Contains(t, md, "| cep21-minimal | 100 | 0 | 0 | 1.25× | 2.50× |")
	assert.Contains(t, md, "| **rxhystrix-semaphore** | 40 | 0 | 0 | 0.50× | 1.00× |")
	assert.Contains(t, md, "| direct | 3 | 0 | 0 | 0.04× | 0.07× |")
	assert.Contains(t, md, "× best peer (cep21-default, bytes/key)")
	assert.Contains(t, md, "| hystrix-go | 45000 | 23571 | 142 | 25000 | 2 | 50× |")
	assert.Contains(t, md, "## Isolation\n\n| a |")
}

// A table with a base row has a column of each row's ratio to it: what
// the row adds to the call it wraps.
func TestReportBaseColumn(t *testing.T) {
	in, err := Parse(strings.NewReader(`pkg: github.com/rxhystrix/rxhystrix/bench/httpserver
BenchmarkLoopback/bare-2 	1000	40000 ns/op
BenchmarkLoopback/rxhystrix-guard-2 	1000	42000 ns/op
BenchmarkLoopback/failsafe-bulkhead-2 	1000	44000 ns/op
`), 2)
	require.NoError(t, err)
	tables := Tables(in.Benchmarks, Classifier{Bases: []string{"bare"}, OursPrefix: "rxhystrix"})
	require.Len(t, tables, 1)
	assert.Equal(t, Base, tables[0].Rows[0].Kind)
	best, _, ok := tables[0].BestPeer("ns/op")
	require.True(t, ok)
	assert.Equal(t, "failsafe-bulkhead", best.Label, "the base is no peer")

	md := written(t, Report{Tables: tables})
	assert.Contains(t, md, "| × best peer (failsafe-bulkhead, ns/op) | × rxhystrix-guard (ns/op) | × bare (ns/op) |\n|---|---:|---:|---:|---:|---:|---:|\n")
	assert.Contains(t, md, "| bare | 40000 | | | 0.91× | 0.95× | 1.00× |")
	assert.Contains(t, md, "| **rxhystrix-guard** | 42000 | | | 0.95× | 1.00× | 1.05× |")
	assert.Contains(t, md, "| failsafe-bulkhead | 44000 | | | 1.00× | 1.05× | 1.10× |")

	md = written(t, Report{Tables: Tables(parseSample(t).Benchmarks, Classifier{Floors: []string{"direct"}, OursPrefix: "rxhystrix"})})
	assert.NotContains(t, md, "× direct", "no base, no column")
}

// written returns the markdown r writes.
func written(t *testing.T, r Report) string {
	t.Helper()
	var out strings.Builder
	require.NoError(t, r.Write(&out))
	return out.String()
}

func TestNumber(t *testing.T) {
	for v, want := range map[float64]string{
		0: "0", 8: "8", 142: "142", 411.4: "411", 19.79: "19.8", 2.5: "2.50", 0.02640: "0.0264", -9.4: "-9.40",
	} {
		assert.Equal(t, want, number(v), "number(%v)", v)
	}
}

func TestRunWritesFile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "bench.txt")
	section := filepath.Join(dir, "iso.md")
	out := filepath.Join(dir, "BENCHMARKS.md")
	require.NoError(t, os.WriteFile(in, []byte(sample), 0o644))
	require.NoError(t, os.WriteFile(section, []byte("table"), 0o644))
	require.NoError(t, run([]string{"-o", out, "-command", "run.sh", "-section", "Isolation=" + section, in}))
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	assert.Contains(t, string(b), "| CPU | Test CPU @ 2.00GHz |")
	assert.Contains(t, string(b), "## Isolation\n\ntable")

	assert.Error(t, run([]string{filepath.Join(dir, "none.txt")}))
	assert.Error(t, run([]string{"-section", "no-equals", in}))
	assert.Error(t, run(nil))
}

// Under GOMAXPROCS=1 go test adds no -N suffix to a benchmark's name, so
// a row whose own name ends in -N (the fleet's rxhystrix-fleet-of-3 and
// -of-60) must keep it: cutting it merged both rows into one
// "rxhystrix-fleet-of", whose median mixed them.
func TestParseKeepsNameDigitsWithoutProcsSuffix(t *testing.T) {
	out := `pkg: github.com/rxhystrix/rxhystrix/bench/fleet
BenchmarkFleet/exchange/rxhystrix-fleet-of-3 	 100	 1000000 ns/op
BenchmarkFleet/exchange/rxhystrix-fleet-of-60 	 100	 2000000 ns/op
`
	in, err := Parse(strings.NewReader(out), 1)
	require.NoError(t, err)
	var names []string
	for _, b := range in.Benchmarks {
		names = append(names, b.Name)
	}
	assert.Equal(t, []string{"BenchmarkFleet/exchange/rxhystrix-fleet-of-3", "BenchmarkFleet/exchange/rxhystrix-fleet-of-60"}, names)

	// With GOMAXPROCS=2 the suffix is -2, and only it is cut.
	in, err = Parse(strings.NewReader(strings.ReplaceAll(out, " \t 100", "-2 \t 100")), 2)
	require.NoError(t, err)
	names = nil
	for _, b := range in.Benchmarks {
		names = append(names, b.Name)
	}
	assert.Equal(t, []string{"BenchmarkFleet/exchange/rxhystrix-fleet-of-3", "BenchmarkFleet/exchange/rxhystrix-fleet-of-60"}, names)
}
