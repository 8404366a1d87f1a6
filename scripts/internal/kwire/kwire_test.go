package kwire

import "testing"

func TestSkipTags(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		rest []byte
		err  bool
	}{
		{[]byte{0, 7}, []byte{7}, false},                 // no tags
		{[]byte{1, 5, 2, 0xa, 0xb, 7}, []byte{7}, false}, // tag 5 of 2 bytes
		{[]byte{1, 5, 3, 0xa, 0xb}, nil, true},           // tag longer than the rest
		{nil, nil, true},                                 // nothing
	} {
		rest, err := SkipTags(c.in)
		if (err != nil) != c.err || string(rest) != string(c.rest) {
			t.Errorf("SkipTags(%v) = %v, %v", c.in, rest, err)
		}
	}
}
