package wire

import (
	"math"
	"reflect"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// A request's frame is only part of what it costs: kmsg decodes it into
// structs, and an array of small elements turns into much more memory than
// its bytes. A Metadata v1 request naming empty topics takes 2 bytes a
// topic and decodes into a 32-byte struct and a 16-byte string header for
// each, 24 times its size. So a request is charged, before it is decoded,
// what it may decode into at most (DecodeBound), and, once decoded, what
// it did decode into (DecodedSize).
//
// The most a body may decode into per byte is measured with kmsg itself,
// for each API and version, not written down by hand: for every array a
// request has, at any depth, kmsg encodes the request with that array
// holding many empty elements, the smallest an element encodes to, and
// decodes it again; the array's cost is the memory decoding grew by
// divided by the bytes the request grew by. kmsg checks an array's length
// against the bytes left before it allocates the array (each element
// takes at least its smallest encoding), so no body decodes into more
// than its size times the largest of these costs. The same holds for
// unknown tagged fields, which decode into a map.

// measureElements is how many elements an array holds when its cost is
// measured: enough that the request's fixed part does not count.
const measureElements = 64

// An element's unknown tagged fields decode into a map of their own:
// tagMapBytes for the map, and tagEntryBytes for each field, counting the
// tables the map leaves behind as it grows (measured: 341 bytes for a
// map of one field, 131 a field in a map of 10,000).
const (
	tagMapBytes   = 336
	tagEntryBytes = 132
)

// DecodeBound returns the most memory kmsg may allocate decoding a body
// of bodyLen bytes of a request of key at version, beyond the body itself
// (the []byte fields of a decoded request point into it). Unknown keys
// and versions, which are not decoded, cost nothing.
func DecodeBound(key, version int16, bodyLen int) int64 {
	c, ok := decodeCost(key, version)
	if !ok {
		return 0
	}
	return c.fixed + int64(math.Ceil(float64(bodyLen)*c.perByte))
}

// cost is what a request of one API and version decodes into: fixed, its
// top-level struct, and at most perByte for each byte of its body.
type cost struct {
	fixed   int64
	perByte float64
}

var costs sync.Map // costKey -> cost

type costKey struct{ key, version int16 }

func decodeCost(key, version int16) (cost, bool) {
	k := costKey{key, version}
	if c, ok := costs.Load(k); ok {
		return c.(cost), true
	}
	req := kmsg.RequestForKey(key)
	if req == nil || version < 0 || version > req.MaxVersion() {
		return cost{}, false
	}
	c := measureCost(key, version)
	costs.Store(k, c)
	return c, true
}

// fallbackPerByte is the cost per byte of an API whose measurement
// failed (kmsg panicked encoding its made-up requests): more than any
// measured.
const fallbackPerByte = 256

// measureCost measures the cost of a request of key at version: see
// above.
func measureCost(key, version int16) (c cost) {
	defer func() {
		if recover() != nil {
			c = cost{fixed: c.fixed, perByte: fallbackPerByte}
		}
	}()
	base := kmsg.RequestForKey(key)
	base.SetVersion(version)
	c.fixed = int64(reflect.TypeOf(base).Elem().Size())
	baseDecoded, baseLen, ok := roundTrip(key, version, base)
	if !ok {
		return c
	}
	c.fixed = max(c.fixed, baseDecoded)
	measure := func(req kmsg.Request) {
		decoded, n, ok := roundTrip(key, version, req)
		if ok && n > baseLen { // else not in this version
			c.perByte = max(c.perByte, float64(decoded-baseDecoded)/float64(n-baseLen))
		}
	}
	for _, path := range arrayPaths(reflect.TypeOf(base).Elem(), nil) {
		for _, tagged := range []bool{false, true} {
			if req, ok := manyElements(key, version, path, measureElements, tagged); ok {
				measure(req)
			}
		}
	}
	if base.IsFlexible() {
		// Unknown tagged fields of the request itself, keys as small as
		// they can be (one byte each below 128) and empty values.
		req := kmsg.RequestForKey(key)
		req.SetVersion(version)
		if tags := reflect.ValueOf(req).Elem().FieldByName("UnknownTags"); tags.IsValid() {
			t := tags.Addr().Interface().(*kmsg.Tags)
			for i := range measureElements {
				t.Set(uint32(i), nil)
			}
			measure(req)
		}
	}
	// The allocator rounds an allocation up to its size class, by at most
	// an eighth; and a byte decodes into at least a byte of a slice or a
	// string.
	c.perByte = max(c.perByte, 1) * 9 / 8
	return c
}

// manyElements returns a request of key at version whose array at path
// holds n zero elements, the fewest bytes an element encodes to, each
// with an unknown tagged field (a map each) when tagged. It reports false
// when the request cannot have such elements.
func manyElements(key, version int16, path []int, n int, tagged bool) (kmsg.Request, bool) {
	req := kmsg.RequestForKey(key)
	req.SetVersion(version)
	elems := fill(reflect.ValueOf(req).Elem(), path, n)
	if !tagged {
		return req, true
	}
	if !req.IsFlexible() || elems.Type().Elem().Kind() != reflect.Struct {
		return nil, false
	}
	for i := range elems.Len() {
		if tags := elems.Index(i).FieldByName("UnknownTags"); tags.IsValid() {
			tags.Addr().Interface().(*kmsg.Tags).Set(0, nil)
		}
	}
	return req, true
}

// roundTrip encodes req with kmsg and decodes it again, returning what the
// decoded request holds and the encoded size.
func roundTrip(key, version int16, req kmsg.Request) (decoded int64, n int, ok bool) {
	b := req.AppendTo(nil)
	out := kmsg.RequestForKey(key)
	out.SetVersion(version)
	if err := out.ReadFrom(b); err != nil {
		return 0, 0, false
	}
	return DecodedSize(out), len(b), true
}

// arrayPaths returns the field index paths, from t, of every slice field
// other than []byte, at any depth; a path crosses a slice of structs as
// "element 0".
func arrayPaths(t reflect.Type, prefix []int) [][]int {
	var paths [][]int
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		path := append(append([]int(nil), prefix...), i)
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		switch {
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8:
			paths = append(paths, path)
			if ft.Elem().Kind() == reflect.Struct {
				paths = append(paths, arrayPaths(ft.Elem(), path)...)
			}
		case ft.Kind() == reflect.Struct && f.Type.Kind() != reflect.Pointer:
			paths = append(paths, arrayPaths(ft, path)...)
		}
	}
	return paths
}

