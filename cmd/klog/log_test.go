package main

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/dump"
	"github.com/klogdev/klog/store/log/dump/dumptest"
)

func segFile(dir string, base int64, ext string) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", base, ext))
}

// jsonLines decodes JSON lines into maps.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var ms []map[string]any
	for _, l := range lines(out) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		ms = append(ms, m)
	}
	return ms
}

func TestLogDumpShowsBatchesAndMarkers(t *testing.T) {
	w := dumptest.WritePartition(t)
	var segs []string
	for _, s := range w.Segments {
		segs = append(segs, segFile(w.Dir, s.BaseOffset, ".log"))
	}
	r := mustRun(t, "", "", append([]string{"log", "dump"}, segs...)...)
	for _, want := range []string{"BASE", "CRC", "gzip", "snappy", "lz4", "zstd", "txn,control", "COMMIT coordinator_epoch=3", "ABORT coordinator_epoch=4"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("dump lacks %q:\n%s", want, r.stdout)
		}
	}
	// Text rows line up: the CRC column starts at the same place on every
	// row of a segment.
	col := -1
	for _, l := range lines(r.stdout) {
		if strings.HasSuffix(l, "(log)") {
			col = -1
			continue
		}
		i := strings.Index(l, " ok ")
		if i < 0 {
			continue
		}
		if col >= 0 && i != col {
			t.Errorf("row %q: CRC column at %d, above at %d", l, i, col)
		}
		col = i
	}

	r = mustRun(t, "", "", append([]string{"log", "dump", "-f", "json"}, segs...)...)
	batches := 0
	markers := map[string]float64{}
	for _, m := range jsonLines(t, r.stdout) {
		if m["type"] != "batch" {
			t.Fatalf("line %v: want only batches without --print-data", m)
		}
		batches++
		if mk, ok := m["marker"].(map[string]any); ok {
			markers[mk["type"].(string)] = mk["coordinator_epoch"].(float64)
			if m["control"] != true || m["transactional"] != true {
				t.Errorf("marker batch %v", m)
			}
		}
		if m["crc_valid"] != true {
			t.Errorf("batch %v: crc not valid", m)
		}
	}
	if markers["COMMIT"] != 3 || markers["ABORT"] != 4 || batches < 17 {
		t.Errorf("%d batches, markers %v", batches, markers)
	}
}

