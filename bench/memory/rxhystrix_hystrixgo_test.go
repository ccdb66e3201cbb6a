package memory

import (
	"context"
	"testing"

	hystrix "github.com/rxhystrix/rxhystrix/hystrixgo"
)

// rxhystrixHystrixgoFamily is hystrixGoFamily with only the import
// changed: the drop-in's Do on a new name, then Flush, which resets and
// forgets the circuits but, as hystrix-go's, keeps the names' settings
// (and here their command keys in command.DefaultRegistry).
func rxhystrixHystrixgoFamily() keyFamily {
	return keyFamily{
		name: "rxhystrix-hystrixgo",
		open: func(tb testing.TB, _ int) (func(context.Context, string), func()) {
			run := func() error { return nil }
			create := func(_ context.Context, name string) {
				if err := hystrix.Do(name, run, nil); err != nil {
					tb.Fatalf("hystrix.Do(%q): %v", name, err)
				}
			}
			return create, hystrix.Flush
		},
	}
}
