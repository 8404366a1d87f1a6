package log

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/log/record"
	"github.com/klogdev/klog/store/vfs"
)

// leaderWorkload appends to l what a partition leader sees over four leader
// epochs: plain, compressed (every codec), idempotent and transactional
// batches, commit and abort markers, with the clock moving and record
// timestamps out of order. step is called after every append.
func leaderWorkload(t *testing.T, e *env, l *Log, step func()) {
	t.Helper()
	epoch := int32(0)
	mk := func(o logtest.Options, n int) []byte {
		o.BaseTimestamp = e.clk.UnixMilli()
		recs := logtest.Values(n, 40)
		for i := range recs {
			recs[i].TimestampDelta = int64((i * 7) % 5) // the max is not last
		}
		return logtest.BatchWith(o, recs...)
	}
	seq := map[int64]int32{}
	for round := range 6 {
		if round%2 == 1 {
			epoch += 1 + int32(round%3) // epochs 0, 1, 1, 4, 4, 6: gaps too
		}
		for codec := range int8(5) {
			mustAppend(t, l, mk(logtest.Options{Compression: codec}, 3+int(codec)), epoch)
			step()
		}
		pid := int64(100 + round%2)
		mustAppend(t, l, mk(logtest.Options{ProducerID: pid, BaseSequence: seq[pid]}, 4), epoch)
		seq[pid] += 4
		step()
		tpid := int64(200)
		mustAppend(t, l, mk(logtest.Options{ProducerID: tpid, Transactional: true, BaseSequence: seq[tpid], Compression: int8(round % 5)}, 2), epoch)
		seq[tpid] += 2
		step()
		mustAppend(t, l, mk(logtest.Options{Compression: 1}, 6), epoch)
		step()
		if _, err := l.AppendMarker(Marker{ProducerID: tpid, Commit: round%2 == 0, CoordinatorEpoch: int32(round)}, epoch); err != nil {
			t.Fatal(err)
		}
		step()
		e.clk.Advance(1500 * time.Millisecond)
	}
}

// replicate copies what follower lacks from leader the way a fetcher does:
// reads of up to maxBytes from the follower's log end, appended as they are.
func replicate(t *testing.T, leader, follower *Log, maxBytes int) {
	t.Helper()
	for follower.EndOffset() < leader.EndOffset() {
		b, err := leader.Read(nil, follower.EndOffset(), maxBytes, leader.EndOffset(), true)
		if err != nil {
			t.Fatalf("leader read at %d: %v", follower.EndOffset(), err)
		}
		before := follower.EndOffset()
		if _, err := follower.AppendReplicated(b); err != nil {
			t.Fatalf("append replicated at %d: %v", before, err)
		}
		if follower.EndOffset() <= before {
			t.Fatalf("follower stuck at %d", before)
		}
	}
}

// dirFiles reads every file of dir.
func dirFiles(t *testing.T, fsys vfs.FS, dir string) map[string][]byte {
	t.Helper()
	names, err := fsys.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, n := range names {
		f, err := fsys.Open(dir + "/" + n)
		if err != nil {
			t.Fatal(err)
		}
		size, _ := f.Size()
		b := make([]byte, size)
		if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		_ = f.Close()
		out[n] = b
	}
	return out
}

func sameFiles(t *testing.T, fsys vfs.FS, leaderDir, followerDir string) {
	t.Helper()
	lf, ff := dirFiles(t, fsys, leaderDir), dirFiles(t, fsys, followerDir)
	kinds := map[string]int{}
	for n, b := range lf {
		fb, ok := ff[n]
		switch {
		case !ok:
			t.Errorf("follower lacks %s", n)
		case !bytes.Equal(b, fb):
			t.Errorf("%s differs: leader %d bytes, follower %d bytes", n, len(b), len(fb))
		}
		kinds[n[strings.LastIndexByte(n, '.')+1:]]++
	}
	for n := range ff {
		if _, ok := lf[n]; !ok {
			t.Errorf("follower has %s, the leader has not", n)
		}
	}
	// The workload must have exercised what it claims to.
	for _, k := range []string{"log", "index", "timeindex", "txnindex", "snapshot"} {
		if kinds[k] < 2 {
			t.Errorf("only %d .%s files: the workload did not roll enough", kinds[k], k)
		}
	}
	if _, ok := lf[LeaderEpochCheckpointFile]; !ok {
		t.Errorf("no %s", LeaderEpochCheckpointFile)
	}
}

