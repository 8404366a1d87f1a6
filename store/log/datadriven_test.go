package log

import (
	"fmt"
	"log/slog"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/log/record"
	"github.com/klogdev/klog/store/vfs"
)

// TestDataDriven runs the scripts in testdata/. Commands:
//
//	open [segment-bytes=N] [index-interval=N] [segment-ms=N] [recovery-point=N]
//	append [records=N] [size=N] [epoch=N]     prints the assigned offsets
//	advance ms=N                              moves the clock
//	maybe-roll
//	flush
//	truncate offset=N
//	set-start offset=N
//	retention [ms=N] [bytes=N]
//	close
//	crash [recovery-point=N]                  drops unsynced data and reopens
//	cut-tail bytes=N                          chops bytes off the active .log
//	corrupt-tail                              flips the last byte of the active .log
//	segments                                  prints the segment table
//	read offset=N [max-bytes=N] [bound=N] [min-one]
//	epochs
//	produce pid=N epoch=N seq=N [records=N] [txn]   an idempotent batch
//	produce-multi pid=N epoch=N seq=N,N,...        several batches in one append
//	marker pid=N epoch=N coord=N (commit|abort)
//	replicate base=N epoch=N [records=N] [pid=N seq=N [txn]] [bad-crc]
//	                                          AppendReplicated of a batch as a leader wrote it
//	replicate-marker base=N epoch=N pid=N coord=N (commit|abort)
//	producers                                 prints producer state
//	unstable                                  prints FirstUnstableOffset
//	aborted from=N to=N                       prints AbortedTransactions
//	expire ms=N                               ExpireProducers(now, N ms)
//	snapshots                                 lists the .snapshot files
//	reopen                                    clean close and open
//
// Run with -rewrite to regenerate expectations.
func TestDataDriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, p string) {
		var (
			fsys = vfs.NewMem()
			clk  = newClock()
			cfg  = DefaultConfig()
			l    *Log
		)
		const dir = "/data/t-0"
		open := func(rp int64) string {
			var err error
			l, err = Open(fsys, dir, cfg, Options{Logger: testkit.Logger(t, slog.LevelDebug), Now: clk.Now, RecoveryPoint: rp})
			if err != nil {
				return "error: " + err.Error()
			}
			return describe(l)
		}
		datadriven.RunTest(t, p, func(t *testing.T, d *datadriven.TestData) string {
			intArg := func(key string, def int64) int64 {
				if !d.HasArg(key) {
					return def
				}
				var v int64
				d.ScanArgs(t, key, &v)
				return v
			}
			errOr := func(err error, s string) string {
				if err != nil {
					return "error: " + err.Error()
				}
				return s
			}
			switch d.Cmd {
			case "open":
				cfg.SegmentBytes = intArg("segment-bytes", cfg.SegmentBytes)
				cfg.IndexIntervalBytes = int32(intArg("index-interval", int64(cfg.IndexIntervalBytes)))
				cfg.SegmentMs = intArg("segment-ms", cfg.SegmentMs)
				return open(intArg("recovery-point", 0))
			case "append":
				b := logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Values(int(intArg("records", 1)), int(intArg("size", 10)))...)
				r, err := l.Append(b, int32(intArg("epoch", 0)))
				return errOr(err, fmt.Sprintf("offsets %d-%d, %d bytes\n", r.FirstOffset, r.LastOffset, r.Bytes))
			case "advance":
				clk.Advance(time.Duration(intArg("ms", 0)) * time.Millisecond)
				return ""
			case "maybe-roll":
				return errOr(l.MaybeRoll(clk.Now()), describe(l))
			case "flush":
				err := l.Flush()
				return errOr(err, fmt.Sprintf("recovery point %d\n", l.RecoveryPoint()))
			case "truncate":
				return errOr(l.Truncate(intArg("offset", 0)), describe(l))
			case "set-start":
				return errOr(l.SetStartOffset(intArg("offset", 0)), describe(l))
			case "retention":
				cfg.RetentionMs = intArg("ms", -1)
				cfg.RetentionBytes = intArg("bytes", -1)
				l.SetConfig(cfg)
				n, err := l.ApplyRetention(clk.Now())
				return errOr(err, fmt.Sprintf("deleted %d\n%s", n, describe(l)))
			case "close":
				return errOr(l.Close(), "")
			case "crash":
				fsys = fsys.CrashClone()
				_ = l.Close()
				return open(intArg("recovery-point", 0))
			case "cut-tail", "corrupt-tail":
				segs := l.Segments()
				name := path.Join(dir, segmentName(segs[len(segs)-1].BaseOffset, ".log"))
				f, err := fsys.Open(name)
				if err != nil {
					return "error: " + err.Error()
				}
				defer f.Close()
				size, _ := f.Size()
				if d.Cmd == "cut-tail" {
					err = f.Truncate(size - intArg("bytes", 1))
				} else {
					last := make([]byte, 1)
					_, _ = f.ReadAt(last, size-1)
					_, err = f.WriteAt([]byte{last[0] ^ 1}, size-1)
				}
				if err == nil {
					err = f.Sync()
				}
				return errOr(err, "")
			case "segments":
				return describe(l)
			case "read":
				b, err := l.Read(nil, intArg("offset", 0), int(intArg("max-bytes", 1<<20)), intArg("bound", l.EndOffset()), d.HasArg("min-one"))
				if err != nil {
					return "error: " + err.Error()
				}
				var sb strings.Builder
				for _, bt := range logtest.Split(b) {
					fmt.Fprintf(&sb, "batch %d-%d epoch %d\n", logtest.BaseOffset(bt), logtest.BaseOffset(bt)+int64(logtest.RecordCount(bt))-1, logtest.LeaderEpoch(bt))
				}
				if sb.Len() == 0 {
					return "empty\n"
				}
				return sb.String()
			case "produce":
				var pid, epoch, seq int64
				d.ScanArgs(t, "pid", &pid)
				d.ScanArgs(t, "epoch", &epoch)
				d.ScanArgs(t, "seq", &seq)
				b := logtest.ProducerBatch(clk.UnixMilli(), pid, int16(epoch), int32(seq), int(intArg("records", 1)), d.HasArg("txn"))
				return appendResult(l.Append(b, 0))
			case "produce-multi":
				var pid, epoch int64
				var seqs string
				d.ScanArgs(t, "pid", &pid)
				d.ScanArgs(t, "epoch", &epoch)
				d.ScanArgs(t, "seq", &seqs)
				var bs [][]byte
				for _, sq := range strings.Split(seqs, ",") {
					n, err := strconv.Atoi(sq)
					if err != nil {
						t.Fatal(err)
					}
					bs = append(bs, logtest.ProducerBatch(clk.UnixMilli(), pid, int16(epoch), int32(n), 1, d.HasArg("txn")))
				}
				return appendResult(l.Append(logtest.Concat(bs...), 0))
			case "marker":
				var pid, epoch, coord int64
				d.ScanArgs(t, "pid", &pid)
				d.ScanArgs(t, "epoch", &epoch)
				d.ScanArgs(t, "coord", &coord)
				off, err := l.AppendMarker(Marker{ProducerID: pid, ProducerEpoch: int16(epoch), CoordinatorEpoch: int32(coord), Commit: d.HasArg("commit")}, 0)
				return errOr(err, fmt.Sprintf("marker at %d\n", off))
			case "replicate", "replicate-marker":
				var b []byte
				switch {
				case d.Cmd == "replicate-marker":
					b = record.TxnMarker{ProducerID: intArg("pid", 0), CoordinatorEpoch: int32(intArg("coord", 0)), Commit: d.HasArg("commit")}.AppendBatch(nil, clk.UnixMilli())
				case d.HasArg("pid"):
					b = logtest.ProducerBatch(clk.UnixMilli(), intArg("pid", 0), 0, int32(intArg("seq", 0)), int(intArg("records", 1)), d.HasArg("txn"))
				default:
					b = logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Values(int(intArg("records", 1)), 10)...)
				}
				rb := record.Batch(b)
				rb.SetBaseOffset(intArg("base", 0))
				rb.SetPartitionLeaderEpoch(int32(intArg("epoch", 0)))
				rb.Seal()
				if d.HasArg("bad-crc") {
					b[len(b)-1] ^= 1
				}
				r, err := l.AppendReplicated(b)
				return errOr(err, fmt.Sprintf("offsets %d-%d\n", r.FirstOffset, r.LastOffset))
			case "producers":
				var sb strings.Builder
				for _, p := range l.Producers() {
					fmt.Fprintf(&sb, "producer %d epoch=%d last-seq=%d coord=%d txn-start=%d ts=%+d\n", p.ProducerID, p.ProducerEpoch, p.LastSequence, p.CoordinatorEpoch, p.CurrentTxnStartOffset, p.LastTimestamp-newClock().UnixMilli())
				}
				fmt.Fprintf(&sb, "first unstable %d\n", l.FirstUnstableOffset())
				return sb.String()
			case "unstable":
				return fmt.Sprintf("first unstable %d\n", l.FirstUnstableOffset())
			case "aborted":
				var sb strings.Builder
				for _, a := range l.AbortedTransactions(intArg("from", 0), intArg("to", l.EndOffset())) {
					fmt.Fprintf(&sb, "aborted producer %d [%d, %d] lso %d\n", a.ProducerID, a.FirstOffset, a.LastOffset, a.LastStableOffset)
				}
				if sb.Len() == 0 {
					return "none\n"
				}
				return sb.String()
			case "expire":
				n := l.ExpireProducers(clk.Now(), time.Duration(intArg("ms", 0))*time.Millisecond)
				return fmt.Sprintf("expired %d\n", n)
			case "snapshots":
				names, err := fsys.List(dir)
				if err != nil {
					return "error: " + err.Error()
				}
				var sb strings.Builder
				for _, n := range names {
					if strings.HasSuffix(n, ".snapshot") {
						fmt.Fprintln(&sb, n)
					}
				}
				if sb.Len() == 0 {
					return "none\n"
				}
				return sb.String()
			case "reopen":
				if err := l.Close(); err != nil {
					return "error: " + err.Error()
				}
				return open(intArg("recovery-point", 0))
			case "epochs":
				var sb strings.Builder
				for _, e := range l.LeaderEpochs() {
					fmt.Fprintf(&sb, "epoch %d from %d\n", e.Epoch, e.StartOffset)
				}
				return sb.String()
			default:
				t.Fatalf("unknown command %q", d.Cmd)
				return ""
			}
		})
		if l != nil {
			_ = l.Close()
		}
	})
}

func appendResult(r AppendResult, err error) string {
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	dup := ""
	if r.Duplicate {
		dup = " duplicate"
	}
	return fmt.Sprintf("offsets %d-%d%s\n", r.FirstOffset, r.LastOffset, dup)
}

func describe(l *Log) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "log [%d, %d)\n", l.StartOffset(), l.EndOffset())
	for _, s := range l.Segments() {
		act := ""
		if s.Active {
			act = " active"
		}
		fmt.Fprintf(&sb, "  segment %d-%d size=%d index=%d timeindex=%d%s\n", s.BaseOffset, s.NextOffset, s.Size, s.IndexEntries, s.TimeIndexEntries, act)
	}
	return sb.String()
}
