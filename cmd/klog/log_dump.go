package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/recordjson"
	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/log/dump"
	"github.com/klogdev/klog/store/log/record"
)

type logDumpOptions struct {
	printData bool
	verify    bool
	dataDir   string
}

func newLogDumpCmd(g *globals) *cobra.Command {
	var o logDumpOptions
	cmd := &cobra.Command{
		Use:   "dump FILE|DIR|TOPIC/PARTITION...",
		Short: "Show or verify segment, index, snapshot and checkpoint files",
		Long: `Show what a partition's files hold. A DIR stands for every file below
that klog log reads (a partition directory, or a data directory with all
its partitions), TOPIC/PARTITION for the partition's directory in the data
directory --data-dir (default klog up's). Each file is told by its name:

  .log                    every batch: base and last offset, record count,
                          position, size, CRC and whether it matches, magic,
                          codec, timestamp type, transactional and control
                          flags (and a control batch's COMMIT or ABORT marker
                          with its coordinator epoch), producer id, epoch and
                          base sequence, partition leader epoch, base and max
                          timestamp
  .index                  offset -> position entries
  .timeindex              timestamp -> offset entries
  .txnindex               aborted transactions
  .snapshot               producer state entries
  leader-epoch-checkpoint epoch -> start offset entries
  partition.metadata      the topic ID
  *-checkpoint            topic, partition, offset entries (recovery point,
                          log start, high watermark)

--print-data also prints each batch's records, one JSON object per line, in
the schema of klog consume -f json (docs/records-json.md); control batches
show their marker instead.

--verify checks instead of showing: CRCs, batch headers, records, offsets
strictly increasing, and the .index, .timeindex and .txnindex beside a
.log against it (each entry at a batch boundary naming its offsets). Every
problem is reported on stderr with its file, its batch (base offset and
position) or index entry, and what is wrong; the exit status is 1 if any
file has one.

-f json writes one JSON object per line: batches and entries carry a
"type" ("batch", "index_entry", "time_index_entry", "aborted_txn",
"producer", "leader_epoch", "checkpoint_entry", "partition_metadata",
"problem", "verified") and their "file"; records have consume's schema.`,
		Example: `  klog log dump ~/.local/share/klog/default/node-0/orders-0/00000000000000000000.log
  klog log dump --print-data -f json orders-0/00000000000000000000.log
  klog log dump --verify orders-0/*.log
  klog log dump --verify orders/0`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.printData && o.verify {
				return usagef("--print-data and --verify: --verify shows no data")
			}
			paths, err := logDumpPaths(g, o.dataDir, args, cmd.ErrOrStderr())
			if err != nil {
				return err
			}
			return runLogDump(g, o, paths, cmd.OutOrStdout(), cmd.ErrOrStderr(), newProgress(cmd.OutOrStdout(), cmd.ErrOrStderr()))
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.printData, "print-data", false, "also print the records of each batch as JSON lines")
	f.BoolVar(&o.verify, "verify", false, "check the files instead of showing them; exit 1 on any problem")
	addDataDirFlag(cmd, &o.dataDir)
	addLogFormatFlag(g, cmd)
	return cmd
}

// logDumpPaths expands the arguments of log dump into the files to read.
// As Kafka's DumpLogSegments, files of other kinds named are skipped (a
// shell glob over a partition directory names quorum-state, *.deleted).
func logDumpPaths(g *globals, dataDir string, args []string, diag io.Writer) ([]string, error) {
	var paths []string
	for _, a := range args {
		if _, err := os.Stat(a); err != nil && dump.KindOf(a) != dump.KindUnknown {
			paths = append(paths, a) // its dump reports the error
			continue
		}
		dirs, isFile, err := logArgDirs(g, dataDir, a)
		switch {
		case isFile && dump.KindOf(a) == dump.KindUnknown:
			fmt.Fprintf(diag, "klog: %s: %v; skipped\n", a, dump.ErrUnknownKind)
		case isFile:
			paths = append(paths, a)
		case err != nil:
			return nil, err
		}
		for _, d := range dirs {
			files, err := dump.Files(d)
			if err != nil {
				return nil, err
			}
			paths = append(paths, files...)
		}
	}
	if len(paths) == 0 {
		return nil, usagef("no file to dump: %v", dump.ErrUnknownKind)
	}
	return paths, nil
}

