package memory

import (
	"context"
	"testing"

	"github.com/rxhystrix/rxhystrix/command"
)

// rxhystrixFamily makes each key with command.New and default settings
// (pool isolation, 1 s timeout) and one Execute, in a registry of its own
// that release closes: that stops the breakers' health streams and drops
// every key.
func rxhystrixFamily() keyFamily {
	return keyFamily{
		name: "rxhystrix",
		open: func(tb testing.TB, keys int) (func(context.Context, string), func()) {
			run := func(context.Context, struct{}) (struct{}, error) { return struct{}{}, nil }
			r := command.NewRegistry()
			cmds := make([]*command.Command[struct{}, struct{}], 0, keys)
			create := func(ctx context.Context, name string) {
				cmd := command.New(name, run, command.WithRegistry(r))
				if _, err := cmd.Execute(ctx, struct{}{}); err != nil {
					tb.Fatalf("Execute on %q: %v", name, err)
				}
				cmds = append(cmds, cmd)
			}
			return create, func() {
				cmds = nil
				r.Close()
			}
		},
	}
}

// rxhystrix comes first: benchreport divides every row by the first
// rxhystrix row. The drop-in's family is appended here, after it, rather
// than by an init of its own file, which would run before this one.
func init() {
	ourFamilies = append(ourFamilies, rxhystrixFamily(), rxhystrixHystrixgoFamily())
}
