package record

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

const testTs = int64(1_700_000_000_000)

// testRecords covers null and empty keys and values, headers with a null
// value, and timestamp deltas.
func testRecords() []Record {
	return []Record{
		{OffsetDelta: 0, Key: []byte("k0"), Value: []byte("v0")},
		{OffsetDelta: 1, Key: nil, Value: bytes.Repeat([]byte("abc"), 200), TimestampDelta: 7},
		{OffsetDelta: 2, Key: []byte{}, Value: nil, Headers: MakeHeaders(Header{Key: "h", Value: []byte("x")}, Header{Key: "", Value: nil})},
		{OffsetDelta: 3, Key: []byte("k3"), Value: []byte{}, TimestampDelta: 70_000},
	}
}

// readAll iterates b's records into copies.
func readAll(t *testing.T, b Batch, d *Decompressor) []Record {
	t.Helper()
	it, err := b.Records(d)
	if err != nil {
		t.Fatal(err)
	}
	var out []Record
	for it.Next() {
		out = append(out, *it.Record())
	}
	if err := it.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// sameRecords compares records field by field, headers decoded.
func sameRecords(got, want []Record) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d records, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Attributes != w.Attributes || g.OffsetDelta != w.OffsetDelta || g.TimestampDelta != w.TimestampDelta ||
			!sameBytes(g.Key, w.Key) || !sameBytes(g.Value, w.Value) {
			return fmt.Errorf("record %d: got %+v, want %+v", i, g, w)
		}
		gh, wh := g.Headers.Decode(), w.Headers.Decode()
		if len(gh) != len(wh) {
			return fmt.Errorf("record %d: headers %v, want %v", i, gh, wh)
		}
		for j := range gh {
			if gh[j].Key != wh[j].Key || !sameBytes(gh[j].Value, wh[j].Value) {
				return fmt.Errorf("record %d header %d: %+v, want %+v", i, j, gh[j], wh[j])
			}
		}
	}
	return nil
}

// sameBytes tells null from empty.
func sameBytes(a, b []byte) bool { return (a == nil) == (b == nil) && bytes.Equal(a, b) }

func TestBuilderCodecs(t *testing.T) {
	var d Decompressor
	defer d.Close()
	for _, c := range []struct {
		name  string
		codec Compression
		raw   bool
	}{
		{"none", None, false},
		{"gzip", Gzip, false},
		{"snappy-xerial", Snappy, false},
		{"snappy-raw", Snappy, true},
		{"lz4", LZ4, false},
		{"zstd", Zstd, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			bb := NewBuilder(testTs)
			bb.Compression, bb.RawSnappy = c.codec, c.raw
			bb.Transactional = true
			bb.ProducerID, bb.ProducerEpoch, bb.BaseSequence = 42, 3, 17
			want := testRecords()
			raw := mustBuild(t, bb, want...)
			b, err := Parse(raw)
			if err != nil || len(b) != len(raw) {
				t.Fatalf("parse: %d of %d bytes, %v", len(b), len(raw), err)
			}
			if err := b.CheckCRC(); err != nil {
				t.Fatal(err)
			}
			a := b.Attributes()
			if a.Compression() != c.codec || !a.Transactional() || a.Control() || a.TimestampType() != CreateTime {
				t.Fatalf("attributes %#x", uint16(a))
			}
			if b.BaseOffset() != 0 || b.PartitionLeaderEpoch() != -1 || b.Magic() != 2 || b.LastOffsetDelta() != 3 ||
				b.LastOffset() != 3 || b.BaseTimestamp() != testTs || b.MaxTimestamp() != testTs+70_000 ||
				b.ProducerID() != 42 || b.ProducerEpoch() != 3 || b.BaseSequence() != 17 || b.RecordCount() != 4 || b.Size() != len(raw) {
				t.Fatalf("header %x", raw[:HeaderSize])
			}
			if c.codec == Snappy && bytes.HasPrefix(b.RecordBytes(), xerialMagic) == c.raw {
				t.Fatalf("xerial framing %v, want %v", !c.raw, c.raw)
			}
			if err := sameRecords(readAll(t, b, &d), want); err != nil {
				t.Fatal(err)
			}
			if c.codec != None {
				if _, err := b.Records(nil); !errors.Is(err, ErrInvalidRecord) {
					t.Fatalf("compressed records without decompressor: %v", err)
				}
			}
			checkWithKmsg(t, raw, &d)
		})
	}
}