// TestAppendReplicatedByteIdentical: a follower fed the leader's bytes in
// fetch-sized pieces ends with the leader's files byte for byte: segments,
// offset, time and transaction indexes, producer snapshots and the
// leader-epoch checkpoint, with CreateTime and LogAppendTime, while
// following step by step and catching up in big fetches, and after both
// reopen.
func TestAppendReplicatedByteIdentical(t *testing.T) {
	for _, tc := range []struct {
		name          string
		logAppendTime bool
		maxBytes      int // per fetch
		lag           bool
	}{
		{"follow-each-append", false, 300, false},
		{"catch-up-big-fetches", false, 1 << 20, true},
		{"catch-up-small-fetches", false, 1, true},
		{"log-append-time", true, 2000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.cfg.SegmentBytes = 2048
			e.cfg.IndexIntervalBytes = 300
			e.cfg.LogAppendTime = tc.logAppendTime
			openAt := func(dir string) *Log {
				l, err := Open(e.fs, dir, e.cfg, Options{Logger: testkit.Logger(t, slog.LevelInfo), Now: e.clk.Now})
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			leader, follower := openAt("/data/leader/t-0"), openAt("/data/follower/t-0")
			leaderWorkload(t, e, leader, func() {
				if !tc.lag {
					replicate(t, leader, follower, tc.maxBytes)
				}
			})
			replicate(t, leader, follower, tc.maxBytes)
			if got, want := follower.LeaderEpochs(), leader.LeaderEpochs(); len(got) != len(want) || len(want) < 4 {
				t.Fatalf("follower epochs %v, leader %v", got, want)
			}
			if got, want := follower.Producers(), leader.Producers(); len(got) != len(want) {
				t.Fatalf("follower producers %v, leader %v", got, want)
			}
			if err := leader.Flush(); err != nil {
				t.Fatal(err)
			}
			if err := follower.Flush(); err != nil {
				t.Fatal(err)
			}
			sameFiles(t, e.fs, "/data/leader/t-0", "/data/follower/t-0")
			for _, l := range []*Log{leader, follower} {
				if err := l.Close(); err != nil {
					t.Fatal(err)
				}
			}
			sameFiles(t, e.fs, "/data/leader/t-0", "/data/follower/t-0")
			leader, follower = openAt("/data/leader/t-0"), openAt("/data/follower/t-0")
			if leader.EndOffset() != follower.EndOffset() {
				t.Fatalf("after reopen: leader ends at %d, follower at %d", leader.EndOffset(), follower.EndOffset())
			}
			_ = leader.Close()
			_ = follower.Close()
		})
	}
}

