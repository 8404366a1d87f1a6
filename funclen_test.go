package klog

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// maxFuncLines is the longest a function of product code may be without a
// reason: past it a function usually does several jobs that want names.
const maxFuncLines = 80

// longReason is how a function's doc comment says why it is longer than
// maxFuncLines, on a line of its own: "// Long: one table of cases."
const longReason = "Long:"

// TestFunctionLength: no function of product code (outside scripts/, the
// tests and testdata) is longer than maxFuncLines unless its doc comment
// says why with a line starting longReason.
func TestFunctionLength(t *testing.T) {
	var long []string
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case "scripts", "testdata", "node_modules":
				return filepath.SkipDir
			}
			if strings.HasPrefix(d.Name(), ".") && path != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		long = append(long, longFunctions(t, path)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range long {
		t.Errorf("%s: split it, or say why on a %q line of its doc comment", l, "// "+longReason+" ...")
	}
}

// longFunctions lists the functions of one file over maxFuncLines whose
// doc comment gives no reason, as "file:line name (n lines)".
func longFunctions(t *testing.T, path string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, decl := range f.Decls {
		fd, ok := decl.(*ast.FuncDecl)
		if !ok || fd.Body == nil {
			continue
		}
		start, end := fset.Position(fd.Pos()), fset.Position(fd.End())
		lines := end.Line - start.Line + 1
		if lines <= maxFuncLines || hasLongReason(fd.Doc) {
			continue
		}
		out = append(out, path+":"+strconv.Itoa(start.Line)+" "+fd.Name.Name+" ("+strconv.Itoa(lines)+" lines)")
	}
	return out
}

func hasLongReason(doc *ast.CommentGroup) bool {
	if doc == nil {
		return false
	}
	for _, c := range doc.List {
		if strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(c.Text, "//")), longReason) {
			return true
		}
	}
	return false
}