// runLogDump dumps or verifies paths; prog, when not nil, is the progress
// line on diag.
func runLogDump(g *globals, o logDumpOptions, paths []string, out, diag io.Writer, prog *progress) error {
	w := bufio.NewWriterSize(out, 64<<10)
	d := &dumper{g: g, o: o, w: w, prog: prog, failed: failures{diag: diagWriter{prog, diag}}}
	defer prog.clear()
	var err error
	if o.verify {
		err = d.verifyAll(paths)
	} else {
		err = d.dumpAll(paths)
	}
	if ferr := w.Flush(); err == nil && ferr != nil {
		err = fmt.Errorf("write output: %w", ferr)
	}
	return err
}

// dumper writes the dumps of several files.
type dumper struct {
	g      *globals
	o      logDumpOptions
	w      *bufio.Writer
	failed failures
	files  int // dumped so far
	path   string
	pos    int64 // of the batch being dumped
	prog   *progress
	dec    record.Decompressor
	buf    []byte
}

func (d *dumper) json() bool { return d.g.format == formatJSON }

func (d *dumper) verifyAll(paths []string) error {
	problems, files := 0, 0
	err := dump.VerifyFiles(paths, func(file string, probs []dump.Problem, err error) error {
		files++
		d.prog.show("klog: verified %d of %d files, %s", files, len(paths), file)
		if err != nil {
			d.failed.add(err.Error(), "%s", file)
			return nil
		}
		for _, pr := range probs {
			fmt.Fprintf(d.failed.diag, "klog: %s\n", pr)
			if d.json() {
				if err := d.line(struct {
					Type string `json:"type"`
					dump.Problem
				}{"problem", pr}); err != nil {
					return err
				}
			}
		}
		problems += len(probs)
		if len(probs) > 0 {
			d.failed.n++
		}
		if d.json() {
			return d.line(struct {
				Type     string `json:"type"`
				File     string `json:"file"`
				Problems int    `json:"problems"`
			}{"verified", file, len(probs)})
		}
		status := "ok"
		if len(probs) > 0 {
			status = plural(len(probs), "problem")
		}
		_, err = fmt.Fprintf(d.w, "%s: %s\n", file, status)
		return err
	})
	if err != nil {
		return err
	}
	return d.failed.err("%s in %d of %s", plural(problems, "problem"), d.failed.n, plural(files, "file"))
}

func (d *dumper) dumpAll(paths []string) error {
	defer d.dec.Close()
	for i, p := range paths {
		d.prog.show("klog: dumping file %d of %d, %s", i+1, len(paths), p)
		err := d.dumpFile(p)
		var fe *dump.FileError
		switch {
		case errors.As(err, &fe):
			d.failed.add(fe.Reason, "%s", fe.Path)
		case err != nil:
			d.failed.add(err.Error(), "%s", p)
		}
	}
	return d.failed.err("%d of %d files could not be read whole", d.failed.n, len(paths))
}

// line writes v as one JSON line.
func (d *dumper) line(v any) error {
	b, err := marshalLine(v)
	if err != nil {
		return err
	}
	if _, err := d.w.Write(b); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// marshalLine is v as JSON with a final newline, without escaping HTML
// characters (as records are written).
func marshalLine(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode JSON: %w", err)
	}
	return b.Bytes(), nil
}

// header starts a file's text dump.
func (d *dumper) header(path string, kind dump.Kind) {
	if d.files > 0 {
		d.w.WriteString("\n")
	}
	d.files++
	fmt.Fprintf(d.w, "%s (%s)\n", path, kind)
}