func TestLogDumpOtherFiles(t *testing.T) {
	w := dumptest.WritePartition(t)
	abortSeg := int64(0)
	for _, s := range w.Segments {
		if w.Abort >= s.BaseOffset {
			abortSeg = s.BaseOffset
		}
	}
	files := []string{
		segFile(w.Dir, 0, ".index"), segFile(w.Dir, 0, ".timeindex"), segFile(w.Dir, abortSeg, ".txnindex"),
		segFile(w.Dir, w.End, ".snapshot"), filepath.Join(w.Dir, "leader-epoch-checkpoint"), filepath.Join(w.Dir, "partition.metadata"),
		filepath.Join(w.DataDir, "recovery-point-offset-checkpoint"),
	}
	r := mustRun(t, "", "", append([]string{"log", "dump", "-f", "json"}, files...)...)
	types := map[string]int{}
	for _, m := range jsonLines(t, r.stdout) {
		types[m["type"].(string)]++
		switch m["type"] {
		case "aborted_txn":
			if m["producer_id"] != 8.0 || m["last_offset"] != float64(w.Abort) {
				t.Errorf("aborted txn %v", m)
			}
		case "checkpoint_entry":
			if m["topic"] != dumptest.Topic || m["offset"] != float64(w.End) {
				t.Errorf("checkpoint entry %v", m)
			}
		case "partition_metadata":
			if m["topic_id"] != "AQIDBAUGBwgJCgsMDQ4PEA" {
				t.Errorf("partition metadata %v", m)
			}
		}
	}
	for _, typ := range []string{"index_entry", "time_index_entry", "aborted_txn", "producer", "leader_epoch", "partition_metadata", "checkpoint_entry"} {
		if types[typ] == 0 {
			t.Errorf("no %s line in %v", typ, types)
		}
	}
	if types["producer"] != 2 || types["aborted_txn"] != 1 {
		t.Errorf("lines by type %v", types)
	}
	r = mustRun(t, "", "", append([]string{"log", "dump"}, files...)...)
	for _, want := range []string{"OFFSET  POSITION", "PRODUCER  EPOCH", "EPOCH  START_OFFSET", "TOPIC_ID", "orders  0          " + fmt.Sprint(w.End)} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("text dump lacks %q:\n%s", want, r.stdout)
		}
	}
	for _, name := range []string{"notes.txt", "quorum-state"} {
		os.WriteFile(filepath.Join(w.Dir, name), []byte("x"), 0o644)
	}
	if r := klogRun(t, "", "", "log", "dump", "--verify", "--print-data", files[0]); r.code != 2 {
		t.Errorf("--verify with --print-data: exit %d, want 2", r.code)
	}
	if r := klogRun(t, "", "", "log", "dump", filepath.Join(w.Dir, "notes.txt")); r.code != 2 {
		t.Errorf("unknown file kind: exit %d, want 2", r.code)
	}
	// Beside files it reads, one of another kind is skipped, as Kafka's
	// DumpLogSegments does: a glob over a directory names quorum-state.
	r = klogRun(t, "", "", "log", "dump", filepath.Join(w.Dir, "quorum-state"), files[0])
	if r.code != 0 || !strings.Contains(r.stderr, "quorum-state: not a segment") || !strings.Contains(r.stdout, "OFFSET  POSITION") {
		t.Errorf("unknown file beside a known one: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A file that does not decode fails the run, after the others.
	bad := filepath.Join(t.TempDir(), "leader-epoch-checkpoint")
	os.WriteFile(bad, []byte("0\n3\n1 0\n"), 0o644)
	r = klogRun(t, "", "", "log", "dump", bad, files[0])
	if r.code != 1 || !strings.Contains(r.stderr, "klog: "+bad+": checkpoint count") || !strings.Contains(r.stdout, "OFFSET  POSITION") {
		t.Errorf("undecodable file: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestLogVerify(t *testing.T) {
	w := dumptest.WritePartition(t)
	var all []string
	for _, dir := range []string{w.Dir, w.DataDir} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if !e.IsDir() && dump.KindOf(e.Name()) != dump.KindUnknown {
				all = append(all, filepath.Join(dir, e.Name()))
			}
		}
	}
	r := klogRun(t, "", "", append([]string{"log", "dump", "--verify"}, all...)...)
	if r.code != 0 || r.stderr != "" || len(lines(r.stdout)) != len(all) {
		t.Fatalf("verify of a clean partition: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	// A data directory, a partition directory and TOPIC/PARTITION stand
	// for their files.
	partFiles := len(all) - 3 // the data directory's checkpoints
	for _, c := range []struct {
		args  []string
		files int
	}{
		{[]string{w.DataDir}, len(all)},
		{[]string{w.Dir}, partFiles},
		{[]string{"--data-dir", w.DataDir, "orders/0"}, partFiles},
	} {
		r := klogRun(t, "", "", append([]string{"log", "dump", "--verify"}, c.args...)...)
		if r.code != 0 || len(lines(r.stdout)) != c.files || strings.Count(r.stdout, ": ok\n") != c.files {
			t.Errorf("verify %q: exit %d, want %d files ok\n%s%s", c.args, r.code, c.files, r.stdout, r.stderr)
		}
	}

	// A byte flipped in a record of the second batch: its CRC fails.
	seg := segFile(w.Dir, 0, ".log")
	s, err := dump.OpenSegment(seg)
	if err != nil {
		t.Fatal(err)
	}
	s.Next()
	s.Next()
	victim := s.Batch()
	s.Close()
	b, _ := os.ReadFile(seg)
	b[victim.Position+70] ^= 0x01
	os.WriteFile(seg, b, 0o644)
	r = klogRun(t, "", "", "log", "dump", "--verify", seg)
	want := fmt.Sprintf("klog: %s: batch at offset %d (position %d): CRC mismatch", seg, victim.BaseOffset, victim.Position)
	if r.code != 1 || !strings.Contains(r.stderr, want) || !strings.Contains(r.stdout, seg+": 1 problem\n") {
		t.Errorf("flipped byte: exit %d, want 1 and %q\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
	r = klogRun(t, "", "", "log", "dump", "--verify", "-f", "json", seg)
	ms := jsonLines(t, r.stdout)
	// The .log's problem and result, then its indexes', clean.
	if r.code != 1 || len(ms) != 5 || ms[0]["type"] != "problem" || ms[0]["base_offset"] != float64(victim.BaseOffset) ||
		ms[0]["position"] != float64(victim.Position) || ms[1]["type"] != "verified" || ms[1]["file"] != seg || ms[1]["problems"] != 1.0 ||
		ms[4]["type"] != "verified" || ms[4]["file"] != segFile(w.Dir, 0, ".txnindex") || ms[4]["problems"] != 0.0 {
		t.Errorf("flipped byte, JSON: exit %d\n%s", r.code, r.stdout)
	}
	// The dump itself shows the batch's CRC as bad, and exits 0: it read
	// the file whole.
	r = mustRun(t, "", "", "log", "dump", seg)
	if !strings.Contains(r.stdout, "BAD") {
		t.Errorf("dump of the flipped batch does not mark its CRC:\n%s", r.stdout)
	}

	// An index entry naming another batch's offset.
	idx := segFile(w.Dir, w.Segments[1].BaseOffset, ".index")
	es, err := dump.ReadOffsetIndex(idx)
	if err != nil || len(es) < 2 {
		t.Fatalf("index %v %v", es, err)
	}
	b, _ = os.ReadFile(idx)
	binary.BigEndian.PutUint32(b, binary.BigEndian.Uint32(b)+1)
	os.WriteFile(idx, b, 0o644)
	r = klogRun(t, "", "", "log", "dump", "--verify", segFile(w.Dir, w.Segments[1].BaseOffset, ".log"))
	want = fmt.Sprintf("klog: %s: entry 0: offset %d points at position %d, the batch ending at offset %d", idx, es[0].Offset+1, es[0].Position, es[0].Offset)
	if r.code != 1 || !strings.Contains(r.stderr, want) {
		t.Errorf("corrupt index: exit %d, want 1 and %q\nstderr:\n%s", r.code, want, r.stderr)
	}
	// Over the whole directory each file is checked once: the index with
	// its .log, not again on its own.
	r = klogRun(t, "", "", "log", "dump", "--verify", w.Dir)
	if r.code != 1 || strings.Count(r.stderr, want) != 1 || strings.Count(r.stdout, idx+": ") != 1 || !strings.Contains(r.stderr, "2 problems in 2 of") {
		t.Errorf("verify of the directory: exit %d, want %q once\nstdout:\n%s\nstderr:\n%s", r.code, want, r.stdout, r.stderr)
	}
}

func TestLogSegments(t *testing.T) {
	w := dumptest.WritePartition(t)
	for _, args := range [][]string{
		{"log", "segments", w.Dir},
		{"log", "segments", w.DataDir},
		{"log", "segments", "--data-dir", w.DataDir, "orders/0"},
	} {
		r := mustRun(t, "", "", append(args, "-f", "json")...)
		var doc struct {
			Version    int              `json:"version"`
			Partitions []dump.Partition `json:"partitions"`
		}
		if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
			t.Fatalf("%q: %v\n%s", args, err, r.stdout)
		}
		if doc.Version != 1 || len(doc.Partitions) != 1 || len(doc.Partitions[0].Segments) != len(w.Segments) || doc.Partitions[0].LogEndOffset != w.End {
			t.Errorf("%q: %+v", args, doc)
			continue
		}
		for i, s := range doc.Partitions[0].Segments {
			if s.BaseOffset != w.Segments[i].BaseOffset || s.LastOffset != w.Segments[i].NextOffset-1 || s.IndexEntries != w.Segments[i].IndexEntries {
				t.Errorf("%q: segment %d %+v, log had %+v", args, i, s, w.Segments[i])
			}
		}
	}
	// The global --format works as -f does.
	if r := mustRun(t, "", "", "--format", "json", "log", "segments", w.Dir); !strings.HasPrefix(r.stdout, "{\n  \"version\": 1,") {
		t.Errorf("--format json log segments: %.80s", r.stdout)
	}
	r := mustRun(t, "", "", "log", "segments", w.Dir)
	for _, want := range []string{"PARTITION         orders/0", "LOG_START_OFFSET  0", fmt.Sprintf("RECOVERY_POINT    %d", w.End), "FIRST_DIRTY       -", "BASE  LAST"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("segments lack %q:\n%s", want, r.stdout)
		}
	}
	if got := len(lines(r.stdout)); got != 13+len(w.Segments) {
		t.Errorf("%d lines, want %d:\n%s", got, 13+len(w.Segments), r.stdout)
	}
	// T/P resolves in the default data directory, klog up's.
	env := map[string]string{"XDG_DATA_HOME": t.TempDir()}
	node := filepath.Join(env["XDG_DATA_HOME"], "klog", "default", "node-0")
	if err := os.MkdirAll(node, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(w.Dir, filepath.Join(node, "orders-0")); err != nil {
		t.Fatal(err)
	}
	r = klogRunEnv(t, env, nil, "log", "segments", "orders/0")
	if r.code != 0 || !strings.Contains(r.stdout, filepath.Join(node, "orders-0")) {
		t.Errorf("orders/0 in the default data directory: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	r = klogRunEnv(t, env, nil, "log", "segments", "absent/0")
	if r.code != 1 || !strings.Contains(r.stderr, "absent-0") {
		t.Errorf("missing partition: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestLogDumpPrintDataIsConsumeJSON: the records --print-data shows of a
// segment a broker wrote are, line for line, what klog consume -f json
// prints of them.
func TestLogDumpPrintDataIsConsumeJSON(t *testing.T) {
	dir := t.TempDir()
	n := brokertest.Start(t, brokertest.DataDir(dir))
	b := n.Addr()
	createTopic(t, b, "pd", 1)
	for _, codec := range []string{"none", "gzip", "snappy", "lz4", "zstd"} {
		mustRun(t, b, "k1 v-"+codec+"\nk2 \xff\xfe\n", "produce", "pd", "-q", "-z", codec, "-K", " ", "-H", "h=1", "-H", "h=2")
	}
	mustRun(t, b, "\n", "produce", "pd", "-q", "-Z", "-k", "tomb")
	mustRun(t, b, "a\nb\n", "produce", "pd", "-q", "--txn-id", "tx1")
	// EndTxn answers before the commit marker is written, as in Kafka:
	// wait for the last stable offset to pass it, which is the end
	// consume -e reads up to.
	adm := kadm.NewClient(n.Client())
	testkit.WaitFor(t, "the commit marker", func() (bool, string) {
		lso, err := adm.ListCommittedOffsets(testkit.Context(t), "pd")
		o, _ := lso.Lookup("pd", 0)
		return err == nil && o.Offset == 14, fmt.Sprintf("last stable offset %d, %v", o.Offset, err)
	})
	consumed := mustRun(t, b, "", "consume", "pd", "-e", "-f", "json").stdout
	// The broker's timestamps on a LogAppendTime topic.
	mustRun(t, b, "", "topic", "create", "pdl", "-p", "1", "-c", "message.timestamp.type=LogAppendTime")
	mustRun(t, b, "x\ny\n", "produce", "pdl", "-q", "-z", "zstd")
	consumedLogAppend := mustRun(t, b, "", "consume", "pdl", "-e", "-f", "json").stdout
	n.Close()

	for _, c := range []struct {
		topic, consumed string
		n               int
	}{{"pd", consumed, 13}, {"pdl", consumedLogAppend, 2}} {
		r := mustRun(t, "", "", "log", "dump", "--print-data", "-f", "json", filepath.Join(dir, c.topic+"-0"))
		var records []string
		for _, l := range lines(r.stdout) {
			if !strings.HasPrefix(l, `{"type":`) {
				records = append(records, l)
			}
		}
		if got := strings.Join(records, "\n") + "\n"; got != c.consumed {
			t.Errorf("%s: dump --print-data records:\n%s\nconsume -f json:\n%s", c.topic, got, c.consumed)
		}
		if len(lines(c.consumed)) != c.n {
			t.Errorf("%s: consumed %d records, want %d", c.topic, len(lines(c.consumed)), c.n)
		}
	}
	if !strings.Contains(consumedLogAppend, `"timestamp_type":"log_append"`) {
		t.Errorf("consume of a LogAppendTime topic: %s", consumedLogAppend)
	}
}

// TestLogDumpProgress: on a terminal's stderr the dump shows a progress
// line, erases it before each diagnostic and at the end, and keeps it out
// of the data on stdout.
func TestLogDumpProgress(t *testing.T) {
	w := dumptest.WritePartition(t)
	var out, diag strings.Builder
	if newProgress(&out, &diag) != nil {
		t.Fatal("a progress line on a stderr that is no terminal")
	}
	clock := time.UnixMilli(0)
	prog := &progress{w: &diag, now: func() time.Time { clock = clock.Add(time.Second); return clock }}
	missing := filepath.Join(w.Dir, "00000000000000009999.index")
	g := &globals{format: formatText}
	err := runLogDump(g, logDumpOptions{}, []string{segFile(w.Dir, 0, ".log"), missing, segFile(w.Dir, 0, ".index")}, &out, &diag, prog)
	if !errors.Is(err, ErrItemsFailed) {
		t.Fatalf("dump with a missing file: %v", err)
	}
	d := diag.String()
	const erase = "\r\033[K"
	if !strings.Contains(d, erase+"klog: dumping file 1 of 3") || !strings.Contains(d, erase+"klog: dumping "+segFile(w.Dir, 0, ".log")+": 0% (offset 0)") {
		t.Errorf("no progress line: %q", d)
	}
	if !strings.Contains(d, erase+"klog: "+missing+": open ") || !strings.HasSuffix(d, erase) {
		t.Errorf("the diagnostic does not replace the progress line, or the line stays: %q", d)
	}
	if strings.Contains(out.String(), "\r") || !strings.Contains(out.String(), "OFFSET  POSITION") {
		t.Errorf("stdout: %q", out.String())
	}
}
