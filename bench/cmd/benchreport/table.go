package main

import (
	"path"
	"slices"
	"strings"
)

// Table is the rows that share a benchmark name but for its last element:
// BenchmarkCircuits/passing/c=1/gobreaker is row gobreaker of table
// Circuits/passing/c=1.
type Table struct {
	Pkg   string
	Title string
	Rows  []Row
}

// Row is one benchmark of a table.
type Row struct {
	Label string
	Kind  Kind
	B     *Benchmark
}

// Kind says what a row stands for when ratios are taken.
type Kind int

const (
	Peer  Kind = iota // another implementation
	Floor             // the floor, such as a direct call: no ratio baseline
	Ours              // rxhystrix
	Base              // what every row wraps, such as a bare HTTP request: what a row adds is its ratio to it
)

// Classifier decides the Kind of a row from its label.
type Classifier struct {
	Floors     []string // labels of floor rows
	Bases      []string // labels of base rows
	OursPrefix string   // labels of our rows start with this
}

// Kind returns the kind of the row labelled label.
func (c Classifier) Kind(label string) Kind {
	switch {
	case slices.Contains(c.Floors, label):
		return Floor
	case slices.Contains(c.Bases, label):
		return Base
	case c.OursPrefix != "" && strings.HasPrefix(label, c.OursPrefix):
		return Ours
	}
	return Peer
}

// Tables groups benchmarks into tables, in order of first appearance.
func Tables(bs []*Benchmark, c Classifier) []*Table {
	var tables []*Table
	byKey := map[string]*Table{}
	for _, b := range bs {
		name := strings.TrimPrefix(b.Name, "Benchmark")
		title, label := "", name
		if i := strings.LastIndex(name, "/"); i >= 0 {
			title, label = name[:i], name[i+1:]
		}
		key := b.Pkg + "\x00" + title
		t := byKey[key]
		if t == nil {
			t = &Table{Pkg: b.Pkg, Title: title}
			byKey[key] = t
			tables = append(tables, t)
		}
		t.Rows = append(t.Rows, Row{Label: label, Kind: c.Kind(label), B: b})
	}
	return tables
}

// Heading returns "peers: Circuits/passing/c=1", or the package's last
// element alone for a table of top-level benchmarks.
func (t *Table) Heading() string {
	pkg := path.Base(t.Pkg)
	if t.Title == "" {
		return pkg
	}
	return pkg + ": " + t.Title
}

// Units returns every unit reported in the table: ns/op, B/op and
// allocs/op first, then the others in order of appearance.
func (t *Table) Units() []string {
	units := []string{"ns/op", "B/op", "allocs/op"}
	for _, r := range t.Rows {
		for _, u := range r.B.Units {
			if !slices.Contains(units, u) {
				units = append(units, u)
			}
		}
	}
	return units
}

// RatioUnit is the unit ratios are taken on: bytes/key in a memory table,
// ns/op elsewhere.
func (t *Table) RatioUnit() string {
	if slices.Contains(t.Units(), "bytes/key") {
		return "bytes/key"
	}
	return "ns/op"
}

// BestPeer returns the peer row with the lowest positive value of unit.
func (t *Table) BestPeer(unit string) (Row, float64, bool) {
	var best Row
	bestV, found := 0.0, false
	for _, r := range t.Rows {
		if r.Kind != Peer {
			continue
		}
		if v, ok := r.B.Median(unit); ok && v > 0 && (!found || v < bestV) {
			best, bestV, found = r, v, true
		}
	}
	return best, bestV, found
}

// OurReference returns the first of our rows with a positive value of unit.
func (t *Table) OurReference(unit string) (Row, float64, bool) {
	return t.first(Ours, unit)
}

// BaseRow returns the first base row with a positive value of unit.
func (t *Table) BaseRow(unit string) (Row, float64, bool) {
	return t.first(Base, unit)
}

// first returns the first row of kind k with a positive value of unit.
func (t *Table) first(k Kind, unit string) (Row, float64, bool) {
	for _, r := range t.Rows {
		if r.Kind != k {
			continue
		}
		if v, ok := r.B.Median(unit); ok && v > 0 {
			return r, v, true
		}
	}
	return Row{}, 0, false
}