// typedLine writes v, a struct, as one JSON line led by "type" and
// "file".
func (d *dumper) typedLine(typ, file string, v any) error {
	head, err := marshalLine(struct {
		Type string `json:"type"`
		File string `json:"file"`
	}{typ, file})
	if err != nil {
		return err
	}
	body, err := marshalLine(v)
	if err != nil {
		return err
	}
	if len(body) > 3 { // not {}\n
		head = append(append(head[:len(head)-2], ','), body[1:]...)
	}
	if _, err := d.w.Write(head); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// dumpFile dumps one file of any kind: a segment through dumpLog, any
// other as a table of its entries, or in JSON mode one line each.
func (d *dumper) dumpFile(path string) error {
	kind := dump.KindOf(path)
	if kind == dump.KindLog {
		return d.dumpLog(path)
	}
	t := newTable(io.Discard) // JSON lines are written as the entries come
	if !d.json() {
		d.header(path, kind)
		t = newTable(d.w)
	}
	if err := d.dumpEntriesOf(path, kind, t); err != nil {
		return err
	}
	if d.json() {
		return nil
	}
	return t.flush()
}

// dumpEntriesOf reads the file at path, of kind, and writes its entries
// to t and, in JSON mode, as lines.
func (d *dumper) dumpEntriesOf(path string, kind dump.Kind, t *table) error {
	var err error
	switch kind {
	case dump.KindOffsetIndex:
		var es []dump.IndexEntry
		if es, err = dump.ReadOffsetIndex(path); err == nil {
			err = dumpEntries(d, t, path, "index_entry", "OFFSET\tPOSITION\n", es, func(e dump.IndexEntry) {
				t.row("%d\t%d\n", e.Offset, e.Position)
			})
		}
	case dump.KindTimeIndex:
		var es []dump.TimeEntry
		if es, err = dump.ReadTimeIndex(path); err == nil {
			err = dumpEntries(d, t, path, "time_index_entry", "TIMESTAMP\tTIME\tOFFSET\n", es, func(e dump.TimeEntry) {
				t.row("%d\t%s\t%d\n", e.Timestamp, millisCell(e.Timestamp), e.Offset)
			})
		}
	case dump.KindTxnIndex:
		var es []dump.AbortedTxn
		if es, err = dump.ReadTxnIndex(path); err == nil {
			err = dumpEntries(d, t, path, "aborted_txn", "PRODUCER\tFIRST_OFFSET\tLAST_OFFSET\tLAST_STABLE_OFFSET\n", es, func(e dump.AbortedTxn) {
				t.row("%d\t%d\t%d\t%d\n", e.ProducerID, e.FirstOffset, e.LastOffset, e.LastStableOffset)
			})
		}
	case dump.KindSnapshot:
		var es []log.SnapshotEntry
		if es, err = dump.ReadSnapshot(path); err == nil {
			err = dumpEntries(d, t, path, "producer", "PRODUCER\tEPOCH\tLAST_SEQUENCE\tLAST_OFFSET\tOFFSET_DELTA\tTIMESTAMP\tCOORDINATOR_EPOCH\tTXN_FIRST_OFFSET\n", es, func(e log.SnapshotEntry) {
				t.row("%d\t%d\t%d\t%s\t%d\t%s\t%d\t%s\n", e.ProducerID, e.ProducerEpoch, e.LastSequence, offsetOrDash(e.LastOffset),
					e.OffsetDelta, millisCell(e.Timestamp), e.CoordinatorEpoch, offsetOrDash(e.CurrentTxnFirstOffset))
			})
		}
	case dump.KindLeaderEpochs:
		var es []dump.EpochEntry
		if es, err = dump.ReadLeaderEpochs(path); err == nil {
			err = dumpEntries(d, t, path, "leader_epoch", "EPOCH\tSTART_OFFSET\n", es, func(e dump.EpochEntry) {
				t.row("%d\t%d\n", e.Epoch, e.StartOffset)
			})
		}
	case dump.KindOffsetCheckpoint:
		var es []dump.CheckpointEntry
		if es, err = dump.ReadOffsetCheckpoint(path); err == nil {
			err = dumpEntries(d, t, path, "checkpoint_entry", "TOPIC\tPARTITION\tOFFSET\n", es, func(e dump.CheckpointEntry) {
				t.row("%s\t%d\t%d\n", e.Topic, e.Partition, e.Offset)
			})
		}
	case dump.KindPartitionMetadata:
		var id string
		if id, err = dump.ReadPartitionMetadata(path); err == nil {
			t.row("TOPIC_ID\n%s\n", id)
			err = d.entryLine("partition_metadata", path, struct {
				TopicID string `json:"topic_id"`
			}{id})
		}
	}
	return err
}

// dumpEntries writes the entries es of the file at path: to t, the head
// row and a row each (by row); in JSON mode, a line each of type typ. It
// returns the error of the last entry's line.
func dumpEntries[E any](d *dumper, t *table, path, typ, head string, es []E, row func(E)) error {
	t.row("%s", head)
	var err error
	for _, e := range es {
		row(e)
		err = d.entryLine(typ, path, e)
	}
	return err
}

// entryLine writes an entry's JSON line in JSON mode.
func (d *dumper) entryLine(typ, path string, v any) error {
	if !d.json() {
		return nil
	}
	return d.typedLine(typ, path, v)
}

// Widths the batch columns start at, so that a dump's rows line up from
// the first.
var batchColumns = []string{"BASE", "LAST", "COUNT", "POSITION", "SIZE", "CRC", "MAGIC", "CODEC", "TIMESTAMP_TYPE", "FLAGS", "PRODUCER", "EPOCH", "SEQUENCES", "LEADER_EPOCH", "BASE_TIME", "MAX_TIME", "MARKER"}

func (d *dumper) dumpLog(path string) error {
	s, err := dump.OpenSegment(path)
	if err != nil {
		return err
	}
	defer s.Close()
	tp, known := dump.PartitionOf(path)
	if !known {
		tp = log.TopicPartition{Partition: -1}
	}
	var t *streamTable
	if !d.json() {
		d.header(path, dump.KindLog)
		digits := len(strconv.FormatInt(s.BaseOffset()+s.Size(), 10))
		pos := len(strconv.FormatInt(s.Size(), 10))
		widths := make([]int, len(batchColumns))
		for i, c := range batchColumns {
			widths[i] = len(c)
		}
		widths[0], widths[1], widths[3], widths[4] = max(widths[0], digits), max(widths[1], digits), max(widths[3], pos), max(widths[4], pos)
		widths[5], widths[7], widths[9] = len("00000000 BAD"), len("snappy"), len("txn,control")
		widths[14], widths[15] = len(millisCell(0)), len(millisCell(0))
		t = newStreamTable(d.w, widths)
		t.row(batchColumns...)
	}
	for s.Next() {
		b := s.Batch()
		d.prog.show("klog: dumping %s: %d%% (offset %d)", path, 100*b.Position/max(s.Size(), 1), b.BaseOffset)
		if d.json() {
			if err := d.typedLine("batch", path, b); err != nil {
				return err
			}
		} else {
			t.row(batchCells(&b)...)
			if t.err != nil {
				return t.err
			}
		}
		if d.o.printData {
			d.path, d.pos = path, b.Position
			if err := d.printRecords(s.Raw(), tp); err != nil {
				return err
			}
		}
	}
	if err := s.Err(); err != nil {
		return err
	}
	if p := s.Stopped(); p != nil {
		return &dump.FileError{Path: path, Reason: p.Detail()}
	}
	return nil
}

func batchCells(b *dump.Batch) []string {
	crc := fmt.Sprintf("%08x ok", b.CRC)
	if !b.CRCValid {
		crc = fmt.Sprintf("%08x BAD", b.CRC)
	}
	flags := "-"
	switch {
	case b.Transactional && b.Control:
		flags = "txn,control"
	case b.Transactional:
		flags = "txn"
	case b.Control:
		flags = "control"
	}
	seq := strconv.Itoa(int(b.BaseSequence))
	if b.LastSequence != b.BaseSequence {
		seq += ".." + strconv.Itoa(int(b.LastSequence))
	}
	marker := "-"
	if b.Marker != nil {
		marker = fmt.Sprintf("%s coordinator_epoch=%d", b.Marker.Type, b.Marker.CoordinatorEpoch)
	}
	return []string{
		strconv.FormatInt(b.BaseOffset, 10), strconv.FormatInt(b.LastOffset, 10), strconv.Itoa(int(b.Count)),
		strconv.FormatInt(b.Position, 10), strconv.Itoa(b.Size), crc, strconv.Itoa(int(b.Magic)),
		b.Compression, b.TimestampType, flags,
		strconv.FormatInt(b.ProducerID, 10), strconv.Itoa(int(b.ProducerEpoch)), seq,
		strconv.Itoa(int(b.PartitionLeaderEpoch)), millisCell(b.BaseTimestamp), millisCell(b.MaxTimestamp), marker,
	}
}

// printRecords writes the records of a batch as JSON lines in consume's
// schema. A batch whose records do not read is reported, and the dump
// goes on.
func (d *dumper) printRecords(raw record.Batch, tp log.TopicPartition) error {
	var werr error
	err := dump.Records(raw, &d.dec, func(r *dump.Record) error {
		kr := kgo.Record{
			Topic:     tp.Topic,
			Partition: tp.Partition,
			Offset:    r.Offset,
			Timestamp: time.UnixMilli(r.Timestamp),
			Key:       r.Key,
			Value:     r.Value,
			Headers:   make([]kgo.RecordHeader, len(r.Headers)),
		}
		if r.LogAppendTime {
			kr.Attrs = kgo.NewRecordAttrs(kgo.RecordAttrsOpts{TimestampType: 1})
		}
		for i, h := range r.Headers {
			kr.Headers[i] = kgo.RecordHeader{Key: h.Key, Value: h.Value}
		}
		if d.buf, werr = recordjson.Append(d.buf[:0], &kr); werr != nil {
			return werr
		}
		if _, werr = d.w.Write(d.buf); werr != nil {
			werr = fmt.Errorf("write output: %w", werr)
		}
		return werr
	})
	if werr != nil {
		return werr
	}
	if err != nil {
		d.failed.add(err.Error(), "%s: batch at offset %d (position %d)", d.path, raw.BaseOffset(), d.pos)
	}
	return nil
}