// checkWithKmsg decodes a batch with kmsg, an independent reading of the
// layout, and compares it with the view.
func checkWithKmsg(t *testing.T, raw []byte, d *Decompressor) {
	t.Helper()
	var kb kmsg.RecordBatch
	if err := kb.ReadFrom(raw); err != nil {
		t.Fatal(err)
	}
	b := Batch(raw)
	if kb.FirstOffset != b.BaseOffset() || int(kb.Length)+12 != len(raw) || kb.PartitionLeaderEpoch != b.PartitionLeaderEpoch() ||
		kb.Magic != b.Magic() || uint32(kb.CRC) != b.CRC() || uint16(kb.Attributes) != uint16(b.Attributes()) ||
		kb.LastOffsetDelta != b.LastOffsetDelta() || kb.FirstTimestamp != b.BaseTimestamp() || kb.MaxTimestamp != b.MaxTimestamp() ||
		kb.ProducerID != b.ProducerID() || kb.ProducerEpoch != b.ProducerEpoch() || kb.FirstSequence != b.BaseSequence() ||
		kb.NumRecords != b.RecordCount() {
		t.Fatalf("kmsg reads %+v", kb)
	}
	recs := kb.Records
	if c := b.Attributes().Compression(); c != None {
		var err error
		if recs, err = d.Decompress(c, recs); err != nil {
			t.Fatal(err)
		}
	}
	got := readAll(t, b, d)
	for i := range got {
		var kr kmsg.Record
		length, n := readVarint(recs)
		if err := kr.ReadFrom(recs[:n+int(length)]); err != nil {
			t.Fatal(err)
		}
		recs = recs[n+int(length):]
		r := got[i]
		if kr.OffsetDelta != r.OffsetDelta || kr.TimestampDelta64 != r.TimestampDelta || !sameBytes(kr.Key, r.Key) ||
			!sameBytes(kr.Value, r.Value) || len(kr.Headers) != r.Headers.decodedLen() {
			t.Fatalf("record %d: kmsg reads %+v, view %+v", i, kr, r)
		}
	}
}

func readVarint(b []byte) (int64, int) {
	r := reader{b: b}
	v := r.varint()
	return v, len(b) - len(r.b)
}

func (h Headers) decodedLen() int { return len(h.Decode()) }

func TestBuilderLayout(t *testing.T) {
	bb := NewBuilder(5)
	bb.Append(Record{Key: []byte("k"), Value: []byte("vv")})
	b, err := bb.Build()
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{
		0, 0, 0, 0, 0, 0, 0, 0, // base offset
		0, 0, 0, 0x3b, // batch length 49 + 10
		0xff, 0xff, 0xff, 0xff, // partition leader epoch -1
		2,          // magic
		0, 0, 0, 0, // crc, compared below
		0, 0, // attributes
		0, 0, 0, 0, // last offset delta
		0, 0, 0, 0, 0, 0, 0, 5, // base timestamp
		0, 0, 0, 0, 0, 0, 0, 5, // max timestamp
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, // producer id
		0xff, 0xff, // producer epoch
		0xff, 0xff, 0xff, 0xff, // base sequence
		0, 0, 0, 1, // record count
		18,     // record length 9
		0,      // attributes
		0,      // timestamp delta
		0,      // offset delta
		2, 'k', // key
		4, 'v', 'v', // value
		0, // header count
	}
	got := bytes.Clone(b)
	copy(got[17:21], []byte{0, 0, 0, 0})
	if !bytes.Equal(got, want) {
		t.Fatalf("batch\n got %x\nwant %x", got, want)
	}
	if err := b.CheckCRC(); err != nil {
		t.Fatal(err)
	}
}

