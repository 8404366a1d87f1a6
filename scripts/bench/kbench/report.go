package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
)

// metric is one row of the report.
type metric struct {
	name  string
	mode  string // produce | consume | e2e | startup
	field string // JSON field of that mode's line
	// higherBetter: the paired ratio is a/b (throughput); otherwise b/a
	// (CPU per GB, latency, memory), so a ratio above 1 always means the
	// broker under test did better.
	higherBetter bool
	goal         string  // goal id from the performance study, "" for none
	target       float64 // the goal as a paired ratio (higher is better); 0 for none
	absMax       float64 // goal as an absolute bound on a's median; 0 for none
}

// metrics are the rows printed, with the goals of config P.
var metrics = []metric{
	{name: "produce MB/s", mode: "produce", field: "MBps", higherBetter: true, goal: "G1", target: 1.0},
	{name: "produce records/s", mode: "produce", field: "records_per_s", higherBetter: true},
	{name: "produce broker CPU-s/GB", mode: "produce", field: "server_cpu_s_per_gb", goal: "G2", target: 1.0},
	{name: "produce p50 ms, call to ack", mode: "produce", field: "produce_p50_ms"},
	{name: "produce p99 ms, call to ack", mode: "produce", field: "produce_p99_ms"},
	{name: "consume MB/s", mode: "consume", field: "MBps", higherBetter: true, goal: "G4", target: 1.0},
	{name: "consume records/s", mode: "consume", field: "records_per_s", higherBetter: true},
	{name: "consume broker CPU-s/GB", mode: "consume", field: "server_cpu_s_per_gb", goal: "G5", target: 1.0},
	{name: "metadata p50 ms", mode: "metadata", field: "metadata_p50_ms"},
	{name: "metadata p99 ms", mode: "metadata", field: "metadata_p99_ms"},
	{name: "RSS MB, a tenth into the produce", mode: "produce", field: "server_rss_early_mb"},
	{name: "loaded RSS MB, after produce", mode: "produce", field: "server_rss_mb"},
	{name: "loaded RSS MB, after produce+consume", mode: "consume", field: "server_rss_mb", goal: "G10", absMax: 100},
	{name: "peak RSS MB (VmHWM), produce+consume", mode: "consume", field: "server_hwm_mb"},
	{name: "e2e p50 ms", mode: "e2e", field: "e2e_from_schedule_p50_ms", goal: "G7", absMax: 1},
	{name: "e2e p99 ms", mode: "e2e", field: "e2e_from_schedule_p99_ms", goal: "G7", absMax: 5},
	{name: "e2e p99.9 ms", mode: "e2e", field: "e2e_from_schedule_p999_ms", goal: "G7", absMax: 25},
	{name: "startup: setup before exec ms", mode: "startup", field: "setup_ms"},
	{name: "startup: TCP accept ms", mode: "startup", field: "listen_ms"},
	{name: "startup: first acked produce ms", mode: "startup", field: "first_produce_ms", goal: "G9", target: 1.0},
	{name: "startup: idle RSS MB", mode: "startup", field: "idle_rss_mb", goal: "G10", target: 1 / 1.5},
	{name: "startup: idle CPU ms/s", mode: "startup", field: "idle_cpu_ms_per_s"},
	{name: "startup: shutdown ms", mode: "startup", field: "shutdown_ms", goal: "G11", absMax: 50},
}

// run is one JSON line written by kbench.
type result struct {
	mode, label string
	pair        int
	pinned      bool
	failed      string
	load        float64
	fields      map[string]any
}

func readResults(r io.Reader) ([]result, error) {
	var out []result
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(text), &m); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		res := result{fields: m}
		res.mode, _ = m["mode"].(string)
		res.label, _ = m["label"].(string)
		res.failed, _ = m["error"].(string)
		res.pinned, _ = m["pinned"].(bool)
		if v, ok := m["pair"].(float64); ok {
			res.pair = int(v)
		}
		if v, ok := m["loadavg_before"].(float64); ok {
			res.load = v
		}
		out = append(out, res)
	}
	return out, sc.Err()
}

// value returns a run's figure for m, if it has one.
func (r result) value(m metric) (float64, bool) {
	if r.mode != m.mode || r.failed != "" {
		return 0, false
	}
	v, ok := r.fields[m.field].(float64)
	if !ok || math.IsNaN(v) || v < 0 {
		return 0, false
	}
	return v, true
}

// column is one broker's figures for a metric.
type column struct {
	label  string
	values []float64
}

// pairing is a ratio column: broker x against broker y, the paired ratio
// above 1 when x did better.
type pairing struct{ x, y string }

// ratioColumn is a pairing's ratios, one per pair with both measured.
type ratioColumn struct {
	pairing
	ratios []float64
}

// row is the summary of one metric: each broker's figures and each
// pairing's ratios. Its verdict judges the goal of the first broker, the
// one under test, by the first pairing's ratios, against the baseline.
type row struct {
	metric
	cols    []column
	ratios  []ratioColumn
	verdict string
}

