// Command benchreport turns go test -bench output into the markdown of
// BENCHMARKS.md.
//
// It groups benchmarks into tables by their name without its last element
// (BenchmarkCircuits/passing/c=1/gobreaker is row gobreaker of table
// Circuits/passing/c=1), takes the median of each unit over the runs of
// -count, and adds two ratio columns on ns/op (bytes/key in a memory table):
// to the best peer and to the first rxhystrix row. The floor rows (-floor)
// and rxhystrix rows (-ours) are no peers.
//
// Usage:
//
//	benchreport [flags] bench-output-file...
//
// The flag -procs is the GOMAXPROCS the benchmarks ran with (by default
// benchreport's own, so run it where they ran). The flags -go, -cpu,
// -cores and -date describe the machine, and -command
// (repeatable) the commands that made the input; -notes names a markdown file placed after them; -missing
// (repeatable) says what the run lacks; -section "Title=file" (repeatable)
// appends a markdown file as a section; -o names the output file.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"
)

// repeated is a flag that may be given more than once.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, ", ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "benchreport: %v\n", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("benchreport", flag.ContinueOnError)
	var (
		r        Report
		notes    = fs.String("notes", "", "markdown `file` placed after the machine table")
		out      = fs.String("o", "", "output `file` (default stdout)")
		floors   = fs.String("floor", "direct", "comma-separated labels of floor rows")
		bases    = fs.String("base", "", "comma-separated labels of base rows, which a table's rows are compared with in a column of their own")
		ours     = fs.String("ours", "rxhystrix", "label prefix of rxhystrix rows")
		procs    = fs.Int("procs", runtime.GOMAXPROCS(0), "the GOMAXPROCS the benchmarks ran with, whose -`N` suffix go test adds to their names (none for 1)")
		missing  repeated
		sections repeated
		commands repeated
	)
	fs.StringVar(&r.GoVersion, "go", runtime.Version(), "Go version")
	fs.StringVar(&r.CPU, "cpu", "", "CPU model (default: the input's cpu: line)")
	fs.IntVar(&r.Cores, "cores", runtime.NumCPU(), "logical CPUs")
	fs.StringVar(&r.Date, "date", time.Now().UTC().Format("2006-01-02 15:04 MST"), "when the benchmarks ran")
	fs.Var(&commands, "command", "a command that produced the input (repeatable, in order)")
	fs.Var(&missing, "missing", "what the run lacks (repeatable)")
	fs.Var(&sections, "section", "`Title=file` of markdown to append (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("no bench output file given")
	}
	r.Missing, r.Commands = missing, commands

	var all []*Benchmark
	for _, name := range fs.Args() {
		in, err := parseFile(name, *procs)
		if err != nil {
			return err
		}
		if r.CPU == "" {
			r.CPU = in.CPU
		}
		all = append(all, in.Benchmarks...)
	}
	if len(all) == 0 {
		return errors.New("no benchmark lines in the input")
	}
	r.Tables = Tables(all, Classifier{Floors: strings.Split(*floors, ","), Bases: strings.Split(*bases, ","), OursPrefix: *ours})

	if *notes != "" {
		b, err := os.ReadFile(*notes)
		if err != nil {
			return err
		}
		r.Notes = string(b)
	}
	for _, s := range sections {
		title, file, ok := strings.Cut(s, "=")
		if !ok {
			return fmt.Errorf("-section %q: want Title=file", s)
		}
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		r.Sections = append(r.Sections, Section{Title: title, Body: string(b)})
	}

	w := os.Stdout
	if *out != "" {
		f, err := os.Create(*out)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	if err := r.Write(w); err != nil {
		return err
	}
	if w != os.Stdout {
		return w.Close()
	}
	return nil
}

func parseFile(name string, procs int) (*Input, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(f, procs)
}