func TestParseHeaderErrors(t *testing.T) {
	good := mustBuild(t, NewBuilder(testTs), Record{Value: []byte("v")})
	patch := func(f func(Batch)) []byte {
		b := Batch(bytes.Clone(good))
		f(b)
		return b
	}
	for _, c := range []struct {
		name string
		b    []byte
		want error // nil: Parse succeeds
	}{
		{"good", good, nil},
		{"short header", good[:ScanHeaderSize-1], ErrCorruptMessage},
		{"short batch", good[:len(good)-1], ErrCorruptMessage},
		{"no records section", good[:HeaderSize-1], ErrCorruptMessage},
		{"length too small", patch(func(b Batch) { b[offBatchLength+3] = 48 }), ErrCorruptMessage},
		{"length negative", patch(func(b Batch) { b[offBatchLength] = 0x80 }), ErrCorruptMessage},
		{"magic 1", patch(func(b Batch) { b.SetMagic(1) }), ErrInvalidRecord},
		{"negative last offset delta", patch(func(b Batch) { b.SetLastOffsetDelta(-1) }), ErrCorruptMessage},
	} {
		_, err := Parse(c.b)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := ParseHeader(good[:ScanHeaderSize]); err != nil {
		t.Errorf("scan header alone: %v", err)
	}
	bad := patch(func(b Batch) { b[len(b)-1] ^= 1 })
	if err := Batch(bad).CheckCRC(); !errors.Is(err, ErrCorruptMessage) {
		t.Errorf("flipped byte: %v", err)
	}
}

func TestIterErrors(t *testing.T) {
	// Each case is a records section of one record (count 1).
	rec := func(body ...byte) []byte { return append([]byte{byte(len(body) * 2)}, body...) }
	for _, c := range []struct {
		name    string
		records []byte
		count   int32
		want    error
	}{
		{"bad length", []byte{0x7f}, 1, ErrCorruptMessage},
		// A count that disagrees with the records is INVALID_RECORD, as
		// Kafka's DefaultRecordBatch has it.
		{"missing record", nil, 1, ErrInvalidRecord},
		{"records end before the count", rec(0, 0, 0, 1, 1, 0), 2, ErrInvalidRecord},
		{"truncated fields", rec(0, 0), 1, ErrCorruptMessage},
		{"key past the record", rec(0, 0, 0, 10), 1, ErrCorruptMessage},
		{"negative header count", rec(0, 0, 0, 1, 1, 1), 1, ErrCorruptMessage},
		{"null header key", rec(0, 0, 0, 1, 1, 2, 1, 1), 1, ErrCorruptMessage},
		{"trailing bytes in record", rec(0, 0, 0, 1, 1, 0, 9), 1, ErrCorruptMessage},
		{"bytes after the last record", append(rec(0, 0, 0, 1, 1, 0), 5), 1, ErrInvalidRecord},
		{"offset delta beyond int32", rec(0, 0, 0x80, 0x80, 0x80, 0x80, 0x20, 1, 1, 0), 1, ErrInvalidRecord},
		{"well formed", rec(0, 0, 0, 1, 1, 0), 1, nil},
	} {
		bb := NewBuilder(testTs)
		raw := bb.appendBatch(nil, c.records)
		Batch(raw).SetRecordCount(c.count)
		it, err := Batch(raw).Records(nil)
		if err != nil {
			t.Fatal(err)
		}
		for it.Next() {
		}
		if err := it.Err(); c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
}

func TestUncompressedWalkDoesNotAllocate(t *testing.T) {
	b := mustBuild(t, NewBuilder(testTs), testRecords()...)
	n := 0
	allocs := testing.AllocsPerRun(100, func() {
		it, err := b.Records(nil)
		if err != nil {
			t.Fatal(err)
		}
		for it.Next() {
			n += len(it.Record().Value) + it.Record().Headers.count()
		}
		if it.Err() != nil {
			t.Fatal(it.Err())
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per walk", allocs)
	}
}

func (h Headers) count() int {
	r := reader{b: h}
	return int(r.varint())
}

func TestRewriteSubset(t *testing.T) {
	var d Decompressor
	defer d.Close()
	for _, codec := range []Compression{None, Zstd} {
		bb := NewBuilder(testTs)
		bb.Compression = codec
		bb.BaseOffset, bb.PartitionLeaderEpoch = 100, 7
		bb.ProducerID, bb.ProducerEpoch, bb.BaseSequence = 9, 1, 50
		all := testRecords()
		orig := mustBuild(t, bb, all...)
		// Keep records 1 and 2, as compaction would.
		nb := orig.Rewrite()
		it, err := orig.Records(&d)
		if err != nil {
			t.Fatal(err)
		}
		for it.Next() {
			if r := it.Record(); r.OffsetDelta == 1 || r.OffsetDelta == 2 {
				nb.Append(*r)
			}
		}
		if it.Err() != nil || nb.Len() != 2 {
			t.Fatalf("%v, %d records kept", it.Err(), nb.Len())
		}
		out, err := nb.Build()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(out); err != nil {
			t.Fatal(err)
		}
		// The last offset stays the original's (Kafka's cleaner keeps it:
		// the producer's last sequence must not move).
		if out.BaseOffset() != 100 || out.PartitionLeaderEpoch() != 7 || out.LastOffset() != orig.LastOffset() || out.RecordCount() != 2 ||
			out.BaseTimestamp() != testTs || out.MaxTimestamp() != testTs+7 || out.ProducerID() != 9 ||
			out.ProducerEpoch() != 1 || out.BaseSequence() != 50 || out.Attributes() != orig.Attributes() || out.CheckCRC() != nil {
			t.Fatalf("%v: rewritten header %x", codec, out[:HeaderSize])
		}
		if err := sameRecords(readAll(t, out, &d), all[1:3]); err != nil {
			t.Fatalf("%v: %v", codec, err)
		}
	}
	// Without any record left the batch keeps its span, empty.
	orig := mustBuild(t, NewBuilder(testTs), testRecords()...)
	empty, err := orig.Rewrite().Build()
	if err != nil || empty.RecordCount() != 0 || empty.LastOffset() != orig.LastOffset() || empty.CheckCRC() != nil {
		t.Fatalf("empty rewrite: %v %x", err, empty)
	}
	// A LogAppendTime batch keeps its append time.
	bb := NewBuilder(testTs)
	bb.TimestampType, bb.AppendTime = LogAppendTime, testTs+999
	orig = mustBuild(t, bb, Record{Value: []byte("v")})
	out := mustBuild(t, orig.Rewrite(), Record{Value: []byte("v")})
	if out.MaxTimestamp() != testTs+999 || out.Attributes().TimestampType() != LogAppendTime {
		t.Fatalf("log append time rewrite: %x", out)
	}
}

func TestAttributes(t *testing.T) {
	a := Attributes(0).WithCompression(LZ4).WithTimestampType(LogAppendTime).WithTransactional(true).WithControl(true)
	if uint16(a) != 0x3b || a.Compression() != LZ4 || a.TimestampType() != LogAppendTime || !a.Transactional() || !a.Control() {
		t.Fatalf("attributes %#x", uint16(a))
	}
	a = a.WithCompression(None).WithTimestampType(CreateTime).WithTransactional(false).WithControl(false)
	if a != 0 {
		t.Fatalf("cleared attributes %#x", uint16(a))
	}
	if Compression(5).Valid() || !Zstd.Valid() || Compression(-1).Valid() {
		t.Fatal("codec validity")
	}
}

func TestTxnMarker(t *testing.T) {
	for _, commit := range []bool{false, true} {
		m := TxnMarker{ProducerID: 5, ProducerEpoch: 2, Commit: commit, CoordinatorEpoch: 8}
		raw := m.AppendBatch([]byte("prefix"), testTs)
		b, err := Parse(raw[len("prefix"):])
		if err != nil {
			t.Fatal(err)
		}
		a := b.Attributes()
		if !a.Control() || !a.Transactional() || a.Compression() != None || b.BaseSequence() != -1 ||
			b.RecordCount() != 1 || b.MaxTimestamp() != testTs || b.CheckCRC() != nil {
			t.Fatalf("marker header %x", b[:HeaderSize])
		}
		got, ok, err := b.TxnMarker()
		if err != nil || !ok || got != m {
			t.Fatalf("marker %+v %v %v", got, ok, err)
		}
	}
	control := func(key, value []byte) Batch {
		bb := NewBuilder(testTs)
		bb.Control, bb.Transactional, bb.ProducerID = true, true, 1
		return mustBuild(t, bb, Record{Key: key, Value: value})
	}
	for _, c := range []struct {
		name string
		b    Batch
		ok   bool
		want error
	}{
		{"not control", mustBuild(t, NewBuilder(testTs), Record{Value: []byte("v")}), false, nil},
		{"other control type", control([]byte{0, 0, 0, 3}, []byte{1, 2}), false, nil},
		{"short key", control([]byte{0, 0, 1}, []byte{0, 0, 0, 0, 0, 0}), false, ErrInvalidRecord},
		{"null key", control(nil, []byte{0, 0, 0, 0, 0, 0}), false, ErrInvalidRecord},
		{"short value", control([]byte{0, 0, 0, 1}, []byte{0, 0, 0, 0, 0}), false, ErrInvalidRecord},
		{"commit", control([]byte{0, 0, 0, 1}, []byte{0, 0, 0, 0, 0, 4}), true, nil},
	} {
		_, ok, err := c.b.TxnMarker()
		if ok != c.ok || c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: ok %v err %v", c.name, ok, err)
		}
	}
	bb := NewBuilder(testTs)
	bb.Control, bb.Compression = true, Gzip
	gz := mustBuild(t, bb, Record{Key: []byte{0, 0, 0, 1}, Value: []byte{0, 0, 0, 0, 0, 0}})
	if _, _, err := gz.TxnMarker(); !errors.Is(err, ErrInvalidRecord) {
		t.Errorf("compressed control batch: %v", err)
	}
	if k, err := ParseControlKey([]byte{0, 0, 0, 1}); err != nil || k.Type != kmsg.ControlRecordKeyTypeCommit || !EndsTxn(k) {
		t.Errorf("control key %+v %v", k, err)
	}
}

// mustBuild appends rs to b and builds.
func mustBuild(t testing.TB, b *Builder, rs ...Record) Batch {
	t.Helper()
	for _, r := range rs {
		b.Append(r)
	}
	out, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestBuildInvalidCodec(t *testing.T) {
	bb := NewBuilder(testTs)
	bb.Compression = 5
	bb.Append(Record{Value: []byte("v")})
	if _, err := bb.Build(); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("codec 5: %v", err)
	}
	var d Decompressor
	if _, err := d.Decompress(6, nil); !errors.Is(err, ErrInvalidRecord) {
		t.Fatalf("decompress codec 6: %v", err)
	}
}

// TestVarintLikeBinary: the walk's inlined varint reads exactly what
// binary.Varint reads, overflow and truncation included.
func TestVarintLikeBinary(t *testing.T) {
	inputs := [][]byte{
		nil, {0}, {1}, {0x7f}, {0x80}, {0x80, 0}, {0xff, 0x7f},
		bytes.Repeat([]byte{0xff}, 9), append(bytes.Repeat([]byte{0xff}, 9), 1), append(bytes.Repeat([]byte{0xff}, 9), 2),
		append(bytes.Repeat([]byte{0x80}, 9), 0), bytes.Repeat([]byte{0x80}, 11), append(bytes.Repeat([]byte{0xff}, 10), 0),
	}
	for _, v := range []int64{0, -1, 1, 63, -64, 64, 1 << 40, -1 << 62, 1<<63 - 1, -1 << 63} {
		inputs = append(inputs, binary.AppendVarint(nil, v), append(binary.AppendVarint(nil, v), 0x55))
	}
	for _, in := range inputs {
		want, n := binary.Varint(in)
		r := reader{b: in}
		got := r.varint()
		if n <= 0 {
			if !r.bad {
				t.Errorf("%x: read %d, binary.Varint fails", in, got)
			}
			continue
		}
		if r.bad || got != want || len(in)-len(r.b) != n {
			t.Errorf("%x: got %d (%d bytes, bad %v), want %d (%d bytes)", in, got, len(in)-len(r.b), r.bad, want, n)
		}
	}
}
