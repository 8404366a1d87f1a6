package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

func flexibleByKmsg(key, version int16) bool {
	req := kmsg.RequestForKey(key)
	if req == nil || version > req.MaxVersion() {
		return false
	}
	req.SetVersion(version)
	return req.IsFlexible()
}

// frame encodes req as a client would, with kmsg's own formatter.
func frame(req kmsg.Request, corr int32, clientID *string) []byte {
	f := kmsg.NewRequestFormatter()
	if clientID != nil {
		f = kmsg.NewRequestFormatter(kmsg.FormatterClientID(*clientID))
	}
	return f.AppendRequest(nil, req, corr)
}

func TestRoundTripRequests(t *testing.T) {
	id := "client-1"
	for _, tc := range []struct {
		req      kmsg.Request
		version  int16
		clientID *string
	}{
		{kmsg.NewPtrMetadataRequest(), 12, &id}, // flexible
		{kmsg.NewPtrMetadataRequest(), 8, &id},  // not flexible
		{kmsg.NewPtrApiVersionsRequest(), 3, nil},
		{kmsg.NewPtrProduceRequest(), 9, &id},
	} {
		tc.req.SetVersion(tc.version)
		raw := frame(tc.req, 42, tc.clientID)
		got, _, err := ReadFrame(bufio.NewReader(bytes.NewReader(raw)), 1<<20, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		h, body, err := ParseHeader(got, flexibleByKmsg)
		if err != nil {
			t.Fatal(err)
		}
		if h.Key != tc.req.Key() || h.Version != tc.version || h.CorrelationID != 42 {
			t.Fatalf("header %+v", h)
		}
		if (h.ClientID == nil) != (tc.clientID == nil) || (h.ClientID != nil && *h.ClientID != *tc.clientID) {
			t.Fatalf("client id %v", h.ClientID)
		}
		decoded := kmsg.RequestForKey(h.Key)
		decoded.SetVersion(h.Version)
		if err := decoded.ReadFrom(body); err != nil {
			t.Fatalf("%s v%d body: %v", kmsg.NameForKey(h.Key), h.Version, err)
		}
	}
}

func TestReadFrameLimits(t *testing.T) {
	big := binary.BigEndian.AppendUint32(nil, 1<<30)
	if _, _, err := ReadFrame(bufio.NewReader(bytes.NewReader(big)), 1<<20, nil, nil); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("oversized: %v", err)
	}
	small := binary.BigEndian.AppendUint32(nil, 3)
	if _, _, err := ReadFrame(bufio.NewReader(bytes.NewReader(append(small, 1, 2, 3))), 1<<20, nil, nil); !errors.Is(err, ErrMalformed) {
		t.Fatalf("undersized: %v", err)
	}
	short := append(binary.BigEndian.AppendUint32(nil, 100), make([]byte, 10)...)
	if _, _, err := ReadFrame(bufio.NewReader(bytes.NewReader(short)), 1<<20, nil, nil); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated: %v", err)
	}
}

func TestAppendResponseHeaders(t *testing.T) {
	av := kmsg.NewPtrApiVersionsResponse()
	av.SetVersion(3) // flexible body, but header v0
	b := AppendResponse(nil, 9, av)
	if got := int(binary.BigEndian.Uint32(b)); got != len(b)-4 {
		t.Fatalf("size prefix %d for %d bytes", got, len(b)-4)
	}
	check := kmsg.NewPtrApiVersionsResponse()
	check.SetVersion(3)
	if err := check.ReadFrom(b[8:]); err != nil {
		t.Fatalf("ApiVersions body right after the correlation id: %v", err)
	}

	md := kmsg.NewPtrMetadataResponse()
	md.SetVersion(12)
	b = AppendResponse(nil, 9, md)
	if b[8] != 0 {
		t.Fatalf("flexible response lacks its empty tag section")
	}
	mcheck := kmsg.NewPtrMetadataResponse()
	mcheck.SetVersion(12)
	if err := mcheck.ReadFrom(b[9:]); err != nil {
		t.Fatal(err)
	}
}

// FuzzParseHeader: any input either parses or returns an error; it never
// panics, and a parsed body is a suffix of the frame.
func FuzzParseHeader(f *testing.F) {
	id := "c"
	md := kmsg.NewPtrMetadataRequest()
	md.SetVersion(12)
	f.Add(frame(md, 1, &id)[4:])
	av := kmsg.NewPtrApiVersionsRequest()
	f.Add(frame(av, 1, nil)[4:])
	f.Add([]byte{0, 3, 0, 12, 0, 0, 0, 1, 0xff, 0xff, 5, 1, 2})
	f.Fuzz(func(t *testing.T, b []byte) {
		_, body, err := ParseHeader(b, flexibleByKmsg)
		if err == nil && !bytes.HasSuffix(b, body) {
			t.Fatal("body is not a suffix of the frame")
		}
	})
}

func TestSkipTagsRefusesTruncatedTags(t *testing.T) {
	for _, b := range [][]byte{{}, {1}, {1, 5}, {1, 5, 3, 0}, {0x80}} {
		if _, err := skipTags(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("skipTags(%v): %v, want ErrMalformed", b, err)
		}
	}
	if rest, err := skipTags([]byte{2, 1, 0, 2, 1, 9, 42}); err != nil || len(rest) != 1 || rest[0] != 42 {
		t.Errorf("two tags: rest %v, %v", rest, err)
	}
}
