package klog

import (
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update", false, "rewrite the Go snippets of README.md and docs/ from the tests they show")

// exampleMarker names, on the line before a ```go block, the package
// directory and the Example or Test function whose body the block shows.
var exampleMarker = regexp.MustCompile(`^<!-- example: (\S+) ((?:Example|Test)\w*) -->$`)

// docPages are the pages whose Go snippets are checked.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, pages...)
}

// funcBody returns the body of function name in the Go files of dir, as
// a page shows it: without its braces, one tab of indentation less.
func funcBody(dir, name string) (string, bool) {
	fset := token.NewFileSet()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			continue
		}
		f, err := parser.ParseFile(fset, file, src, parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Name.Name != name || fn.Body == nil {
				continue
			}
			body := src[fset.Position(fn.Body.Lbrace).Offset+1 : fset.Position(fn.Body.Rbrace).Offset]
			var lines []string
			for line := range strings.Lines(strings.Trim(string(body), "\n")) {
				lines = append(lines, strings.TrimPrefix(line, "\t"))
			}
			return strings.Join(lines, ""), true
		}
	}
	return "", false
}

// TestDocSnippets: every Go snippet of README.md and docs/ is the body of
// an Example or Test function, which go test compiles and runs, named on
// the line before the snippet; the snippet cannot drift from it.
func TestDocSnippets(t *testing.T) {
	for _, page := range docPages(t) {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(raw), "\n")
		changed := false
		for i := 0; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) != "```go" {
				continue
			}
			end := i + 1
			for end < len(lines) && strings.TrimSpace(lines[end]) != "```" {
				end++
			}
			if end == len(lines) {
				t.Fatalf("%s:%d: a ```go block without its end", page, i+1)
			}
			m := []string(nil)
			if i > 0 {
				m = exampleMarker.FindStringSubmatch(lines[i-1])
			}
			if m == nil {
				t.Errorf("%s:%d: a ```go block must follow a line <!-- example: DIR ExampleOrTestName --> naming the function it shows", page, i+1)
				i = end
				continue
			}
			want, ok := funcBody(m[1], m[2])
			if !ok {
				t.Errorf("%s:%d: %s names no function %s in %s", page, i, lines[i-1], m[2], m[1])
				i = end
				continue
			}
			got := strings.Join(lines[i+1:end], "\n") + "\n"
			if strings.TrimSpace(got) == strings.TrimSpace(want) {
				i = end
				continue
			}
			if !*updateDocs {
				t.Errorf("%s:%d: the snippet differs from the body of %s in %s; run go test . -run TestDocSnippets -update\npage:\n%s\n%s:\n%s", page, i+1, m[2], m[1], got, m[2], want)
				i = end
				continue
			}
			repl := strings.Split(strings.TrimSuffix(want, "\n"), "\n")
			lines = append(lines[:i+1], append(repl, lines[end:]...)...)
			i += len(repl) + 1
			changed = true
		}
		if changed {
			if err := os.WriteFile(page, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// mdLink is a Markdown link's target.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinks: every link of README.md, DESIGN.md and docs/ to a file of
// the repository names one that exists.
func TestDocLinks(t *testing.T) {
	for _, page := range append(docPages(t), "DESIGN.md") {
		raw, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(raw), -1) {
			target, _, _ := strings.Cut(m[1], "#")
			if target == "" || strings.Contains(target, "://") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", page, m[1])
			}
		}
	}
}
