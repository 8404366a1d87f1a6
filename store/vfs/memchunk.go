package vfs

import (
	"sync/atomic"
	"unsafe"
)

// A memory file's bytes live in chunks: chunk i holds the bytes at
// [i*chunkSize, (i+1)*chunkSize). Appends fill the last chunk and then add a
// new one, so no byte is copied once written, however large the file grows.
//
// The first chunk is small while it can be, on the Go heap, grown by
// doubling up to smallChunk bytes (a small file, such as an index or a
// checkpoint, costs what it holds); every other chunk is large: exactly chunkSize bytes outside the Go heap where
// the platform allows it (chunk_linux.go), so that the data a node keeps in
// memory does not count against its soft memory limit and is not scanned
// or copied by the garbage collector; it is returned to the system when
// the last reference to it goes.
//
// Sync does not copy either: the synced state is the chunk list as it was
// (a slice header, sharing the list's backing array until the list changes
// below its length) and the size then. A write that would change a byte the
// synced state can see copies that one chunk first (copy on write); appends
// past the synced size never do. Bytes past the file's size are zero in
// every chunk, so growing a file (Truncate, WriteAt past the end) needs no
// clearing, and a missing (nil) chunk reads as zeros.
const (
	chunkSize  = 1 << 20
	smallChunk = 64 << 10
	firstChunk = 512
)

// memData is the content of one memory file. Its owner (memNode) guards it.
type memData struct {
	held *atomic.Int64 // the bytes of chunks the file system holds

	chunks [][]byte // len(chunks) == chunks covering size; nil: zeros
	size   int64

	synced     [][]byte // chunks as of the last Sync
	syncedSize int64
	// syncedShared says synced shares chunks' backing array: an entry of
	// chunks below len(synced) may not be replaced until synced is copied.
	syncedShared bool
}

func sameChunk(a, b []byte) bool {
	return a != nil && b != nil && unsafe.SliceData(a) == unsafe.SliceData(b)
}

// syncedSees returns how many leading bytes of chunk i the synced state
// reads from the chunk it shares with the current state; 0 if it shares
// none.
func (d *memData) syncedSees(i int) int {
	if i >= len(d.synced) || !sameChunk(d.synced[i], d.chunks[i]) {
		return 0
	}
	return int(min(int64(len(d.synced[i])), d.syncedSize-int64(i)*chunkSize))
}

// unshareSynced gives synced its own list before chunks changes an entry
// below len(synced).
func (d *memData) unshareSynced() {
	if d.syncedShared {
		d.synced = append([][]byte(nil), d.synced...)
		d.syncedShared = false
	}
}

func (d *memData) alloc(n int) []byte {
	if n > smallChunk {
		d.held.Add(chunkSize)
		return allocLarge()
	}
	d.held.Add(int64(n))
	return make([]byte, n)
}

func (d *memData) free(c []byte) {
	if c == nil {
		return
	}
	if cap(c) > smallChunk {
		d.held.Add(-chunkSize)
		freeLarge(c)
		return
	}
	d.held.Add(-int64(cap(c)))
}

// inSynced reports whether c is one of the synced state's chunks at index i.
func (d *memData) inSynced(i int, c []byte) bool {
	return i < len(d.synced) && sameChunk(d.synced[i], c)
}

// writable returns chunk i ready for a write of its bytes [lo, hi): large
// enough, and not shared with the synced state where that state can see
// the write.
func (d *memData) writable(i, lo, hi int) []byte {
	c := d.chunks[i]
	shared := lo < d.syncedSees(i)
	if c != nil && !shared {
		if hi <= len(c) {
			return c
		}
		if hi <= cap(c) {
			// Bytes past the size are zero already. The synced state
			// keeps its own (shorter) view of the chunk.
			if i < len(d.synced) {
				d.unshareSynced()
			}
			c = c[:hi]
			d.chunks[i] = c
			return c
		}
	}
	// Only the bytes below the size are the file's: past it the chunk
	// may hold bytes the synced state still sees.
	valid := 0
	if c != nil {
		valid = int(min(int64(len(c)), max(0, d.size-int64(i)*chunkSize)))
	}
	need := max(hi, valid)
	n := chunkSize
	if i == 0 && need <= smallChunk {
		n = max(firstChunk, need)
		if c != nil {
			n = max(n, min(2*cap(c), smallChunk))
		}
	}
	nc := d.alloc(n)
	if n <= smallChunk {
		nc = nc[:need]
	}
	if c != nil {
		copy(nc, c[:valid])
		if !d.inSynced(i, c) {
			d.free(c)
		}
	}
	if i < len(d.synced) {
		d.unshareSynced()
	}
	d.chunks[i] = nc
	return nc
}

