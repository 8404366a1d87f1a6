package dump

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/log/record"
)

// Batch is what a dump shows of one record batch of a .log file.
type Batch struct {
	BaseOffset    int64  `json:"base_offset"`
	LastOffset    int64  `json:"last_offset"`
	Count         int32  `json:"count"`
	Position      int64  `json:"position"`
	Size          int    `json:"size"`
	CRC           uint32 `json:"crc"`
	CRCValid      bool   `json:"crc_valid"`
	Magic         int8   `json:"magic"`
	Attributes    uint16 `json:"attributes"`
	Compression   string `json:"compression"`
	TimestampType string `json:"timestamp_type"` // "create" or "log_append"
	Transactional bool   `json:"transactional"`
	Control       bool   `json:"control"`
	// Marker is the transaction marker of a control batch that holds one.
	Marker               *Marker `json:"marker,omitempty"`
	ProducerID           int64   `json:"producer_id"`
	ProducerEpoch        int16   `json:"producer_epoch"`
	BaseSequence         int32   `json:"base_sequence"`
	LastSequence         int32   `json:"last_sequence"`
	PartitionLeaderEpoch int32   `json:"partition_leader_epoch"`
	BaseTimestamp        int64   `json:"base_timestamp"`
	MaxTimestamp         int64   `json:"max_timestamp"`
}

// Marker is the end of a transaction a control batch records.
type Marker struct {
	Type             string `json:"type"` // "COMMIT" or "ABORT"
	CoordinatorEpoch int32  `json:"coordinator_epoch"`
}

// Values of Batch.TimestampType.
const (
	TimestampCreate    = "create"
	TimestampLogAppend = "log_append"
)

// Segment reads the batches of one .log file in order:
//
//	s, err := dump.OpenSegment(path)
//	defer s.Close()
//	for s.Next() {
//		b := s.Batch()
//		...
//	}
//	if p := s.Stopped(); p != nil { ... } // a batch that could not be read
//	if err := s.Err(); err != nil { ... } // an I/O error
//
// Every batch whose header reads is returned, whatever its CRC (CRCValid)
// and offsets (Verify judges them); the walk stops at the first header
// that cannot be a batch or a batch cut short by the end of the file,
// since what follows cannot be trusted to be batches.
type Segment struct {
	path string
	f    *os.File
	size int64
	base int64 // from the file name, 0 when it gives none
	pos  int64
	buf  []byte
	raw  record.Batch
	info Batch
	// headersOnly reads just each batch's header: Raw holds HeaderSize
	// bytes, and Batch's CRCValid and Marker are not filled in.
	headersOnly bool

	stopped *Problem
	err     error
}

// OpenSegment opens a .log file for reading.
func OpenSegment(path string) (*Segment, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	base, _ := segmentBase(path)
	return &Segment{path: path, f: f, size: st.Size(), base: base}, nil
}

// Close closes the file.
func (s *Segment) Close() error { return s.f.Close() }

// Path is the file's path.
func (s *Segment) Path() string { return s.path }

// Size is the file's size.
func (s *Segment) Size() int64 { return s.size }

// BaseOffset is the segment's base offset, from its file name.
func (s *Segment) BaseOffset() int64 { return s.base }

// Next reads the next batch; it returns false at the end of the file or
// when the walk stopped (see Stopped and Err).
func (s *Segment) Next() bool {
	if s.stopped != nil || s.err != nil || s.pos >= s.size {
		return false
	}
	left := s.size - s.pos
	if left < record.HeaderSize {
		s.stop("%d bytes after the last batch are not a batch", left)
		return false
	}
	var hdr [record.HeaderSize]byte
	if _, err := s.f.ReadAt(hdr[:], s.pos); err != nil {
		s.err = fmt.Errorf("read %s at %d: %w", s.path, s.pos, err)
		return false
	}
	h, err := record.ParseHeader(hdr[:])
	if err != nil {
		s.stop("%s", reason(err))
		return false
	}
	size := h.Size()
	if int64(size) > left {
		s.stopBatch(h.BaseOffset(), "batch of %d bytes cut short: %d bytes left in the file", size, left)
		return false
	}
	if s.headersOnly {
		s.raw = append(s.buf[:0], hdr[:]...)
		s.buf = s.raw
		s.info = describeHeader(s.raw, s.pos)
		s.pos += int64(size)
		return true
	}
	if cap(s.buf) < size {
		s.buf = make([]byte, size)
	}
	b := s.buf[:size]
	if _, err := s.f.ReadAt(b, s.pos); err != nil && !(errors.Is(err, io.EOF) && int64(size) == left) {
		s.err = fmt.Errorf("read %s at %d: %w", s.path, s.pos, err)
		return false
	}
	raw, err := record.Parse(b)
	if err != nil { // the header was checked above; only a race with a writer gets here
		s.stopBatch(h.BaseOffset(), "%s", reason(err))
		return false
	}
	s.raw = raw
	s.info = describe(raw, s.pos)
	s.pos += int64(size)
	return true
}

