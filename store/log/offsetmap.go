package log

import "hash/maphash"

// offsetMap is the cleaner's bounded map from a key's hash to the latest
// offset holding that key, as Kafka's SkimpyOffsetMap: open addressing
// over a table fixed when it is made, 24 bytes a slot (a 128-bit hash and
// the offset); keys are not stored. Two keys whose 128-bit hashes collide
// are taken for one, as in Kafka (which uses MD5).
type offsetMap struct {
	seeds  [2]maphash.Seed
	slots  []mapSlot
	n      int // keys held
	max    int // keys it may hold: loadFactor of the slots
	latest int64
}

type mapSlot struct {
	h1, h2 uint64
	offset int64 // -1: empty
}

// offsetMapSlotBytes is the memory of one slot.
const offsetMapSlotBytes = 24

// offsetMapLoadFactor is how full the table is let to get, as Kafka's
// log.cleaner.io.buffer.load.factor (0.9).
const offsetMapLoadFactor = 0.9

// newOffsetMap makes a map of at most memBytes that holds at least
// wantKeys keys when that fits (the cleaner asks for no more than the
// dirty section can hold).
func newOffsetMap(memBytes int64, wantKeys int64) *offsetMap {
	slots := max(memBytes/offsetMapSlotBytes, 2)
	if need := int64(float64(wantKeys)/offsetMapLoadFactor) + 2; need < slots {
		slots = need
	}
	m := &offsetMap{seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}, slots: make([]mapSlot, slots), latest: -1}
	for i := range m.slots {
		m.slots[i].offset = -1
	}
	m.max = max(int(float64(slots)*offsetMapLoadFactor), 1)
	return m
}

func (m *offsetMap) hash(key []byte) (uint64, uint64) {
	return maphash.Bytes(m.seeds[0], key), maphash.Bytes(m.seeds[1], key)
}

// room reports whether n more keys surely fit.
func (m *offsetMap) room(n int) bool { return m.n+n <= m.max }

// put records offset as the latest for key; a full map (room false) takes
// new keys all the same up to its slots, so callers check room first.
func (m *offsetMap) put(key []byte, offset int64) {
	h1, h2 := m.hash(key)
	for i := h1 % uint64(len(m.slots)); ; i = (i + 1) % uint64(len(m.slots)) {
		s := &m.slots[i]
		if s.offset < 0 {
			if m.n >= len(m.slots)-1 {
				return // never fill the last slot: lookups must end
			}
			*s = mapSlot{h1: h1, h2: h2, offset: offset}
			m.n++
			break
		}
		if s.h1 == h1 && s.h2 == h2 {
			s.offset = offset
			break
		}
	}
	m.latest = max(m.latest, offset)
}

// get returns the latest offset of key, -1 when the map does not hold it.
func (m *offsetMap) get(key []byte) int64 {
	h1, h2 := m.hash(key)
	for i := h1 % uint64(len(m.slots)); ; i = (i + 1) % uint64(len(m.slots)) {
		s := &m.slots[i]
		if s.offset < 0 {
			return -1
		}
		if s.h1 == h1 && s.h2 == h2 {
			return s.offset
		}
	}
}
