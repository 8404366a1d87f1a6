package broker_test

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/klogdev/klog/broker"
)

var update = flag.Bool("update", false, "rewrite generated sections of docs/compatibility.md")

const (
	compatBegin   = "<!-- api-versions:begin -->"
	compatEnd     = "<!-- api-versions:end -->"
	featuresBegin = "<!-- features:begin -->"
	featuresEnd   = "<!-- features:end -->"
)

// compatTable renders docs/compatibility.md's API table from the registration table.
func compatTable() string {
	var b strings.Builder
	b.WriteString("| key | API | versions |\n| ---: | --- | --- |\n")
	for _, v := range broker.APIVersions() {
		fmt.Fprintf(&b, "| %d | %s | %d–%d |\n", v.Key, v.Name, v.Min, v.Max)
	}
	return b.String()
}

// featuresTable renders docs/compatibility.md's feature flags from the broker's
// feature table.
func featuresTable() string {
	var b strings.Builder
	b.WriteString("| feature | supported | new cluster | what it turns on | changeable |\n| --- | --- | --- | --- | --- |\n")
	for _, f := range broker.Features() {
		lowered := "yes"
		switch {
		case f.Fixed != "":
			lowered = "not lowered: " + f.Fixed
		case f.Min == f.Max:
			lowered = "no: klog supports level " + fmt.Sprint(f.Min) + " only"
		}
		fmt.Fprintf(&b, "| `%s` | %d–%d | %d | %s | %s |\n", f.Name, f.Min, f.Max, f.Default, f.Enables, lowered)
	}
	return b.String()
}

// TestCompatibilityPage keeps docs/compatibility.md's API and feature tables equal
// to what the broker serves.
func TestCompatibilityPage(t *testing.T) {
	const path = "../docs/compatibility.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	stale := false
	for _, section := range []struct{ begin, end, want string }{
		{compatBegin, compatEnd, compatTable()},
		{featuresBegin, featuresEnd, featuresTable()},
	} {
		i := strings.Index(readme, section.begin)
		j := strings.Index(readme, section.end)
		if i < 0 || j < i {
			t.Fatalf("%s lacks the %s ... %s markers", path, section.begin, section.end)
		}
		if got := readme[i+len(section.begin)+1 : j]; got != section.want {
			t.Logf("%s section:\n got:\n%s\nwant:\n%s", section.begin, got, section.want)
			readme = readme[:i+len(section.begin)] + "\n" + section.want + readme[j:]
			stale = true
		}
	}
	switch {
	case !stale:
	case *update:
		if err := os.WriteFile(path, []byte(readme), 0o644); err != nil {
			t.Fatal(err)
		}
	default:
		t.Errorf("%s's API or feature table is stale; run go test ./broker -run TestCompatibilityPage -update", path)
	}
}
