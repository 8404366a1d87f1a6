package klog

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"maps"
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

// importGraph is klog's packages by import path.
type importGraph map[string]goPackage

// newImportGraph indexes pkgs by import path.
func newImportGraph(pkgs []goPackage) importGraph {
	g := make(importGraph, len(pkgs))
	for _, p := range pkgs {
		g[p.ImportPath] = p
	}
	return g
}

// withImport returns a copy of g in which from (a klog package, made if g
// has none) also imports to, in its tests when test is set. g is not
// changed.
func (g importGraph) withImport(from, to string, test bool) importGraph {
	n := maps.Clone(g)
	p := n[from]
	p.ImportPath = from
	if test {
		p.TestImports = append(slices.Clone(p.TestImports), to)
	} else {
		p.Imports = append(slices.Clone(p.Imports), to)
	}
	n[from] = p
	return n
}

// deps returns everything path depends on, its tests not included: the
// packages its imports reach through g, and the dependencies `go list`
// gave for each package reached (those of packages outside klog).
func (g importGraph) deps(path string) []string {
	seen := map[string]bool{}
	var out []string
	var visit func(string)
	visit = func(p string) {
		pkg := g[p]
		for _, d := range slices.Concat(pkg.Imports, pkg.Deps) {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
				visit(d)
			}
		}
	}
	visit(path)
	return out
}

// importRule forbids packages matched by From, and not by Except, to
// import packages matched by To or, when Only is set, any package that
// is not in the standard library and not matched by Only.
//
// From and Except are package patterns relative to the module ("store/..."
// is store and every package below it, "broker" the broker package alone,
// "..." every package); To and Only are patterns of import paths. Direct
// rules look at the package's own imports, its tests' included;
// transitive ones at everything the package (not its tests) depends on.
type importRule struct {
	Name       string // for tests to refer to the rule
	From       []string
	Except     []string
	To         []string
	Only       []string
	Transitive bool
	Why        string
}

// k is the import path pattern of klog's package pattern rel.
func k(rel string) string { return module + "/" + rel }

var importRules = []importRule{
	{Name: "storage", From: []string{"store/..."},
		Only: []string{k("store/..."), k("internal/testkit"),
			"github.com/klauspost/compress/...", "github.com/pierrec/lz4/...", "github.com/twmb/franz-go/pkg/kmsg",
			"golang.org/x/sys/...", "github.com/cockroachdb/datadriven"},
		Why: "storage stands alone: it knows nothing of the node, the tools or the cluster"},
	{Name: "kerr", From: []string{"store/...", "broker/partition/...", "broker/controller/...", "broker/metadata/..."},
		To:  []string{"github.com/twmb/franz-go/pkg/kerr"},
		Why: "Kafka error codes belong to the request handlers"},
	{Name: "tools", From: []string{"broker/..."}, To: []string{k("tui/..."), k("inspect/..."), k("cmd/..."), k("supervisor/..."), k("loadgen/..."), k("waits/...")},
		Why: "the node knows nothing of the tools that run, drive or watch it"},
	{Name: "layers", From: []string{"broker/partition/...", "broker/replica/...", "broker/metadata/...", "broker/config/..."},
		To:  []string{k("broker/group/..."), k("broker/txn/..."), k("broker/controller/..."), k("broker/coordinator/..."), k("broker")},
		Why: "partitions, replicas, metadata and configs sit below the coordinators, the controller and the handlers"},
	{Name: "transport", From: []string{"broker/wire/...", "broker/server/..."}, To: []string{k("broker")},
		Why: "the transport carries requests; the handlers are above it"},
	{Name: "clients", From: []string{"tui/...", "inspect/...", "seed/...", "loadgen/...", "waits/...", "kafkaconn/...", "devca/...", "secure/..."}, To: []string{k("broker/..."), k("store/...")}, Transitive: true,
		Why: "the TUI, the inspection and load libraries read the cluster as a client does"},
	{Name: "supervisor", From: []string{"supervisor/..."}, To: []string{k("broker/..."), k("store/...")}, Transitive: true,
		Why: "the supervisor runs nodes as processes: it knows their command line, not their code"},
	{Name: "raft", From: []string{"..."}, Except: []string{"broker/controller"},
		To:  []string{"github.com/hashicorp/raft/...", "github.com/hashicorp/raft-boltdb/...", "go.etcd.io/bbolt/...", "github.com/boltdb/bolt/..."},
		Why: "the Raft quorum and its bbolt store belong to broker/controller"},
	{Name: "metrics", From: []string{"..."}, Except: []string{"broker/adminapi"}, To: []string{"github.com/prometheus/..."},
		Why: "the metrics library belongs to broker/adminapi; the node exposes plain values"},
}

