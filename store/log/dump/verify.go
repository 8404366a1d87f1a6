package dump

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"sort"

	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/log/record"
)

// Verify checks the file at path and returns every problem found in it;
// the error is for a file that cannot be read at all. What is checked, by
// kind:
//
//   - .log: each batch's header (magic 2, a length inside the file, a
//     record count within its offset range), its CRC, its records
//     (decompressed: they parse, fill the batch, offset deltas increase
//     within the batch's range, no timestamp above a CreateTime batch's
//     max timestamp, a control batch's marker decodes), offsets strictly
//     increasing from the segment's base; then the .index, .timeindex
//     and .txnindex beside it, when present, as below.
//   - .index: entries strictly increasing, each at the position of a
//     batch of the .log beside it whose last offset it names.
//   - .timeindex: timestamps strictly increasing and offsets not
//     decreasing, each offset the last offset of a batch whose max
//     timestamp is the entry's.
//   - .txnindex: version 0, entries ordered, each abort marker inside the
//     segment and an ABORT control batch of its producer, the last
//     stable offset not past the marker.
//   - .snapshot, checkpoints, partition.metadata: they decode as the log
//     decodes them (a snapshot's CRC among that).
func Verify(path string) ([]Problem, error) {
	switch KindOf(path) {
	case KindLog:
		rs, err := verifySegment(path)
		if err != nil {
			return nil, err
		}
		var probs []Problem
		for _, r := range rs {
			probs = append(probs, r.Problems...)
		}
		return probs, nil
	case KindOffsetIndex, KindTimeIndex, KindTxnIndex:
		sc, _, err := scanSegment(sibling(path, log.LogFileExt), false)
		if errors.Is(err, fs.ErrNotExist) {
			sc, err = nil, nil
		}
		if err != nil {
			return nil, err
		}
		return verifyIndex(path, sc)
	case KindSnapshot:
		return decodeProblem(ReadSnapshot(path))
	case KindLeaderEpochs:
		return decodeProblem(ReadLeaderEpochs(path))
	case KindOffsetCheckpoint:
		return decodeProblem(ReadOffsetCheckpoint(path))
	case KindPartitionMetadata:
		return decodeProblem(ReadPartitionMetadata(path))
	}
	return nil, fmt.Errorf("%s: %w", path, ErrUnknownKind)
}

// FileProblems are the problems Verify found in one file.
type FileProblems struct {
	File     string
	Problems []Problem
}

// VerifyFiles verifies each file of paths once, calling fn with the
// problems of each (err: the file could not be read, fn decides whether
// to go on): a .log with the indexes beside it, reported right after it
// whether named in paths or not, and an index file on its own only when
// its .log is not among paths.
func VerifyFiles(paths []string, fn func(file string, probs []Problem, err error) error) error {
	logs := map[string]bool{}
	for _, p := range paths {
		if KindOf(p) == KindLog {
			logs[p] = true
		}
	}
	for _, p := range paths {
		switch KindOf(p) {
		case KindOffsetIndex, KindTimeIndex, KindTxnIndex:
			if logs[sibling(p, log.LogFileExt)] {
				continue // verified with its .log
			}
		case KindLog:
			rs, err := verifySegment(p)
			if err != nil {
				if err := fn(p, nil, err); err != nil {
					return err
				}
				continue
			}
			for _, r := range rs {
				if err := fn(r.File, r.Problems, nil); err != nil {
					return err
				}
			}
			continue
		}
		probs, err := Verify(p)
		if err := fn(p, probs, err); err != nil {
			return err
		}
	}
	return nil
}

// verifySegment verifies a .log and the indexes beside it: the problems
// of the .log first, then of each index file there is.
func verifySegment(path string) ([]FileProblems, error) {
	sc, probs, err := scanSegment(path, true)
	if err != nil {
		return nil, err
	}
	out := []FileProblems{{File: path, Problems: probs}}
	for _, ext := range []string{log.IndexFileExt, log.TimeIndexFileExt, log.TxnIndexFileExt} {
		idx := sibling(path, ext)
		p, err := verifyIndex(idx, sc)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, FileProblems{File: idx, Problems: p})
	}
	return out, nil
}

// decodeProblem turns a decoder's failure into the file's problem; a file
// that is missing or unreadable stays an error.
func decodeProblem[T any](_ T, err error) ([]Problem, error) {
	var fe *FileError
	if errors.As(err, &fe) {
		return []Problem{fileProblem(fe.Path, "%s", fe.Reason)}, nil
	}
	return nil, err
}