// cover makes chunks cover size bytes, with nil (zero) chunks.
func (d *memData) cover(size int64) {
	n := int((size + chunkSize - 1) / chunkSize)
	for len(d.chunks) < n {
		d.chunks = append(d.chunks, nil)
	}
}

func (d *memData) writeAt(p []byte, off int64) {
	if end := off + int64(len(p)); end > d.size {
		d.cover(end)
		d.size = end
	}
	for len(p) > 0 {
		i, lo := int(off/chunkSize), int(off%chunkSize)
		hi := min(chunkSize, lo+len(p))
		c := d.writable(i, lo, hi)
		n := copy(c[lo:hi], p)
		p, off = p[n:], off+int64(n)
	}
}

// readAt reads from off, which is below the size, into p and returns how
// many bytes it read: up to the size.
func (d *memData) readAt(p []byte, off int64) int {
	p = p[:min(int64(len(p)), d.size-off)]
	n := len(p)
	for len(p) > 0 {
		i, lo := int(off/chunkSize), int(off%chunkSize)
		seg := p[:min(len(p), chunkSize-lo)]
		c := d.chunks[i]
		k := 0
		if lo < len(c) {
			k = copy(seg, c[lo:])
		}
		clear(seg[k:])
		p, off = p[len(seg):], off+int64(len(seg))
	}
	return n
}

func (d *memData) truncate(size int64) {
	if size >= d.size {
		d.cover(size)
		d.size = size
		return
	}
	keep := int((size + chunkSize - 1) / chunkSize)
	if keep < len(d.synced) {
		d.unshareSynced()
	}
	for i := keep; i < len(d.chunks); i++ {
		if !d.inSynced(i, d.chunks[i]) {
			d.free(d.chunks[i])
		}
	}
	clear(d.chunks[keep:])
	d.chunks = d.chunks[:keep]
	old := d.size
	d.size = size
	// Keep the bytes past the size zero in the last chunk.
	if keep > 0 {
		i := keep - 1
		lo := int(size - int64(i)*chunkSize)
		hi := int(min(int64(chunkSize), old-int64(i)*chunkSize))
		if c := d.chunks[i]; c != nil && lo < min(hi, len(c)) {
			c = d.writable(i, lo, min(hi, len(c)))
			clear(c[lo:min(hi, len(c))])
		}
	}
}

// clearPast zeroes the bytes past the size in the last chunk, as a copy of
// a synced state needs: its chunks may hold bytes written after the sync.
func (d *memData) clearPast() {
	if len(d.chunks) == 0 {
		return
	}
	i := len(d.chunks) - 1
	if c := d.chunks[i]; c != nil {
		clear(c[min(int64(len(c)), d.size-int64(i)*chunkSize):])
	}
}

// sync makes the current state the synced one, and releases the chunks
// only the previous synced state held.
func (d *memData) sync() {
	if !d.syncedShared {
		for i, c := range d.synced {
			if i >= len(d.chunks) || !sameChunk(d.chunks[i], c) {
				d.free(c)
			}
		}
	}
	d.synced, d.syncedSize, d.syncedShared = d.chunks, d.size, true
}

// release frees every chunk; the file holds nothing afterwards.
func (d *memData) release() {
	d.truncate(0)
	d.sync()
	d.chunks, d.synced = nil, nil
}

// copyChunks returns a copy of src's first size bytes, allocated from d;
// seen maps a chunk already copied to its copy, so a chunk shared by the
// current and synced states stays shared in the copy.
func (d *memData) copyChunks(src [][]byte, seen map[*byte][]byte) [][]byte {
	out := make([][]byte, len(src))
	for i, c := range src {
		if c == nil {
			continue
		}
		key := unsafe.SliceData(c)
		nc, ok := seen[key]
		if !ok {
			nc = d.alloc(cap(c))
			if cap(c) <= smallChunk {
				nc = nc[:len(c)]
			}
			copy(nc, c)
			seen[key] = nc
		}
		out[i] = nc[:len(c)]
	}
	return out
}