// matches reports whether path matches pattern: "x/..." matches x and
// every path below it, "..." every path, anything else only itself.
func matches(pattern, path string) bool {
	if pattern == "..." {
		return true
	}
	if prefix, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == prefix || strings.HasPrefix(path, prefix+"/")
	}
	return path == pattern
}

// matchesAny reports whether path matches one of patterns.
func matchesAny(patterns []string, path string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return matches(p, path) })
}

// standard reports whether path is a standard library package: its
// first element has no dot.
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// applies reports whether r governs the package at import path path.
func (r importRule) applies(path string) bool {
	if path != module && !strings.HasPrefix(path, module+"/") {
		return false
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
	return matchesAny(r.From, rel) && !matchesAny(r.Except, rel)
}

// forbids reports whether r forbids importing imp.
func (r importRule) forbids(imp string) bool {
	if r.Only != nil {
		return !standard(imp) && !matchesAny(r.Only, imp)
	}
	return matchesAny(r.To, imp)
}

// importViolations lists every import in g that breaks a rule, as
// "from imports to (why)".
func importViolations(g importGraph, rules []importRule) []string {
	var out []string
	for _, r := range rules {
		for path, p := range g {
			if !r.applies(path) {
				continue
			}
			imports := slices.Concat(p.Imports, p.TestImports, p.XTestImports)
			if r.Transitive {
				imports = g.deps(path)
			}
			for _, imp := range imports {
				if r.forbids(imp) {
					out = append(out, path+" imports "+imp+" ("+r.Why+")")
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// listPackages runs `go list -json ./...` in the module root.
func listPackages(t *testing.T) importGraph {
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
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	return newImportGraph(pkgs)
}

// TestImportDirection: dependencies between klog's packages point the way
// DESIGN.md draws them.
func TestImportDirection(t *testing.T) {
	for _, v := range importViolations(listPackages(t), importRules) {
		t.Error(v)
	}
}

// TestImportRulesCatch: each rule reports the import it forbids, and only
// that; so TestImportDirection cannot pass by checking nothing.
func TestImportRulesCatch(t *testing.T) {
	g := newImportGraph([]goPackage{
		{ImportPath: module + "/store/log", TestImports: []string{module + "/broker/partition"}},
		{ImportPath: module + "/store/vfs", Imports: []string{"os"}},
		{ImportPath: module + "/broker/metadata", Imports: []string{"github.com/twmb/franz-go/pkg/kerr"}},
		{ImportPath: module + "/broker", Imports: []string{"github.com/twmb/franz-go/pkg/kerr", "go.etcd.io/bbolt", "github.com/prometheus/client_golang/prometheus"}},
		{ImportPath: module + "/tui", Imports: []string{module + "/inspect"}, Deps: []string{module + "/inspect", module + "/store/log"}},
		{ImportPath: module + "/inspect", Imports: []string{"github.com/twmb/franz-go/pkg/kadm"}, Deps: []string{"github.com/twmb/franz-go/pkg/kadm"}},
		{ImportPath: module + "/broker/controller", Imports: []string{"github.com/hashicorp/raft"}},
		{ImportPath: module + "/brokerage", Imports: []string{"github.com/hashicorp/raft-boltdb/v2"}},
		{ImportPath: module + "/storehouse", Imports: []string{module + "/broker"}}, // not under store/
		{ImportPath: module + "/broker/adminapi", Imports: []string{"github.com/prometheus/client_golang/prometheus"}},
	})
	got := importViolations(g, importRules)
	want := []string{
		module + "/broker imports github.com/prometheus/client_golang/prometheus (the metrics library belongs to broker/adminapi; the node exposes plain values)",
		module + "/broker imports go.etcd.io/bbolt (the Raft quorum and its bbolt store belong to broker/controller)",
		module + "/brokerage imports github.com/hashicorp/raft-boltdb/v2 (the Raft quorum and its bbolt store belong to broker/controller)",
		module + "/broker/metadata imports github.com/twmb/franz-go/pkg/kerr (Kafka error codes belong to the request handlers)",
		module + "/store/log imports " + module + "/broker/partition (storage stands alone: it knows nothing of the node, the tools or the cluster)",
		module + "/tui imports " + module + "/store/log (the TUI, the inspection and load libraries read the cluster as a client does)",
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("violations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// injectedImport is one forbidden import added to klog's real import
// graph, and the violations the rules must then report beyond those of
// the real graph (each "from imports to (why)").
type injectedImport struct {
	from, to string
	test     bool // in from's tests
	want     []string
}

// injectedImports are imports klog's packages must never have.
func injectedImports() []injectedImport {
	v := func(from, to, rule string) string {
		i := slices.IndexFunc(importRules, func(r importRule) bool { return r.Name == rule })
		if i < 0 {
			return "no rule named " + rule
		}
		return k(from) + " imports " + to + " (" + importRules[i].Why + ")"
	}
	return []injectedImport{
		{from: "store/log/record", to: k("tui"), want: []string{v("store/log/record", k("tui"), "storage")}},
		{from: "store/log", to: k("broker/partition"), test: true, want: []string{v("store/log", k("broker/partition"), "storage")}},
		{from: "store/vfs", to: "github.com/twmb/franz-go/pkg/kgo", want: []string{v("store/vfs", "github.com/twmb/franz-go/pkg/kgo", "storage")}},
		{from: "broker/metadata", to: "github.com/twmb/franz-go/pkg/kerr", want: []string{v("broker/metadata", "github.com/twmb/franz-go/pkg/kerr", "kerr")}},
		{from: "broker", to: k("tui"), want: []string{v("broker", k("tui"), "tools")}},
		{from: "broker/group", to: k("inspect"), test: true, want: []string{v("broker/group", k("inspect"), "tools")}},
		{from: "broker/partition", to: k("broker/group"), want: []string{v("broker/partition", k("broker/group"), "layers")}},
		{from: "broker/replica", to: k("broker"), want: []string{v("broker/replica", k("broker"), "layers")}},
		{from: "broker/metadata", to: k("broker/coordinator"), want: []string{v("broker/metadata", k("broker/coordinator"), "layers")}},
		{from: "broker/wire", to: k("broker"), want: []string{v("broker/wire", k("broker"), "transport")}},
		{from: "broker/server", to: k("broker"), want: []string{v("broker/server", k("broker"), "transport")}},
		// inspect's new dependency is the TUI's and secure's too.
		// (store/vfs and broker/errmsg import no klog package, so one
		// import is one dependency.)
		{from: "inspect", to: k("store/vfs"), want: []string{v("inspect", k("store/vfs"), "clients"), v("secure", k("store/vfs"), "clients"), v("tui", k("store/vfs"), "clients")}},
		{from: "supervisor", to: k("broker/errmsg"), want: []string{v("supervisor", k("broker/errmsg"), "supervisor")}},
		{from: "broker", to: "go.etcd.io/bbolt", want: []string{v("broker", "go.etcd.io/bbolt", "raft")}},
		{from: "broker", to: "github.com/prometheus/client_golang/prometheus", want: []string{v("broker", "github.com/prometheus/client_golang/prometheus", "metrics")}},
	}
}

// newViolations returns the violations of g with inj's import added that
// g itself does not have.
func newViolations(g importGraph, rules []importRule, inj injectedImport) []string {
	before := importViolations(g, rules)
	after := importViolations(g.withImport(k(inj.from), inj.to, inj.test), rules)
	return slices.DeleteFunc(after, func(v string) bool { return slices.Contains(before, v) })
}

// TestImportRulesCatchInjected: each forbidden import, added to klog's
// real import graph, is reported by the rule that forbids it.
func TestImportRulesCatchInjected(t *testing.T) {
	g := listPackages(t)
	for _, inj := range injectedImports() {
		want := slices.Sorted(slices.Values(inj.want))
		if got := newViolations(g, importRules, inj); !slices.Equal(got, want) {
			t.Errorf("%s importing %s: reported\n%s\nwant\n%s", inj.from, inj.to, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestEveryImportRuleNeeded: without any one of the rules, an injected
// import goes unreported, so no rule can be dropped unnoticed.
func TestEveryImportRuleNeeded(t *testing.T) {
	g := listPackages(t)
	for i, r := range importRules {
		without := slices.Delete(slices.Clone(importRules), i, i+1)
		missed := slices.ContainsFunc(injectedImports(), func(inj injectedImport) bool {
			return len(newViolations(g, without, inj)) < len(inj.want)
		})
		if !missed {
			t.Errorf("rule %d (%s): no injected import is caught by it alone", i, r.Why)
		}
	}
}
