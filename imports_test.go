package klog

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/klogdev/klog"

// goPackage is what the import rules read of `go list -json`.
type goPackage struct {
	ImportPath   string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Deps         []string
}

// importRule forbids packages under From to import packages under To.
// Direct rules look at the package's own imports, its tests' included;
// transitive ones at everything the package (not its tests) depends on.
type importRule struct {
	From       []string // package path prefixes, relative to the module
	To         []string // import path prefixes
	Transitive bool
	Why        string
	// Except are package path prefixes, relative to the module, the
	// rule does not apply to although From matches them.
	Except []string
}

var importRules = []importRule{
	{From: []string{"store"}, To: []string{module + "/broker"},
		Why: "storage knows nothing of the node"},
	{From: []string{"store", "broker/partition", "broker/controller", "broker/metadata"},
		To:  []string{"github.com/twmb/franz-go/pkg/kerr"},
		Why: "Kafka error codes belong to the request handlers"},
	{From: []string{"tui", "inspect", "seed", "loadgen"}, To: []string{module + "/broker", module + "/store"}, Transitive: true,
		Why: "the TUI, the inspection and load libraries read the cluster as a client does"},
	{From: []string{"supervisor"}, To: []string{module + "/broker", module + "/store"}, Transitive: true,
		Why: "the supervisor runs nodes as processes: it knows their command line, not their code"},
	{From: []string{""}, To: []string{"github.com/hashicorp/raft", "github.com/hashicorp/raft-boltdb", "go.etcd.io/bbolt", "github.com/boltdb/bolt"},
		Why: "the Raft quorum and its bbolt store belong to broker/controller"},
	{From: []string{""}, To: []string{"github.com/prometheus"}, Except: []string{"broker/adminapi"},
		Why: "the metrics library belongs to broker/adminapi; the node exposes plain values"},
}

// ruleExempt lists packages a rule does not apply to although From
// matches them.
var ruleExempt = map[string]bool{
	module + "/broker/controller": true, // the owner of hashicorp/raft
}

// under reports whether path is prefix or inside it.
func under(path, prefix string) bool {
	return path == prefix || strings.HasPrefix(path, prefix+"/")
}

// importViolations lists every import that breaks a rule, as
// "from imports to (why)".
func importViolations(pkgs []goPackage, rules []importRule) []string {
	var out []string
	for _, r := range rules {
		for _, p := range pkgs {
			rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
			if !slices.ContainsFunc(r.From, func(f string) bool { return f == "" || under(rel, f) }) {
				continue
			}
			if r.From[0] == "" && ruleExempt[p.ImportPath] || slices.ContainsFunc(r.Except, func(e string) bool { return under(rel, e) }) {
				continue
			}
			imports := slices.Concat(p.Imports, p.TestImports, p.XTestImports)
			if r.Transitive {
				imports = p.Deps
			}
			for _, imp := range imports {
				for _, to := range r.To {
					if under(imp, to) {
						out = append(out, p.ImportPath+" imports "+imp+" ("+r.Why+")")
					}
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// listPackages runs `go list -json ./...` in the module root.
func listPackages(t *testing.T) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// TestImportDirection: dependencies between klog's packages point the way
// DESIGN.md draws them.
func TestImportDirection(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, v := range importViolations(pkgs, importRules) {
		t.Error(v)
	}
}

// TestImportRulesCatch: each rule reports the import it forbids, and only
// that; so TestImportDirection cannot pass by checking nothing.
func TestImportRulesCatch(t *testing.T) {
	pkgs := []goPackage{
		{ImportPath: module + "/store/log", TestImports: []string{module + "/broker/partition"}},
		{ImportPath: module + "/store/vfs", Imports: []string{"os"}},
		{ImportPath: module + "/broker/metadata", Imports: []string{"github.com/twmb/franz-go/pkg/kerr"}},
		{ImportPath: module + "/broker", Imports: []string{"github.com/twmb/franz-go/pkg/kerr"}},
		{ImportPath: module + "/tui", Imports: []string{module + "/inspect"}, Deps: []string{module + "/inspect", module + "/store/log"}},
		{ImportPath: module + "/inspect", Imports: []string{"github.com/twmb/franz-go/pkg/kadm"}, Deps: []string{"github.com/twmb/franz-go/pkg/kadm"}},
		{ImportPath: module + "/broker/controller", Imports: []string{"github.com/hashicorp/raft"}},
		{ImportPath: module + "/broker", Imports: []string{"go.etcd.io/bbolt"}},
		{ImportPath: module + "/brokerage", Imports: []string{"github.com/hashicorp/raft-boltdb/v2"}},
		{ImportPath: module + "/storehouse", Imports: []string{module + "/broker"}}, // not under store/
		{ImportPath: module + "/broker", Imports: []string{"github.com/prometheus/client_golang/prometheus"}},
		{ImportPath: module + "/broker/adminapi", Imports: []string{"github.com/prometheus/client_golang/prometheus"}},
	}
	got := importViolations(pkgs, importRules)
	want := []string{
		module + "/broker imports github.com/prometheus/client_golang/prometheus (the metrics library belongs to broker/adminapi; the node exposes plain values)",
		module + "/broker imports go.etcd.io/bbolt (the Raft quorum and its bbolt store belong to broker/controller)",
		module + "/brokerage imports github.com/hashicorp/raft-boltdb/v2 (the Raft quorum and its bbolt store belong to broker/controller)",
		module + "/broker/metadata imports github.com/twmb/franz-go/pkg/kerr (Kafka error codes belong to the request handlers)",
		module + "/store/log imports " + module + "/broker/partition (storage knows nothing of the node)",
		module + "/tui imports " + module + "/store/log (the TUI, the inspection and load libraries read the cluster as a client does)",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
