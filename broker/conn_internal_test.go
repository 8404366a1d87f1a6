package broker

import (
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A large fetch response is encoded into one buffer of its size, not
// copied into ever larger ones as each partition's records are appended:
// each copy is garbage about as large as the response.
func TestFetchResponseEncodedOnce(t *testing.T) {
	const partitions, records = 32, 1 << 20
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

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b := encodeResponse(1, resp, fetchResponseSize(resp))
	runtime.ReadMemStats(&after)
	frame := len(*b)
	if frame < partitions*records {
		t.Fatalf("frame of %d bytes for %d bytes of records", frame, partitions*records)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > uint64(frame+frame/4) {
		t.Errorf("encoding a %d-byte response allocated %d bytes", frame, allocated)
	}
}