func summarize(results []result, brokers []string, pairs []pairing, m metric) row {
	r := row{metric: m}
	all := map[string][]float64{}
	// byPair[label][pair] is the first run of that broker in the pair, the
	// one that counts.
	byPair := map[string]map[int]float64{}
	for _, res := range results {
		v, ok := res.value(m)
		if !ok {
			continue
		}
		all[res.label] = append(all[res.label], v)
		if res.pair <= 0 {
			continue
		}
		if byPair[res.label] == nil {
			byPair[res.label] = map[int]float64{}
		}
		if _, seen := byPair[res.label][res.pair]; !seen {
			byPair[res.label][res.pair] = v
		}
	}
	for _, b := range brokers {
		r.cols = append(r.cols, column{label: b, values: all[b]})
	}
	for _, p := range pairs {
		r.ratios = append(r.ratios, ratioColumn{pairing: p, ratios: pairedRatios(byPair[p.x], byPair[p.y], m.higherBetter)})
	}
	var a, base []float64
	if len(r.cols) > 0 {
		a = r.cols[0].values
	}
	if len(r.ratios) > 0 {
		base = r.ratios[0].ratios
	}
	r.verdict = verdict(m, a, base)
	return r
}

// pairedRatios are the ratios of x against y in each pair both measured,
// in pair order.
func pairedRatios(x, y map[int]float64, higherBetter bool) []float64 {
	pairs := make([]int, 0, len(x))
	for pair := range x {
		pairs = append(pairs, pair)
	}
	sort.Ints(pairs)
	var out []float64
	for _, pair := range pairs {
		yv, ok := y[pair]
		if !ok {
			continue
		}
		if ratio, ok := pairRatio(x[pair], yv, higherBetter); ok {
			out = append(out, ratio)
		}
	}
	return out
}

// measured reports whether any broker of the row has a value.
func (r row) measured() bool {
	for _, col := range r.cols {
		if len(col.values) > 0 {
			return true
		}
	}
	return false
}

// pairRatio is a/b when higher is better and b/a otherwise.
func pairRatio(a, b float64, higherBetter bool) (float64, bool) {
	num, den := a, b
	if !higherBetter {
		num, den = b, a
	}
	if den <= 0 {
		return 0, false
	}
	return num / den, true
}

