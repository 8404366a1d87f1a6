package wire

import (
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// bigResponse is a response of members group members, each with
// metadata bytes of protocol metadata: large as a fetch's response is,
// in many pieces.
func bigResponse(members, metadata int) *kmsg.JoinGroupResponse {
	resp := kmsg.NewPtrJoinGroupResponse()
	resp.SetVersion(5)
	for range members {
		m := kmsg.NewJoinGroupResponseMember()
		m.MemberID = "member"
		m.ProtocolMetadata = make([]byte, metadata)
		resp.Members = append(resp.Members, m)
	}
	return resp
}

// A large response with a size hint (Reply.SizeHint; a fetch's is
// broker's fetchResponseSize, at least its encoded size) is encoded into
// one buffer of its size, not copied into ever larger ones as each
// piece is appended: each copy is garbage about as large as the
// response.
func TestResponseEncodedOnce(t *testing.T) {
	const members, metadata = 32, 1 << 20
	resp := bigResponse(members, metadata)
	hint := len(AppendResponse(nil, 1, resp))

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b := encodeResponse(1, resp, hint)
	runtime.ReadMemStats(&after)
	frame := len(*b)
	if frame < members*metadata {
		t.Fatalf("frame of %d bytes for %d bytes of metadata", frame, members*metadata)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > uint64(frame+frame/4) {
		t.Errorf("encoding a %d-byte response allocated %d bytes", frame, allocated)
	}
}
