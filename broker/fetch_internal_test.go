package broker

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

// A fetch's size hint (wire.Reply.SizeHint) is at least what its response
// encodes to, so that the transport encodes a large fetch response into
// one buffer of its size (wire's TestResponseEncodedOnce), not copied into
// ever larger ones as each partition's records are appended, and that
// buffer is not much larger than the response.
func TestFetchResponseSizeCoversItsEncoding(t *testing.T) {
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
	frame := len(wire.AppendResponse(nil, 1, resp))
	if frame < partitions*records {
		t.Fatalf("frame of %d bytes for %d bytes of records", frame, partitions*records)
	}
	// The buffer allocated at the hint is what encoding it allocates.
	if hint := fetchResponseSize(resp); hint < frame || hint > frame+frame/4 {
		t.Errorf("size hint %d for a %d-byte response", hint, frame)
	}
}
