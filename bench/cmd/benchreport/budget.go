package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Units of a budget table (bench/peers BenchmarkBudgets): each row is a
// budget, row÷base, with the median ratio of its paired turns and its
// limit.
const (
	unitRatio   = "×base"
	unitRatioQ1 = "×base-q1"
	unitRatioQ3 = "×base-q3"
	unitLimit   = "limit×"
	unitBaseNs  = "base-ns/op"
)

// IsBudget reports whether t is a budget table: its rows report a limit.
func (t *Table) IsBudget() bool { return slices.Contains(t.Units(), unitLimit) }

// writeBudgetTable writes a budget table: for each budget, the row's and
// the base's ns/op, their ratio and, when reported, the quartiles of the
// ratios it is the median of, the limit, and whether the ratio is within
// it.
func writeBudgetTable(p *printer, t *Table) {
	if t.Title != "" {
		p.printf("### %s\n\n", t.Title)
	}
	p.printf("| budget | ns/op | base ns/op | × base (middle half of the pairs) | limit | met |\n")
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
		x1, ok1 := r.B.Median(unitRatioQ1)
		x3, ok3 := r.B.Median(unitRatioQ3)
		spread := ""
		if ok1 && ok3 {
			spread = fmt.Sprintf(" (%s–%s)", ratio(x1, true, 1), ratio(x3, true, 1))
		}
		shown := ratio(x, okX, 1)
		if okX && okLimit && shown == ratio(limit, true, 1) && x != limit {
			// A ratio that rounds to its limit shows the digit that decides.
			shown = strconv.FormatFloat(x, 'f', 3, 64) + "×"
		}
		p.printf("| %s ÷ %s | %s | %s | %s%s | %s | %s |\n", row, base, number(ns), number(baseNs),
			shown, spread, ratio(limit, okLimit, 1), met)
	}
	p.printf("\n")
}
