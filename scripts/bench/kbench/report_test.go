package main

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
)

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
		got := verdict(g, nil, tc.ratios)
		if !strings.Contains(got, tc.want) {
			t.Errorf("verdict(%v) = %q, want it to contain %q", tc.ratios, got, tc.want)
		}
	}
	abs := metric{goal: "G11", absMax: 50}
	if got := verdict(abs, []float64{10, 60, 20}, nil); !strings.HasSuffix(got, ": met") {
		t.Errorf("abs verdict %q", got)
	}
	if got := verdict(abs, []float64{51, 60, 20}, nil); !strings.HasSuffix(got, "not met") {
		t.Errorf("abs verdict %q", got)
	}
}

func TestReport(t *testing.T) {
	var in bytes.Buffer
	// Three pairs of three brokers; klog produces 2x faster than kfake and
	// 4x faster than kafka, with CPU per GB in the same proportions. Pair 3's
	// kfake consume failed and is left out of that metric. Only kafka has a
	// setup step before exec.
	speed := map[string]float64{"klog": 2, "kfake": 1, "kafka": 0.5}
	for p := 1; p <= 3; p++ {
		for _, l := range []string{"klog", "kfake", "kafka"} {
			f := speed[l]
			fmt.Fprintf(&in, `{"mode":"produce","label":%q,"pair":%d,"pinned":true,"loadavg_before":%v,"MBps":%v,"server_cpu_s_per_gb":%v,"server_rss_mb":%v}`+"\n",
				l, p, 0.5*float64(p), 100*f*float64(p), 1/f, 40/f)
			if l == "kfake" && p == 3 {
				fmt.Fprintf(&in, `{"mode":"consume","label":%q,"pair":%d,"pinned":true,"error":"boom"}`+"\n", l, p)
			} else {
				fmt.Fprintf(&in, `{"mode":"consume","label":%q,"pair":%d,"pinned":true,"MBps":%v,"server_rss_mb":%v}`+"\n", l, p, 300.0, 40/f)
			}
			setup := ""
			if l == "kafka" {
				setup = `"setup_ms":1500,`
			}
			fmt.Fprintf(&in, `{"mode":"startup","label":%q,"pair":%d,"pinned":false,"loadavg_before":3.5,%s"first_produce_ms":%v,"idle_rss_mb":10,"shutdown_ms":5,"listen_ms":8}`+"\n",
				l, p, setup, 20/f)
		}
	}
	in.WriteString("\n")
	rs, err := readResults(&in)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 27 {
		t.Fatalf("read %d results, want 27", len(rs))
	}
	var out bytes.Buffer
	if err := writeReport(&out, rs, "klog", []string{"kfake", "kafka"}, "0.1 0.2 0.3", true); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	t.Log("\n" + got)
	lines := strings.Split(got, "\n")
	for _, want := range []string{
		"klog vs kfake: paired ratio (>1: klog better)",
		"klog vs kafka: paired ratio",
		"goal (vs kfake)",
		"200 / 400 / 600  ",  // klog produce MB/s
		"100 / 200 / 300  ",  // kfake produce MB/s
		"50.0 / 100 / 150  ", // kafka produce MB/s
		"2.00 / 2.00 / 2.00  (klog/kfake, n=3)",
		"4.00 / 4.00 / 4.00  (klog/kafka, n=3)",
		"2.00 / 2.00 / 2.00  (kfake/klog, n=3)", // CPU per GB and first produce, inverted
		"4.00 / 4.00 / 4.00  (kafka/klog, n=3)",
		"1.00 / 1.00 / 1.00  (klog/kfake, n=2)", // consume: pair 3 incomplete
		"1.00 / 1.00 / 1.00  (klog/kafka, n=3)",
		"G1 (>= 1.00): met, 3/3",
		"G10 (>= 0.67): met",
		"G10 (<= 100 abs): met", // klog's loaded RSS 20 MB
		"G11 (<= 50 abs): met",
		"loadavg now: 0.1 0.2 0.3",
		"runs that started with loadavg > 3",
		"9 runs were not pinned",
		"pair 3 kfake consume: boom",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// The setup row has only kafka's figure.
	for _, l := range lines {
		if strings.HasPrefix(l, "startup: setup before exec ms") {
			if f := strings.Fields(strings.TrimPrefix(l, "startup: setup before exec ms")); len(f) < 3 || f[0] != "-" || f[1] != "-" || f[2] != "1500" {
				t.Errorf("setup row %q, want - - 1500 / ...", l)
			}
		}
	}
	// One peer: the table of the klog-vs-kfake run.
	out.Reset()
	if err := writeReport(&out, rs, "klog", []string{"kfake"}, "", true); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "kafka") {
		t.Errorf("one-peer report mentions kafka:\n%s", out.String())
	}
}

