package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestParseStat(t *testing.T) {
	// The command name holds spaces and a ')' to check field counting.
	line := "4242 (kfake server) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 9 0 123 456 789"
	s, err := parseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if s.userS != 2.5 || s.sysS != 0.75 {
		t.Fatalf("user %v sys %v, want 2.5 0.75", s.userS, s.sysS)
	}
	for _, bad := range []string{"", "12 (x", "12 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 u s"} {
		if _, err := parseStat(bad); !errors.Is(err, errBadProc) {
			t.Errorf("parseStat(%q) err %v, want errBadProc", bad, err)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median(nil) is not NaN")
	}
}

func TestPairRatioDirection(t *testing.T) {
	// Throughput: a/b. CPU per GB and latency: b/a. Above 1 means a is better.
	if r, _ := pairRatio(900, 600, true); r != 1.5 {
		t.Errorf("throughput ratio %v, want 1.5", r)
	}
	if r, _ := pairRatio(0.5, 1.0, false); r != 2 {
		t.Errorf("cpu ratio %v, want 2", r)
	}
	if _, ok := pairRatio(1, 0, true); ok {
		t.Error("ratio with zero denominator accepted")
	}
}

func TestVerdict(t *testing.T) {
	g := metric{goal: "G1", target: 1.0}
	for _, tc := range []struct {
		ratios []float64
		want   string
	}{
		{[]float64{1.2, 1.1, 1.0, 0.95, 0.5}, "met, 4/5"},         // median 1.0, 4 pairs >= 0.9
		{[]float64{1.2, 1.1, 1.0, 0.8, 0.5}, "unclear, only 3/5"}, // median met, too few near
		{[]float64{1.2, 0.99, 0.95, 0.9, 0.9}, "not met"},
		{nil, "no pairs"},
	} {
		got := verdict(row{metric: g, ratios: tc.ratios})
		if !strings.Contains(got, tc.want) {
			t.Errorf("verdict(%v) = %q, want it to contain %q", tc.ratios, got, tc.want)
		}
	}
	abs := metric{goal: "G11", absMax: 50}
	if got := verdict(row{metric: abs, a: []float64{10, 60, 20}}); !strings.HasSuffix(got, ": met") {
		t.Errorf("abs verdict %q", got)
	}
	if got := verdict(row{metric: abs, a: []float64{51, 60, 20}}); !strings.HasSuffix(got, "not met") {
		t.Errorf("abs verdict %q", got)
	}
}

func TestReport(t *testing.T) {
	var in bytes.Buffer
	// Three pairs in ABBA order; klog produces 2x faster with half the CPU
	// per GB. Pair 3's kfake consume failed and is left out of that metric.
	for p := 1; p <= 3; p++ {
		for _, l := range []string{"klog", "kfake"} {
			f := 1.0
			if l == "klog" {
				f = 2
			}
			fmt.Fprintf(&in, `{"mode":"produce","label":%q,"pair":%d,"pinned":true,"loadavg_before":%v,"MBps":%v,"server_cpu_s_per_gb":%v}`+"\n",
				l, p, 0.5*float64(p), 100*f*float64(p), 1/f)
			if l == "kfake" && p == 3 {
				fmt.Fprintf(&in, `{"mode":"consume","label":%q,"pair":%d,"pinned":true,"error":"boom"}`+"\n", l, p)
			} else {
				fmt.Fprintf(&in, `{"mode":"consume","label":%q,"pair":%d,"pinned":true,"MBps":%v}`+"\n", l, p, 300.0)
			}
			fmt.Fprintf(&in, `{"mode":"startup","label":%q,"pair":%d,"pinned":false,"loadavg_before":3.5,"first_produce_ms":%v,"idle_rss_mb":10,"shutdown_ms":5,"listen_ms":8}`+"\n",
				l, p, 20/f)
		}
	}
	in.WriteString("\n")
	rs, err := readResults(&in)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 18 {
		t.Fatalf("read %d results, want 18", len(rs))
	}
	var out bytes.Buffer
	if err := writeReport(&out, rs, "klog", "kfake", "0.1 0.2 0.3"); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	t.Log("\n" + got)
	for _, want := range []string{
		"produce MB/s  ",
		"200 / 400 / 600", // klog produce MB/s
		"100 / 200 / 300", // kfake produce MB/s
		"2.00 / 2.00 / 2.00  (klog/kfake, n=3)",
		"2.00 / 2.00 / 2.00  (kfake/klog, n=3)", // CPU per GB and first produce, inverted
		"1.00 / 1.00 / 1.00  (klog/kfake, n=2)", // consume: pair 3 incomplete
		"G1 (>= 1.00): met, 3/3",
		"G10 (>= 0.67): met",
		"G11 (<= 50 abs): met",
		"loadavg now: 0.1 0.2 0.3",
		"runs that started with loadavg > 3",
		"6 runs were not pinned",
		"pair 3 kfake consume: boom",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q", want)
		}
	}
}

func TestReportNoPairs(t *testing.T) {
	rs, err := readResults(strings.NewReader(`{"mode":"produce","label":"klog","pair":1,"MBps":5}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := writeReport(&bytes.Buffer{}, rs, "klog", "kfake", ""); !errors.Is(err, errNoPairs) {
		t.Fatalf("err %v, want errNoPairs", err)
	}
	if _, err := readResults(strings.NewReader("{not json\n")); err == nil {
		t.Fatal("bad JSON accepted")
	}
}
