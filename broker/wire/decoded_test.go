// The race detector's own allocations count in runtime.MemStats, so the
// measurement here is made without it.

//go:build !race

package wire

import (
	"reflect"
	"runtime"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// allocated returns the bytes the runtime allocated while fn ran.
func allocated(fn func()) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return int64(after.TotalAlloc - before.TotalAlloc)
}

// What kmsg allocates decoding a request never exceeds DecodeBound, for
// any API and version, with any of its arrays holding many elements that
// encode to as few bytes as they can, or a tagged field each; and a
// Metadata v1 request naming empty topics is bound at many times its
// size (issue 26).
func TestDecodeBoundHoldsWhatDecodingAllocates(t *testing.T) {
	const elements = 4096
	for key := int16(0); key < 100; key++ {
		base := kmsg.RequestForKey(key)
		if base == nil {
			continue
		}
		paths := arrayPaths(reflect.TypeOf(base).Elem(), nil)
		for version := int16(0); version <= base.MaxVersion(); version++ {
			for _, path := range paths {
				for _, tagged := range []bool{false, true} {
					req, ok := manyElements(key, version, path, elements, tagged)
					if !ok {
						continue
					}
					b := req.AppendTo(nil)
					out := kmsg.RequestForKey(key)
					out.SetVersion(version)
					var err error
					got := allocated(func() { err = out.ReadFrom(b) })
					if err != nil {
						continue
					}
					if bound := DecodeBound(key, version, len(b)); got > bound {
						t.Errorf("%s v%d, %d elements at %v (tagged %v): %d bytes decoded into %d > bound %d",
							kmsg.NameForKey(key), version, elements, path, tagged, len(b), got, bound)
					}
				}
			}
		}
	}
	m := kmsg.NewPtrMetadataRequest()
	m.Version = 1
	if bound := DecodeBound(m.Key(), 1, 10<<20); bound < 200<<20 {
		t.Errorf("a Metadata v1 request of 10 MiB is bound at %d bytes", bound)
	}
}