// entryProblems returns the problems of an index file's entries and the
// function that adds one.
func entryProblems(path string) (*[]Problem, func(entry int, format string, args ...any)) {
	probs := new([]Problem)
	return probs, func(entry int, format string, args ...any) {
		*probs = append(*probs, entryProblem(path, entry, format, args...))
	}
}

// batchRef is what the index checks need of one batch.
type batchRef struct {
	pos, last, maxTs int64
}

// segmentScan is a segment walked by scanSegment.
type segmentScan struct {
	path    string
	base    int64
	size    int64
	end     int64 // offset after the last batch, base when none
	batches []batchRef
	aborts  map[int64]int64 // abort marker offset -> producer id
	// complete is false when the walk stopped before the end of the file.
	complete bool
	noLog    bool // the .log is missing: indexes are checked on their own
}

// scanSegment walks the .log file at path; with check it also returns the
// problems of its batches.
func scanSegment(path string, check bool) (*segmentScan, []Problem, error) {
	s, err := OpenSegment(path)
	if err != nil {
		return nil, nil, err
	}
	defer s.Close()
	sc := &segmentScan{path: path, base: s.BaseOffset(), size: s.Size(), end: s.BaseOffset(), aborts: map[int64]int64{}}
	var probs []Problem
	var dec record.Decompressor
	defer dec.Close()
	next := s.BaseOffset()
	for s.Next() {
		b, raw := s.Batch(), s.Raw()
		if check {
			probs = append(probs, checkBatch(path, &b, raw, next, s.BaseOffset(), &dec)...)
		}
		if b.Marker != nil && b.Marker.Type == "ABORT" {
			sc.aborts[b.LastOffset] = b.ProducerID
		}
		sc.batches = append(sc.batches, batchRef{pos: b.Position, last: b.LastOffset, maxTs: b.MaxTimestamp})
		next = max(next, b.LastOffset+1)
	}
	if err := s.Err(); err != nil {
		return nil, nil, err
	}
	sc.end = next
	sc.complete = s.Stopped() == nil
	if p := s.Stopped(); p != nil && check {
		probs = append(probs, *p)
	}
	return sc, probs, nil
}

// checkBatch returns the problems of one batch; next is the lowest base
// offset it may have.
func checkBatch(path string, b *Batch, raw record.Batch, next, segBase int64, dec *record.Decompressor) []Problem {
	var probs []Problem
	add := func(format string, args ...any) {
		probs = append(probs, batchProblem(path, b.BaseOffset, b.Position, format, args...))
	}
	if err := raw.CheckCRC(); err != nil {
		add("CRC mismatch: %s", reason(err))
	}
	switch {
	case b.BaseOffset < next && next == segBase:
		add("base offset %d below the segment's base offset %d", b.BaseOffset, segBase)
	case b.BaseOffset < next:
		add("base offset %d not above the previous batch's last offset %d", b.BaseOffset, next-1)
	}
	if b.LastOffset-segBase > math.MaxInt32 {
		add("last offset %d too far from the segment's base offset %d for an index entry", b.LastOffset, segBase)
	}
	if b.Count < 0 || int64(b.Count) > b.LastOffset-b.BaseOffset+1 {
		add("record count %d does not fit offsets %d to %d", b.Count, b.BaseOffset, b.LastOffset)
	}
	if !raw.Attributes().Compression().Valid() {
		add("unknown compression codec %d", int8(raw.Attributes().Compression()))
	}
	if b.ProducerID < 0 && b.Transactional {
		add("transactional batch without a producer id")
	}
	if len(probs) > 0 {
		return probs // the records of a damaged batch say nothing more
	}
	if raw.Attributes().Control() {
		if _, _, err := raw.TxnMarker(); err != nil {
			add("control batch: %s", reason(err))
		}
		return probs
	}
	prev := int64(-1)
	err := Records(raw, dec, func(r *Record) error {
		delta := r.Offset - b.BaseOffset
		if delta <= prev || r.Offset > b.LastOffset {
			return fmt.Errorf("record offset %d out of order or outside the batch (offsets %d to %d)", r.Offset, b.BaseOffset, b.LastOffset)
		}
		prev = delta
		if !r.LogAppendTime && r.Timestamp > b.MaxTimestamp {
			return fmt.Errorf("record at offset %d has timestamp %d, above the batch's max timestamp %d", r.Offset, r.Timestamp, b.MaxTimestamp)
		}
		return nil
	})
	if err != nil {
		add("records: %s", err)
	}
	return probs
}