// TestAppendReplicatedRefuses: a request that does not continue the log,
// or holds a batch with a bad CRC or a torn batch, is refused whole.
func TestAppendReplicatedRefuses(t *testing.T) {
	e := newEnv(t)
	l := e.open(0)
	at := func(base int64, epoch int32) []byte {
		b := e.batch(2, 10)
		record.Batch(b).SetBaseOffset(base)
		record.Batch(b).SetPartitionLeaderEpoch(epoch)
		return b
	}
	if _, err := l.AppendReplicated(logtest.Concat(at(0, 3), at(2, 3))); err != nil {
		t.Fatal(err)
	}
	badCRC := at(6, 3)
	badCRC[len(badCRC)-1] ^= 1
	for _, tc := range []struct {
		name  string
		b     []byte
		want  error
		words string
	}{
		{"overlap", at(3, 3), ErrUnexpectedAppendOffset, "starts below the log end offset 4"},
		{"overlap within", logtest.Concat(at(4, 3), at(5, 3)), ErrUnexpectedAppendOffset, "starts below the end of the batch before it 6"},
		{"bad crc after a good batch", logtest.Concat(at(4, 3), badCRC), ErrCorruptMessage, "offset 6"},
		{"torn", at(4, 3)[:70], ErrCorruptMessage, "byte 0"},
	} {
		_, err := l.AppendReplicated(tc.b)
		if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.words) {
			t.Errorf("%s: %v, want %v with %q", tc.name, err, tc.want, tc.words)
		}
		if l.EndOffset() != 4 || len(l.LeaderEpochs()) != 1 {
			t.Fatalf("%s: log end %d, epochs %v after a refused request", tc.name, l.EndOffset(), l.LeaderEpochs())
		}
	}
	// A gap is a compacted leader's log: accepted, as Kafka accepts it.
	r, err := l.AppendReplicated(at(10, 5))
	if err != nil || r.FirstOffset != 10 || r.LastOffset != 11 || l.EndOffset() != 12 {
		t.Fatalf("append past a gap: %+v, %v, end %d", r, err, l.EndOffset())
	}
	if es := l.LeaderEpochs(); len(es) != 2 || es[1] != (EpochEntry{Epoch: 5, StartOffset: 10}) {
		t.Fatalf("epochs %v", es)
	}
	if _, err := l.AppendReplicated(nil); err != nil || l.EndOffset() != 12 {
		t.Fatalf("empty append: %v, end %d", err, l.EndOffset())
	}
	// Gaps wider than a segment's 4-byte relative offsets: the follower
	// rolls at the batch (or replaces its empty active segment), as
	// Kafka bases the new segment at the appended batch.
	const far = 12 + 3<<30
	if _, err := l.AppendReplicated(logtest.Concat(at(far, 5), at(2*far, 5))); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l = e.open(0)
	segs := l.Segments()
	if l.EndOffset() != 2*far+2 || len(segs) != 3 || segs[1].BaseOffset != far || segs[2].BaseOffset != 2*far {
		t.Fatalf("after far gaps and a reopen: end %d, segments %+v", l.EndOffset(), segs)
	}
	if _, err := l.Read(nil, far, 1<<20, l.EndOffset(), true); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	e2 := newEnv(t)
	l = e2.open(0)
	if _, err := l.AppendReplicated(at(far, 1)); err != nil {
		t.Fatal(err)
	}
	if segs := l.Segments(); len(segs) != 1 || segs[0].BaseOffset != far || l.StartOffset() != far {
		t.Fatalf("empty log after a far gap: start %d, segments %+v", l.StartOffset(), segs)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRecoveredFilesMatch: a log rebuilt by recovery after a crash (every
// segment re-scanned) ends with the files of one that never crashed, so
// replicas stay byte-identical across kills. Time index entries name the
// last offset of the batch holding the maximum, on append and on
// recovery alike, as Kafka's LogSegment does.
func TestRecoveredFilesMatch(t *testing.T) {
	for _, lat := range []bool{false, true} {
		e := newEnv(t)
		e.cfg.SegmentBytes = 2048
		e.cfg.IndexIntervalBytes = 300
		e.cfg.LogAppendTime = lat
		l := e.open(0)
		leaderWorkload(t, e, l, func() {})
		if err := l.Flush(); err != nil {
			t.Fatal(err)
		}
		crashed := e.fs.CrashClone()
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		want := dirFiles(t, e.fs, "/data/t-0")
		// Records run a few ms ahead of the clock, and recovery takes a
		// producer's future timestamp as now (Log.ExpireProducers).
		e.clk.Advance(time.Second)
		e.fs = crashed
		l = e.open(0)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		got := dirFiles(t, e.fs, "/data/t-0")
		for n, b := range want {
			if !bytes.Equal(b, got[n]) {
				t.Errorf("log-append-time=%t: %s differs after recovery: %x, want %x", lat, n, got[n], b)
			}
		}
		if len(got) != len(want) {
			t.Errorf("log-append-time=%t: %d files after recovery, want %d", lat, len(got), len(want))
		}
	}
}