func TestReportNoPairs(t *testing.T) {
	rs, err := readResults(strings.NewReader(`{"mode":"produce","label":"klog","pair":1,"MBps":5}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := writeReport(&bytes.Buffer{}, rs, "klog", []string{"kfake", "kafka"}, "", true); !errors.Is(err, errNoPairs) {
		t.Fatalf("err %v, want errNoPairs", err)
	}
	if err := writeReport(&bytes.Buffer{}, rs, "klog", nil, "", true); !errors.Is(err, errBadFlags) {
		t.Fatalf("no peers: err %v, want errBadFlags", err)
	}
	if _, err := readResults(strings.NewReader("{not json\n")); err == nil {
		t.Fatal("bad JSON accepted")
	}
}

// The replication run: no goals column, and only the metrics its runs
// measured.
func TestReportWithoutGoals(t *testing.T) {
	rs, err := readResults(strings.NewReader(`{"mode":"produce","label":"klog3","pair":1,"MBps":50}
{"mode":"produce","label":"klog1","pair":1,"MBps":100}
{"mode":"e2e","label":"klog3","pair":1,"e2e_from_schedule_p99_ms":4}
{"mode":"e2e","label":"klog1","pair":1,"e2e_from_schedule_p99_ms":2}
`))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeReport(&out, rs, "klog3", []string{"klog1"}, "", false); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, bad := range []string{"goal", "G1", "consume MB/s", "startup"} {
		if strings.Contains(got, bad) {
			t.Errorf("report has %q:\n%s", bad, got)
		}
	}
	for _, want := range []string{"produce MB/s", "e2e p99 ms", "0.500 / 0.500 / 0.500  (klog3/klog1, n=1)"} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
}

// The security run's table: -ratios picks the brokers and the ratios, no
// goals, and the TLS each broker agreed to below it.
func TestReportRatios(t *testing.T) {
	var in bytes.Buffer
	speed := map[string]float64{"klog": 10, "klogtls": 7, "kafka": 4, "kafkatls": 2, "other": 1}
	for p := 1; p <= 2; p++ {
		for _, l := range []string{"klog", "klogtls", "kafka", "kafkatls", "other"} {
			tlsName := ""
			if strings.HasSuffix(l, "tls") {
				tlsName = `"tls":"TLS 1.3 TLS_AES_128_GCM_SHA256",`
			}
			fmt.Fprintf(&in, `{"mode":"produce","label":%q,"pair":%d,"pinned":true,%s"MBps":%v,"server_cpu_s_per_gb":%v}`+"\n",
				l, p, tlsName, 100*speed[l], 1/speed[l])
		}
	}
	rs, err := readResults(&in)
	if err != nil {
		t.Fatal(err)
	}
	pairs, err := parsePairings("klogtls/klog, kafkatls/kafka,klogtls/kafkatls")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := writeTable(&out, rs, pairingBrokers(pairs), pairs, "", false); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	t.Log("\n" + got)
	header := strings.Split(got, "\n")[0]
	for _, want := range []string{"klogtls min / med / max", "klog min / med / max", "kafkatls min / med / max", "kafka min / med / max",
		"klogtls vs klog: paired ratio", "kafkatls vs kafka: paired ratio", "klogtls vs kafkatls: paired ratio"} {
		if !strings.Contains(header, want) {
			t.Errorf("header lacks %q", want)
		}
	}
	for _, want := range []string{
		"0.700 / 0.700 / 0.700  (klogtls/klog, n=2)",
		"0.500 / 0.500 / 0.500  (kafkatls/kafka, n=2)",
		"3.50 / 3.50 / 3.50  (klogtls/kafkatls, n=2)",
		"3.50 / 3.50 / 3.50  (kafkatls/klogtls, n=2)", // CPU per GB, inverted
		"klogtls: TLS 1.3 TLS_AES_128_GCM_SHA256",
		"kafkatls: TLS 1.3 TLS_AES_128_GCM_SHA256",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, bad := range []string{"goal", "other", "klog: TLS"} {
		if strings.Contains(got, bad) {
			t.Errorf("report has %q", bad)
		}
	}
	for _, bad := range []string{"klog", "klog/", "/klog", "klog/klog", "a/b,c"} {
		if _, err := parsePairings(bad); !errors.Is(err, errBadFlags) {
			t.Errorf("-ratios %q: err %v, want errBadFlags", bad, err)
		}
	}
}