// verifyIndex checks an index file against the segment sc (nil when its
// .log is missing: then only the entries themselves are checked).
func verifyIndex(path string, sc *segmentScan) ([]Problem, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	if sc == nil {
		base, _ := segmentBase(path)
		sc = &segmentScan{base: base, noLog: true}
	}
	switch KindOf(path) {
	case KindOffsetIndex:
		return verifyOffsetIndex(path, sc)
	case KindTimeIndex:
		return verifyTimeIndex(path, sc)
	case KindTxnIndex:
		return verifyTxnIndex(path, sc)
	}
	return nil, fmt.Errorf("%s: %w", path, ErrUnknownKind)
}

func verifyOffsetIndex(path string, sc *segmentScan) ([]Problem, error) {
	es, err := ReadOffsetIndex(path)
	if err != nil {
		return decodeProblem(es, err)
	}
	probs, add := entryProblems(path)
	for i, e := range es {
		if i > 0 && (e.Offset <= es[i-1].Offset || e.Position <= es[i-1].Position) {
			add(i, "offset %d at position %d does not follow offset %d at position %d", e.Offset, e.Position, es[i-1].Offset, es[i-1].Position)
			continue
		}
		if sc.noLog {
			continue // no log to check against
		}
		if e.Position >= sc.size {
			add(i, "offset %d: position %d is past the end of the log (%d bytes)", e.Offset, e.Position, sc.size)
			continue
		}
		j := sort.Search(len(sc.batches), func(j int) bool { return sc.batches[j].pos >= e.Position })
		switch {
		case j == len(sc.batches) && !sc.complete:
			// Past where the walk of a damaged log stopped: the log's
			// problem, not the index's.
		case j == len(sc.batches) || sc.batches[j].pos != e.Position:
			add(i, "offset %d: position %d is not the start of a batch", e.Offset, e.Position)
		case sc.batches[j].last != e.Offset:
			add(i, "offset %d points at position %d, the batch ending at offset %d", e.Offset, e.Position, sc.batches[j].last)
		}
	}
	return *probs, nil
}

func verifyTimeIndex(path string, sc *segmentScan) ([]Problem, error) {
	es, err := ReadTimeIndex(path)
	if err != nil {
		return decodeProblem(es, err)
	}
	probs, add := entryProblems(path)
	for i, e := range es {
		if i > 0 && (e.Timestamp <= es[i-1].Timestamp || e.Offset < es[i-1].Offset) {
			add(i, "timestamp %d at offset %d does not follow timestamp %d at offset %d", e.Timestamp, e.Offset, es[i-1].Timestamp, es[i-1].Offset)
			continue
		}
		if sc.noLog {
			continue
		}
		j := sort.Search(len(sc.batches), func(j int) bool { return sc.batches[j].last >= e.Offset })
		switch {
		case j == len(sc.batches) && !sc.complete:
		case j == len(sc.batches):
			add(i, "timestamp %d: offset %d is past the last batch of the log", e.Timestamp, e.Offset)
		case sc.batches[j].last != e.Offset:
			add(i, "timestamp %d: offset %d is not the last offset of a batch", e.Timestamp, e.Offset)
		case sc.batches[j].maxTs != e.Timestamp:
			add(i, "timestamp %d at offset %d, but the batch ending there has max timestamp %d", e.Timestamp, e.Offset, sc.batches[j].maxTs)
		}
	}
	return *probs, nil
}

func verifyTxnIndex(path string, sc *segmentScan) ([]Problem, error) {
	es, err := ReadTxnIndex(path)
	if err != nil {
		return decodeProblem(es, err)
	}
	probs, add := entryProblems(path)
	for i, e := range es {
		if i > 0 && e.LastOffset <= es[i-1].LastOffset {
			add(i, "abort marker at offset %d does not follow the one at offset %d", e.LastOffset, es[i-1].LastOffset)
			continue
		}
		if e.LastStableOffset > e.LastOffset+1 {
			add(i, "last stable offset %d is past the abort marker at offset %d", e.LastStableOffset, e.LastOffset)
		}
		if sc.noLog {
			continue
		}
		if e.LastOffset < sc.base || e.LastOffset >= sc.end {
			if sc.complete || e.LastOffset < sc.base {
				add(i, "abort marker offset %d outside the segment's offsets %d to %d", e.LastOffset, sc.base, sc.end-1)
			}
			continue
		}
		switch pid, ok := sc.aborts[e.LastOffset]; {
		case !ok:
			add(i, "no abort marker at offset %d", e.LastOffset)
		case pid != e.ProducerID:
			add(i, "the abort marker at offset %d is producer %d's, not producer %d's", e.LastOffset, pid, e.ProducerID)
		}
	}
	return *probs, nil
}