// fill makes the slice at path, from v, hold n zero elements, and each
// slice on the way there one; it returns the slice.
func fill(v reflect.Value, path []int, n int) reflect.Value {
	for i, idx := range path {
		f := v.Field(idx)
		if f.Kind() == reflect.Pointer {
			if f.IsNil() {
				f.Set(reflect.New(f.Type().Elem()))
			}
			f = f.Elem()
		}
		if f.Kind() != reflect.Slice {
			v = f
			continue
		}
		if i == len(path)-1 {
			f.Set(reflect.MakeSlice(f.Type(), n, n))
			return f
		}
		if f.Len() == 0 {
			f.Set(reflect.MakeSlice(f.Type(), 1, 1))
		}
		v = f.Index(0)
	}
	return v
}

// DecodedSize returns about how much memory a decoded kmsg request holds
// beyond its body: its structs, slices, strings and tagged-field maps,
// and not the []byte fields, which point into the body.
func DecodedSize(req kmsg.Request) int64 {
	v := reflect.ValueOf(req)
	return int64(v.Type().Elem().Size()) + heldBy(v.Elem())
}

// heldBy returns what v points to, v itself not counted.
func heldBy(v reflect.Value) int64 {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return 0
		}
		return int64(v.Type().Elem().Size()) + heldBy(v.Elem())
	case reflect.String:
		return int64(v.Len())
	case reflect.Slice:
		if v.IsNil() || v.Type().Elem().Kind() == reflect.Uint8 {
			return 0
		}
		n := int64(v.Cap()) * int64(v.Type().Elem().Size())
		if holdsMore(v.Type().Elem()) {
			for i := range v.Len() {
				n += heldBy(v.Index(i))
			}
		}
		return n
	case reflect.Map:
		if v.IsNil() {
			return 0
		}
		return tagMapBytes + int64(v.Len())*tagEntryBytes
	case reflect.Struct:
		var n int64
		for i := range v.NumField() {
			n += heldBy(v.Field(i))
		}
		return n
	}
	return 0
}

// holdsMore reports whether a value of t may point to memory of its own
// that DecodedSize counts.
func holdsMore(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.String, reflect.Map:
		return true
	case reflect.Slice:
		return t.Elem().Kind() != reflect.Uint8
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsMore(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}
