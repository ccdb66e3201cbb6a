package main

import (
	"slices"
	"strings"
)

// Units of a budget table (bench/peers BenchmarkBudgets): each row is a
// budget, row÷base, with the median ratio of its paired turns and its
// limit.
const (
	unitRatio  = "×base"
	unitLimit  = "limit×"
	unitBaseNs = "base-ns/op"
)

// IsBudget reports whether t is a budget table: its rows report a limit.
func (t *Table) IsBudget() bool { return slices.Contains(t.Units(), unitLimit) }

// writeBudgetTable writes a budget table: for each budget, the row's and
// the base's ns/op, their ratio, the limit, and whether the ratio is
// within it.
func writeBudgetTable(p *printer, t *Table) {
	if t.Title != "" {
		p.printf("### %s\n\n", t.Title)
	}
	p.printf("| budget | ns/op | base ns/op | × base | limit | met |\n")
	p.printf("|---|---:|---:|---:|---:|---|\n")
	for _, r := range t.Rows {
		row, base, _ := strings.Cut(r.Label, "÷")
		ns, _ := r.B.Median("ns/op")
		baseNs, _ := r.B.Median(unitBaseNs)
		x, okX := r.B.Median(unitRatio)
		limit, okLimit := r.B.Median(unitLimit)
		met := ""
		switch {
		case !okX || !okLimit:
		case x <= limit:
			met = "yes"
		default:
			met = "**no**"
		}
		p.printf("| %s ÷ %s | %s | %s | %s | %s | %s |\n", row, base, number(ns), number(baseNs),
			ratio(x, okX, 1), ratio(limit, okLimit, 1), met)
	}
	p.printf("\n")
}
