package broker_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/klogdev/klog/broker"
)

var update = flag.Bool("update", false, "rewrite generated sections of README.md")

const (
	compatBegin = "<!-- api-versions:begin -->"
	compatEnd   = "<!-- api-versions:end -->"
)

// compatTable renders the README's API table from the registration table.
func compatTable() string {
	var b strings.Builder
	b.WriteString("| key | API | versions |\n| ---: | --- | --- |\n")
	for _, v := range broker.APIVersions() {
		fmt.Fprintf(&b, "| %d | %s | %d–%d |\n", v.Key, v.Name, v.Min, v.Max)
	}
	return b.String()
}

// TestREADMECompatibility keeps the README's compatibility table equal to
// what the broker serves.
func TestREADMECompatibility(t *testing.T) {
	const path = "../README.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	i := strings.Index(readme, compatBegin)
	j := strings.Index(readme, compatEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the %s ... %s markers", compatBegin, compatEnd)
	}
	want := compatTable()
	got := readme[i+len(compatBegin)+1 : j]
	if got == want {
		return
	}
	if *update {
		readme = readme[:i+len(compatBegin)] + "\n" + want + readme[j:]
		if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("README.md's API table is stale; run go test ./broker -run TestREADMECompatibility -update\n got:\n%s\nwant:\n%s", got, want)
}