// verdict applies the study's rule to metric m, given the broker under
// test's values a and its paired ratios against the baseline: a goal is met
// when the median paired ratio meets the target and at least ceil(n/2)+1
// pairs reach 0.9x of it.
func verdict(m metric, a, ratios []float64) string {
	switch {
	case m.goal == "":
		return ""
	case m.absMax > 0:
		if len(a) == 0 {
			return m.goal + ": no data"
		}
		if med := median(a); med <= m.absMax {
			return fmt.Sprintf("%s (<= %g abs): met", m.goal, m.absMax)
		}
		return fmt.Sprintf("%s (<= %g abs): not met", m.goal, m.absMax)
	case len(ratios) == 0:
		return m.goal + ": no pairs"
	}
	n := len(ratios)
	need := (n+1)/2 + 1
	if need > n {
		need = n
	}
	near := 0
	for _, x := range ratios {
		if x >= 0.9*m.target {
			near++
		}
	}
	head := fmt.Sprintf("%s (>= %.2f)", m.goal, m.target)
	switch {
	case median(ratios) >= m.target && near >= need:
		return fmt.Sprintf("%s: met, %d/%d pairs >= 0.9x", head, near, n)
	case median(ratios) >= m.target:
		return fmt.Sprintf("%s: unclear, only %d/%d pairs >= 0.9x; double the pairs", head, near, n)
	default:
		return fmt.Sprintf("%s: not met", head)
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func minMedMax(v []float64) string {
	if len(v) == 0 {
		return "-"
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return fmt.Sprintf("%s / %s / %s", num(s[0]), num(median(s)), num(s[len(s)-1]))
}

// num prints about three significant digits.
func num(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}

func runReport(c config, w io.Writer) error {
	var results []result
	for _, path := range c.args {
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("report: %w", err)
		}
		rs, err := readResults(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("report %s: %w", path, err)
		}
		results = append(results, rs...)
	}
	if c.ratios != "" {
		pairs, err := parsePairings(c.ratios)
		if err != nil {
			return err
		}
		return writeTable(w, results, pairingBrokers(pairs), pairs, currentLoad(), false)
	}
	var peers []string
	for _, p := range strings.Split(c.b, ",") {
		if p = strings.TrimSpace(p); p != "" {
			peers = append(peers, p)
		}
	}
	return writeReport(w, results, c.a, peers, currentLoad(), c.goals)
}

// parsePairings reads -ratios: X/Y pairings, comma separated.
func parsePairings(v string) ([]pairing, error) {
	var pairs []pairing
	for _, f := range strings.Split(v, ",") {
		x, y, ok := strings.Cut(strings.TrimSpace(f), "/")
		x, y = strings.TrimSpace(x), strings.TrimSpace(y)
		if !ok || x == "" || y == "" || x == y {
			return nil, fmt.Errorf("%w: -ratios %q: want X/Y,... of two brokers each", errBadFlags, f)
		}
		pairs = append(pairs, pairing{x, y})
	}
	return pairs, nil
}

// pairingBrokers are the brokers the pairings name, in the order they
// first appear.
func pairingBrokers(pairs []pairing) []string {
	var out []string
	for _, p := range pairs {
		for _, b := range []string{p.x, p.y} {
			if !slices.Contains(out, b) {
				out = append(out, b)
			}
		}
	}
	return out
}

func currentLoad() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// writeReport prints the table of broker a against each of peers: a column
// of min / median / max per broker, one of paired ratios per peer, and,
// with goals, the goals judged against the first peer, the baseline.
// Metrics no run measured are left out.
func writeReport(w io.Writer, results []result, a string, peers []string, loadNow string, goals bool) error {
	if len(peers) == 0 {
		return fmt.Errorf("%w: no peer to compare %s with", errBadFlags, a)
	}
	pairs := make([]pairing, 0, len(peers))
	for _, p := range peers {
		pairs = append(pairs, pairing{a, p})
	}
	return writeTable(w, results, append([]string{a}, peers...), pairs, loadNow, goals)
}

// writeTable prints a column of min / median / max per broker, one of
// paired ratios per pairing and, with goals, the goals of the first
// broker judged by the first pairing, then the load and the failed runs.
func writeTable(w io.Writer, results []result, brokers []string, pairs []pairing, loadNow string, goals bool) error {
	rows := make([]row, 0, len(metrics))
	complete := 0
	for _, m := range metrics {
		r := summarize(results, brokers, pairs, m)
		for _, col := range r.ratios {
			complete = max(complete, len(col.ratios))
		}
		rows = append(rows, r)
	}
	if complete == 0 {
		var names []string
		for _, p := range pairs {
			names = append(names, p.x+" and "+p.y)
		}
		return fmt.Errorf("%w of %s in %d runs", errNoPairs, strings.Join(names, " or "), len(results))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprint(tw, "metric")
	for _, b := range brokers {
		fmt.Fprintf(tw, "\t%s min / med / max", b)
	}
	for _, p := range pairs {
		fmt.Fprintf(tw, "\t%s vs %s: paired ratio (>1: %s better)", p.x, p.y, p.x)
	}
	if goals {
		fmt.Fprintf(tw, "\tgoal (vs %s)", pairs[0].y)
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		if !r.measured() {
			continue // a metric no run measured: not this run's kind
		}
		fmt.Fprint(tw, r.name)
		for _, col := range r.cols {
			fmt.Fprintf(tw, "\t%s", minMedMax(col.values))
		}
		for _, col := range r.ratios {
			dir := fmt.Sprintf("%s/%s", col.x, col.y)
			if !r.higherBetter {
				dir = fmt.Sprintf("%s/%s", col.y, col.x)
			}
			ratio := "-"
			if len(col.ratios) > 0 {
				ratio = fmt.Sprintf("%s  (%s, n=%d)", minMedMax(col.ratios), dir, len(col.ratios))
			}
			fmt.Fprintf(tw, "\t%s", ratio)
		}
		if goals {
			fmt.Fprintf(tw, "\t%s", r.verdict)
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeRunNotes(w, results, brokers, loadNow)
	return nil
}

// writeRunNotes prints, for the runs of brokers, the load before them,
// those that started loaded, the unpinned ones and the failed ones.
func writeRunNotes(w io.Writer, results []result, brokers []string, loadNow string) {
	var loads []float64
	var high []string
	var failed []string
	unpinned := 0
	shown := map[string]bool{}
	for _, b := range brokers {
		shown[b] = true
	}
	tlsOf := map[string][]string{} // label → the TLS versions and suites its runs agreed
	for _, r := range results {
		if !shown[r.label] {
			continue
		}
		if v, _ := r.fields["tls"].(string); v != "" && !slices.Contains(tlsOf[r.label], v) {
			tlsOf[r.label] = append(tlsOf[r.label], v)
		}
		if r.failed != "" {
			failed = append(failed, fmt.Sprintf("pair %d %s %s: %s", r.pair, r.label, r.mode, r.failed))
			continue
		}
		if !r.pinned {
			unpinned++
		}
		if r.load > 0 {
			loads = append(loads, r.load)
		}
		if r.load > 3 {
			high = append(high, fmt.Sprintf("pair %d %s %s (%.2f)", r.pair, r.label, r.mode, r.load))
		}
	}
	fmt.Fprintf(w, "\nloadavg now: %s; before runs min / med / max: %s\n", loadNow, minMedMax(loads))
	for _, b := range brokers {
		if len(tlsOf[b]) > 0 {
			fmt.Fprintf(w, "%s: %s\n", b, strings.Join(tlsOf[b], "; "))
		}
	}
	if len(high) > 0 {
		fmt.Fprintf(w, "runs that started with loadavg > 3 (treat their pairs with care): %s\n", strings.Join(high, ", "))
	}
	if unpinned > 0 {
		fmt.Fprintf(w, "%d runs were not pinned to separate CPUs; ratios are noisier\n", unpinned)
	}
	if len(failed) > 0 {
		fmt.Fprintf(w, "failed runs (left out):\n  %s\n", strings.Join(failed, "\n  "))
	}
}
