package hystrix

import (
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"strings"
	"testing"
)

// A program written against hystrix-go compiles against this package
// with only its imports changed.
func TestProgramCompilesWithOnlyTheImportChanged(t *testing.T) {
	src, err := os.ReadFile("testdata/user/user.go")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), `"github.com/afex/hystrix-go/hystrix"`) {
		t.Fatal("the fixture does not import hystrix-go")
	}
	migrated := strings.NewReplacer(
		`"github.com/afex/hystrix-go/hystrix"`, `"github.com/rxhystrix/rxhystrix/hystrixgo"`,
		`"github.com/afex/hystrix-go/hystrix/`, `"github.com/rxhystrix/rxhystrix/hystrixgo/`,
		`"github.com/afex/hystrix-go/plugins"`, `"github.com/rxhystrix/rxhystrix/hystrixgo/plugins"`,
	).Replace(string(src))
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "user.go", migrated, 0)
	if err != nil {
		t.Fatal(err)
	}
	var errs []string
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil), Error: func(err error) { errs = append(errs, err.Error()) }}
	_, _ = conf.Check("user", fset, []*ast.File{f}, nil)
	if len(errs) > 0 {
		t.Fatalf("does not compile against the drop-in:\n%s", strings.Join(errs, "\n"))
	}
}
