package log

import (
	"fmt"
	"path"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/klogdev/klog/store/log/logtest"
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
			l, err = Open(fsys, dir, cfg, Options{Logger: testLogger(t), Now: clk.Now, RecoveryPoint: rp})
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
				b := logtest.BatchWith(logtest.Options{BaseTimestamp: clk.Ms()}, logtest.Values(int(intArg("records", 1)), int(intArg("size", 10)))...)
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
