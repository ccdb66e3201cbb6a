package main

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Benchmark is every run of one benchmark found in the input.
type Benchmark struct {
	Pkg  string // the package path from the last "pkg:" line, "" if none
	Name string // the full name without the -GOMAXPROCS suffix
	// Units lists the units in the order the first run reported them.
	Units []string
	// Runs holds one value per unit for each run (go test -count).
	Runs []map[string]float64
}

// Median returns the median over the runs of unit, and false if no run
// reported it.
func (b *Benchmark) Median(unit string) (float64, bool) {
	var vs []float64
	for _, r := range b.Runs {
		if v, ok := r[unit]; ok {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return 0, false
	}
	sort.Float64s(vs)
	if len(vs)%2 == 1 {
		return vs[len(vs)/2], true
	}
	return (vs[len(vs)/2-1] + vs[len(vs)/2]) / 2, true
}

// Input is what was parsed from go test -bench output.
type Input struct {
	CPU        string       // from the first "cpu:" line
	Benchmarks []*Benchmark // in order of first appearance
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+)\s+(\d+)\s+(.+)$`)

// Parse reads go test -bench output, ignoring lines it does not know.
// procs is the GOMAXPROCS the benchmarks ran with: go test names a
// benchmark NAME-procs, and NAME alone when procs is 1, so only that
// suffix is cut (a row named rxhystrix-fleet-of-3 keeps its -3).
func Parse(r io.Reader, procs int) (*Input, error) {
	suffix := ""
	if procs != 1 {
		suffix = "-" + strconv.Itoa(procs)
	}
	in := &Input{}
	byKey := map[string]*Benchmark{}
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "pkg: "):
			pkg = strings.TrimPrefix(line, "pkg: ")
			continue
		case strings.HasPrefix(line, "cpu: "):
			if in.CPU == "" {
				in.CPU = strings.TrimPrefix(line, "cpu: ")
			}
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		units, values, err := metrics(m[3])
		if err != nil {
			return nil, fmt.Errorf("benchreport: %q: %w", line, err)
		}
		name := strings.TrimSuffix(m[1], suffix)
		key := pkg + "\x00" + name
		b := byKey[key]
		if b == nil {
			b = &Benchmark{Pkg: pkg, Name: name, Units: units}
			byKey[key] = b
			in.Benchmarks = append(in.Benchmarks, b)
		}
		for _, u := range units {
			if !slices.Contains(b.Units, u) {
				b.Units = append(b.Units, u)
			}
		}
		b.Runs = append(b.Runs, values)
	}
	return in, sc.Err()
}

// metrics splits "12.5 ns/op  0 B/op ..." into its units and values.
func metrics(s string) ([]string, map[string]float64, error) {
	f := strings.Fields(s)
	if len(f)%2 != 0 {
		return nil, nil, fmt.Errorf("odd number of fields in %q", s)
	}
	units := make([]string, 0, len(f)/2)
	values := make(map[string]float64, len(f)/2)
	for i := 0; i < len(f); i += 2 {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return nil, nil, err
		}
		units = append(units, f[i+1])
		values[f[i+1]] = v
	}
	return units, values, nil
}
