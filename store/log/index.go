package log

import (
	"encoding/binary"
	"fmt"
	"sort"
)

const (
	offsetEntrySize = 8  // relative offset int32, position int32
	timeEntrySize   = 12 // timestamp int64, relative offset int32
)

// offsetEntry maps the last offset of a batch (relative to the segment base)
// to the file position where that batch starts.
type offsetEntry struct {
	rel uint32
	pos uint32
}

// timeEntry maps the largest timestamp seen so far in a segment to the
// offset (relative) of the record that carries it.
type timeEntry struct {
	ts  int64
	rel uint32
}

// lookupPos returns the position to start scanning for the batch holding
// rel: the position of the last entry whose offset <= rel, or 0.
func lookupPos(idx []offsetEntry, rel uint32) int64 {
	i := sort.Search(len(idx), func(i int) bool { return idx[i].rel > rel })
	if i == 0 {
		return 0
	}
	return int64(idx[i-1].pos)
}

// lookupTime returns the relative offset of the last entry whose timestamp
// <= ts, and whether there is one.
func lookupTime(tidx []timeEntry, ts int64) (uint32, bool) {
	i := sort.Search(len(tidx), func(i int) bool { return tidx[i].ts > ts })
	if i == 0 {
		return 0, false
	}
	return tidx[i-1].rel, true
}

func appendOffsetEntries(dst []byte, es []offsetEntry) []byte {
	for _, e := range es {
		dst = binary.BigEndian.AppendUint32(dst, e.rel)
		dst = binary.BigEndian.AppendUint32(dst, e.pos)
	}
	return dst
}

func appendTimeEntries(dst []byte, es []timeEntry) []byte {
	for _, e := range es {
		dst = binary.BigEndian.AppendUint64(dst, uint64(e.ts))
		dst = binary.BigEndian.AppendUint32(dst, e.rel)
	}
	return dst
}

// parseOffsetIndex decodes an .index file and checks it against the log it
// indexes: strictly increasing offsets and positions, positions inside the
// log. Trailing all-zero entries (a preallocated file) are ignored.
func parseOffsetIndex(b []byte, logSize int64) ([]offsetEntry, error) {
	es, err := decodeOffsetIndex(b)
	if err != nil {
		return nil, err
	}
	for i, e := range es {
		if i > 0 && (e.rel <= es[i-1].rel || e.pos <= es[i-1].pos) {
			return nil, fmt.Errorf("%w: offset index entry %d out of order", ErrCorrupt, i)
		}
		if int64(e.pos) >= logSize {
			return nil, fmt.Errorf("%w: offset index entry %d points past the log", ErrCorrupt, i)
		}
	}
	return es, nil
}

// decodeOffsetIndex decodes the entries of an .index file without checking
// them; trailing all-zero entries are dropped.
func decodeOffsetIndex(b []byte) ([]offsetEntry, error) {
	if len(b)%offsetEntrySize != 0 {
		return nil, fmt.Errorf("%w: offset index size %d", ErrCorrupt, len(b))
	}
	es := make([]offsetEntry, 0, len(b)/offsetEntrySize)
	for i := 0; i < len(b); i += offsetEntrySize {
		e := offsetEntry{rel: binary.BigEndian.Uint32(b[i:]), pos: binary.BigEndian.Uint32(b[i+4:])}
		if e.rel == 0 && e.pos == 0 && i > 0 {
			break
		}
		es = append(es, e)
	}
	return es, nil
}

// parseTimeIndex decodes a .timeindex file: timestamps and offsets must not
// decrease. Trailing all-zero entries are ignored.
func parseTimeIndex(b []byte) ([]timeEntry, error) {
	es, err := decodeTimeIndex(b)
	if err != nil {
		return nil, err
	}
	for i, e := range es {
		if i > 0 && (e.ts <= es[i-1].ts || e.rel < es[i-1].rel) {
			return nil, fmt.Errorf("%w: time index entry %d out of order", ErrCorrupt, i)
		}
	}
	return es, nil
}

// decodeTimeIndex decodes the entries of a .timeindex file without
// checking them; trailing all-zero entries are dropped.
func decodeTimeIndex(b []byte) ([]timeEntry, error) {
	if len(b)%timeEntrySize != 0 {
		return nil, fmt.Errorf("%w: time index size %d", ErrCorrupt, len(b))
	}
	es := make([]timeEntry, 0, len(b)/timeEntrySize)
	for i := 0; i < len(b); i += timeEntrySize {
		e := timeEntry{ts: int64(binary.BigEndian.Uint64(b[i:])), rel: binary.BigEndian.Uint32(b[i+8:])}
		if e.ts == 0 && e.rel == 0 && i > 0 {
			break
		}
		es = append(es, e)
	}
	return es, nil
}
