package klog

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// designPackages returns the packages DESIGN.md's package table names,
// relative to the module root ("." for the root itself): every
// backquoted name in the first column of the table under "## Packages".
func designPackages(t *testing.T, design string) []string {
	t.Helper()
	_, section, ok := strings.Cut(design, "\n## Packages\n")
	if !ok {
		t.Fatal(`DESIGN.md has no "## Packages" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	name := regexp.MustCompile("`([^`]+)`")
	var out []string
	for line := range strings.Lines(section) {
		cells := strings.Split(line, "|")
		if !strings.HasPrefix(line, "| `") || len(cells) < 3 {
			continue
		}
		for _, m := range name.FindAllStringSubmatch(cells[1], -1) {
			out = append(out, m[1])
		}
	}
	if len(out) == 0 {
		t.Fatal("DESIGN.md's package table names no package")
	}
	return out
}

// modulePackages returns the module's packages outside scripts/ (tools,
// not klog), relative to the module root.
func modulePackages(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, p := range listPackages(t) {
		rel, ok := strings.CutPrefix(p.ImportPath, module)
		if !ok {
			continue
		}
		rel = strings.TrimPrefix(rel, "/")
		if rel == "" {
			rel = "."
		}
		if rel == "scripts" || strings.HasPrefix(rel, "scripts/") {
			continue
		}
		out = append(out, rel)
	}
	return out
}

// TestDesignPackageTable: DESIGN.md's package table is the map of the
// code, so every package has a row and every row names a package.
func TestDesignPackageTable(t *testing.T) {
	raw, err := os.ReadFile("DESIGN.md")
	if err != nil {
		t.Fatal(err)
	}
	inTable := designPackages(t, string(raw))
	pkgs := modulePackages(t)
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, p := range pkgs {
		if !slices.Contains(inTable, p) {
			t.Errorf("package %s has no row in DESIGN.md's package table: add one saying what it owns", p)
		}
	}
	for _, p := range inTable {
		if !slices.Contains(pkgs, p) {
			t.Errorf("DESIGN.md's package table names %s, which go list does not report: remove or rename its row", p)
		}
	}
}
