// Package cmdline parses the command lines of the examples, which take
// flags and nothing else.
package cmdline

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
)

// Parse parses the program's flags, as flag.Parse does, and, as
// flag.Parse does for a bad flag, prints the usage and exits with status
// 2 when arguments follow them (see NoArguments).
func Parse() {
	flag.Parse()
	if err := NoArguments(flag.CommandLine); err != nil {
		fmt.Fprintf(flag.CommandLine.Output(), "%s: %v\n", filepath.Base(os.Args[0]), err)
		flag.Usage()
		os.Exit(2)
	}
}

// NoArguments returns an error naming the arguments that follow fs's
// flags, if any: an example takes none, and one it passed over would look
// taken ("-hang 2s 1s" does not set anything to 1s).
func NoArguments(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	return nil
}
