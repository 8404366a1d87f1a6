package wire

import (
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// bigFetchResponse is a fetch response of partitions partitions, each
// holding records bytes of record data.
func bigFetchResponse(partitions, records int) *kmsg.FetchResponse {
	resp := kmsg.NewPtrFetchResponse()
	resp.SetVersion(12)
	rt := kmsg.NewFetchResponseTopic()
	rt.Topic = "big"
	for p := range int32(partitions) {
		rp := kmsg.NewFetchResponseTopicPartition()
		rp.Partition = p
		rp.RecordBatches = make([]byte, records)
		rt.Partitions = append(rt.Partitions, rp)
	}
	resp.Topics = append(resp.Topics, rt)
	return resp
}

// A large response with a size hint (Reply.SizeHint; a fetch's is
// broker's fetchResponseSize, at least its encoded size) is encoded into
// one buffer of its size, not copied into ever larger ones as each
// partition's records are appended: each copy is garbage about as large
// as the response.
func TestResponseEncodedOnce(t *testing.T) {
	const partitions, records = 32, 1 << 20
	resp := bigFetchResponse(partitions, records)
	hint := len(AppendResponse(nil, 1, resp))

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b := encodeResponse(1, resp, hint)
	runtime.ReadMemStats(&after)
	frame := len(*b)
	if frame < partitions*records {
		t.Fatalf("frame of %d bytes for %d bytes of records", frame, partitions*records)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > uint64(frame+frame/4) {
		t.Errorf("encoding a %d-byte response allocated %d bytes", frame, allocated)
	}
}
