package command

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"strings"
	"sync"
	"testing"
)

// The functions that depend on a command's types are checked by the
// compiler: a fallback, cache key, pool key or observable fallback of
// other types does not compile. Each case is a program using this package,
// type-checked from source; the matching program compiles, so the check
// can tell one from the other.
func TestMismatchedFunctionsDoNotCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks the package from source")
	}
	const header = `package user

import (
	"context"

	"github.com/rxhystrix/rxhystrix/command"
	"github.com/rxhystrix/rxhystrix/observable"
)

var _ = observable.Just[int]

func run(ctx context.Context, id int) (string, error) { return "", nil }

func construct(ctx context.Context, id int) observable.Observable[string] { return observable.Just("") }

func batch(ctx context.Context, ids []int) ([]string, error) { return nil, nil }

func use() {
`
	cases := []struct {
		name, code string
		compiles   bool
	}{
		{"matching", `
	c := command.New("k", run).
		WithFallback(func(ctx context.Context, id int, err error) (string, error) { return "", nil }).
		WithFallbackObservable(func(ctx context.Context, id int, err error) observable.Observable[string] { return observable.Just("") }).
		WithCacheKey(func(id int) string { return "" }).
		WithPoolKey(func(id int) string { return "" })
	o := command.NewObservable("o", construct).
		WithFallbackObservable(func(ctx context.Context, id int, err error) observable.Observable[string] { return observable.Just("") })
	b := command.NewCollapser("b", batch).WithCacheKey(func(id int) string { return "" })
	_, _, _ = c, o, b`, true},
		{"fallback", `command.New("k", run).WithFallback(func(ctx context.Context, id string, err error) (string, error) { return "", nil })`, false},
		{"fallback result", `command.New("k", run).WithFallback(func(ctx context.Context, id int, err error) (int, error) { return 0, nil })`, false},
		{"cache key", `command.New("k", run).WithCacheKey(func(id string) string { return id })`, false},
		{"pool key", `command.New("k", run).WithPoolKey(func(id int64) string { return "" })`, false},
		{"observable fallback", `command.NewObservable("o", construct).WithFallbackObservable(func(ctx context.Context, id int, err error) observable.Observable[int] { return observable.Just(0) })`, false},
		{"collapser cache key", `command.NewCollapser("b", batch).WithCacheKey(func(id string) string { return id })`, false},
	}
	fset := token.NewFileSet()
	imp := sourceImporter(fset)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := parser.ParseFile(fset, c.name+".go", header+c.code+"\n}\n", 0)
			if err != nil {
				t.Fatal(err)
			}
			var errs []string
			conf := types.Config{Importer: imp, Error: func(err error) { errs = append(errs, err.Error()) }}
			_, _ = conf.Check("user", fset, []*ast.File{f}, nil)
			if c.compiles {
				if len(errs) > 0 {
					t.Fatalf("does not compile: %s", strings.Join(errs, "; "))
				}
				return
			}
			if len(errs) == 0 {
				t.Fatal("compiles")
			}
			if !strings.Contains(errs[0], "cannot use") {
				t.Errorf("fails for another reason: %s", errs[0])
			}
		})
	}
}

// sourceImporter is one importer shared by the cases: it type-checks each
// package once.
func sourceImporter(fset *token.FileSet) types.Importer {
	sourceOnce.Do(func() { sourceImp = importer.ForCompiler(fset, "source", nil) })
	return sourceImp
}

var (
	sourceOnce sync.Once
	sourceImp  types.Importer
)
