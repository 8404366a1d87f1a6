package record

import (
	"testing"
)

func fuzzSeeds(f *testing.F) {
	for _, codec := range []Compression{None, Gzip, Snappy, LZ4, Zstd} {
		bb := NewBuilder(testTs)
		bb.Compression = codec
		f.Add([]byte(mustBuild(f, bb, testRecords()...)))
	}
	f.Add(TxnMarker{ProducerID: 1, Commit: true}.AppendBatch(nil, testTs))
	f.Add([]byte{})
	f.Add(make([]byte, HeaderSize))
}

// FuzzView: no input makes the view, the iterator or the marker decoding
// panic, and every batch whose records iterate rebuilds (Rewrite with all
// its records) into a batch that iterates to the same records.
func FuzzView(f *testing.F) {
	fuzzSeeds(f)
	var d Decompressor
	f.Cleanup(d.Close)
	f.Fuzz(func(t *testing.T, data []byte) {
		if h, err := ParseHeader(data); err == nil {
			_ = h.Size() + int(h.LastOffset()) + int(h.MaxTimestamp()) + int(h.Attributes().Compression())
		}
		for len(data) > 0 {
			b, err := Parse(data)
			if err != nil {
				return
			}
			data = data[len(b):]
			_ = b.CheckCRC()
			_, _, _ = b.TxnMarker()
			it, err := b.Records(&d)
			if err != nil {
				continue
			}
			var recs []Record
			for it.Next() {
				r := *it.Record()
				_ = r.Headers.Decode()
				recs = append(recs, r)
			}
			if it.Err() != nil {
				continue
			}
			nb := b.Rewrite()
			for _, r := range recs {
				nb.Append(r)
			}
			out, err := nb.Build()
			if err != nil {
				t.Fatalf("rebuild: %v", err)
			}
			if err := out.CheckCRC(); err != nil || out.Size() != len(out) {
				t.Fatalf("rebuilt batch: size %d of %d, %v", out.Size(), len(out), err)
			}
			if err := sameRecords(readAll(t, out, &d), recs); err != nil {
				t.Fatalf("rebuilt: %v", err)
			}
		}
	})
}

// FuzzBuild: any batch the builder produces, with any codec, parses with a
// valid CRC and header fields as set, and iterates back to the records it
// was given.
func FuzzBuild(f *testing.F) {
	f.Add([]byte("key\x00value\x01h\x02v"), byte(0), byte(0), int64(5), int64(1))
	f.Add([]byte{0xff, 0xfe, 3, 1, 2, 3, 4, 5, 6, 7, 8, 9}, byte(4), byte(3), int64(-1), int64(-7))
	f.Add(make([]byte, 300), byte(2), byte(1), int64(1<<40), int64(0))
	var d Decompressor
	f.Cleanup(d.Close)
	f.Fuzz(func(t *testing.T, data []byte, codec, flags byte, baseTs, pid int64) {
		bb := NewBuilder(baseTs)
		bb.Compression = Compression(codec % 5)
		bb.RawSnappy = flags&1 != 0
		bb.Transactional = flags&2 != 0
		bb.Control = flags&4 != 0
		bb.ProducerID, bb.ProducerEpoch, bb.BaseSequence = pid, int16(pid), int32(pid)
		want := recordsFrom(data)
		for _, r := range want {
			bb.Append(r)
		}
		b, err := bb.Build()
		if err != nil {
			t.Fatal(err)
		}
		p, err := Parse(b)
		if err != nil || len(p) != len(b) {
			t.Fatalf("parse: %v", err)
		}
		if err := p.CheckCRC(); err != nil {
			t.Fatal(err)
		}
		lastDelta := int32(0) // also without records
		if len(want) > 0 {
			lastDelta = want[len(want)-1].OffsetDelta
		}
		a := p.Attributes()
		if a.Compression() != bb.Compression || a.Transactional() != bb.Transactional || a.Control() != bb.Control ||
			p.ProducerID() != pid || p.ProducerEpoch() != int16(pid) || p.BaseSequence() != int32(pid) ||
			p.BaseTimestamp() != baseTs || p.RecordCount() != int32(len(want)) || p.LastOffsetDelta() != lastDelta {
			t.Fatalf("header %x", b[:HeaderSize])
		}
		if err := sameRecords(readAll(t, p, &d), want); err != nil {
			t.Fatal(err)
		}
	})
}

// recordsFrom cuts data into records: per record a control byte (bit 0
// null key, bit 1 null value, bits 2-3 header count, bits 4-7 field
// length), then the key, value and header bytes; offset deltas ascend from
// 0, timestamp deltas come from the control byte.
func recordsFrom(data []byte) []Record {
	take := func(n int) []byte {
		n = min(n, len(data))
		v := data[:n:n]
		data = data[n:]
		return v
	}
	var out []Record
	for len(data) > 0 {
		c := data[0]
		data = data[1:]
		n := int(c >> 4)
		r := Record{OffsetDelta: int32(len(out)), TimestampDelta: int64(int8(c)) * 1000, Attributes: int8(c & 1)}
		if c&1 == 0 {
			r.Key = append([]byte{}, take(n)...)
		}
		if c&2 == 0 {
			r.Value = append([]byte{}, take(2*n)...)
		}
		var hs []Header
		for i := range int(c>>2) & 3 {
			var v []byte
			if i != 1 {
				v = append([]byte{}, take(n/2)...)
			}
			hs = append(hs, Header{Key: string(take(i)), Value: v})
		}
		if len(hs) > 0 {
			r.Headers = MakeHeaders(hs...)
		}
		out = append(out, r)
	}
	return out
}