func (s *Segment) stop(format string, args ...any) {
	p := positionProblem(s.path, s.pos, format, args...)
	s.stopped = &p
}

func (s *Segment) stopBatch(base int64, format string, args ...any) {
	p := batchProblem(s.path, base, s.pos, format, args...)
	s.stopped = &p
}

// Batch is the batch Next read.
func (s *Segment) Batch() Batch { return s.info }

// Raw is the bytes of the batch Next read; they are overwritten by the
// next call.
func (s *Segment) Raw() record.Batch { return s.raw }

// Stopped is the problem that ended the walk before the end of the file,
// nil when it reached the end (or has not ended).
func (s *Segment) Stopped() *Problem { return s.stopped }

// Err is the I/O error that ended the walk.
func (s *Segment) Err() error { return s.err }

// describe is the dump's view of the whole batch raw at position pos.
func describe(raw record.Batch, pos int64) Batch {
	b := describeHeader(raw, pos)
	b.CRCValid = raw.CheckCRC() == nil
	if m, ok, err := raw.TxnMarker(); err == nil && ok {
		b.Marker = &Marker{Type: "ABORT", CoordinatorEpoch: m.CoordinatorEpoch}
		if m.Commit {
			b.Marker.Type = "COMMIT"
		}
	}
	return b
}

// describeHeader is the part of describe that needs only the header.
func describeHeader(raw record.Batch, pos int64) Batch {
	a := raw.Attributes()
	b := Batch{
		BaseOffset:           raw.BaseOffset(),
		LastOffset:           raw.LastOffset(),
		Count:                raw.RecordCount(),
		Position:             pos,
		Size:                 raw.Size(),
		CRC:                  raw.CRC(),
		Magic:                raw.Magic(),
		Attributes:           uint16(a),
		Compression:          a.Compression().String(),
		TimestampType:        TimestampCreate,
		Transactional:        a.Transactional(),
		Control:              a.Control(),
		ProducerID:           raw.ProducerID(),
		ProducerEpoch:        raw.ProducerEpoch(),
		BaseSequence:         raw.BaseSequence(),
		LastSequence:         log.LastSequence(raw),
		PartitionLeaderEpoch: raw.PartitionLeaderEpoch(),
		BaseTimestamp:        raw.BaseTimestamp(),
		MaxTimestamp:         raw.MaxTimestamp(),
	}
	if a.TimestampType() == record.LogAppendTime {
		b.TimestampType = TimestampLogAppend
	}
	return b
}

// Record is one record of a batch, with its offset and timestamp
// resolved.
type Record struct {
	Offset    int64
	Timestamp int64 // ms
	// LogAppendTime says the timestamp is the log's append time (the
	// batch's max timestamp), not the producer's.
	LogAppendTime bool
	Key           []byte // nil is a null key
	Value         []byte // nil is a null value
	Headers       []record.Header
}

// Records calls fn for each record of the batch raw, decompressing it with
// d within record.MaxDecompressedBytes. Control batches hold no data:
// their records are not passed to fn (see Batch.Marker). The slices of a
// Record are valid only during the call.
func Records(raw record.Batch, d *record.Decompressor, fn func(*Record) error) error {
	if raw.Attributes().Control() {
		return nil
	}
	it, err := raw.Records(d)
	if err != nil {
		return errors.New(reason(err))
	}
	logAppend := raw.Attributes().TimestampType() == record.LogAppendTime
	var r Record
	for it.Next() {
		rec := it.Record()
		r = Record{
			Offset:        raw.BaseOffset() + int64(rec.OffsetDelta),
			Timestamp:     raw.BaseTimestamp() + rec.TimestampDelta,
			LogAppendTime: logAppend,
			Key:           rec.Key,
			Value:         rec.Value,
			Headers:       rec.Headers.Decode(),
		}
		if logAppend {
			r.Timestamp = raw.MaxTimestamp()
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	if err := it.Err(); err != nil {
		return errors.New(reason(err))
	}
	return nil
}
