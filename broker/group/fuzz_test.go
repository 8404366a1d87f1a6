package group

import (
	"bytes"
	"testing"
)

// FuzzDecodeRecord: decoding arbitrary __consumer_offsets bytes never
// panics, and an offset record klog writes decodes to what was written.
func FuzzDecodeRecord(f *testing.F) {
	r := offsetRecord("g", "t", 1, offset{Offset: 5, LeaderEpoch: 2, Metadata: "m", CommitTimestamp: 9})
	f.Add(r.Key, r.Value)
	g := newTestGroup()
	f.Add(g.metadataRecord().Key, g.metadataRecord().Value)
	f.Add([]byte{0, 2}, []byte{0, 3, 0})
	f.Fuzz(func(t *testing.T, key, value []byte) {
		d, ok, err := decodeRecord(Record{Key: key, Value: value})
		if err != nil || !ok || !d.isOffset || d.offset == nil || d.offset.Version != offsetValueVersion {
			return
		}
		o := offset{Offset: d.offset.Offset, LeaderEpoch: d.offset.LeaderEpoch, Metadata: d.offset.Metadata, CommitTimestamp: d.offset.CommitTimestamp}
		again := offsetRecord(d.group, d.topic, d.part, o)
		d2, ok, err := decodeRecord(again)
		if err != nil || !ok || d2.group != d.group || d2.topic != d.topic || d2.part != d.part || d2.offset.Offset != o.Offset ||
			d2.offset.Metadata != o.Metadata || !bytes.Equal(again.Key, offsetKey(d.group, d.topic, d.part)) {
			t.Fatalf("re-encoded record differs: %+v vs %+v", d2, d)
		}
	})
}
