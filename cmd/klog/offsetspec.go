package main

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The offset grammar of -o/--offset, one for every klog command that takes
// a position in a partition:
//
//	spec   = bound | bound ":" bound | ":" bound | bound ":"
//	bound  = "start" | "end" | N | "-" N | "+" N | "@" time
//	time   = RFC3339 | YYYY-MM-DD | unix-milliseconds | ("-"|"+") duration
//
//	start        the log start offset (oldest record)
//	end          the end of the partition (high watermark, or the last stable
//	             offset when reading committed data) captured when klog starts
//	N            exactly offset N, clamped to [start, end]
//	-N           N records before end, but not before start
//	+N           N records after start, but not after end
//	@T           the first record with a timestamp at or after T; end if none
//	             (@-1h is one hour ago, @2024-01-15 midnight UTC)
//	A:B          from A up to but excluding B; ":B" starts at start; "A:" has
//	             no upper bound
//
// Every bound resolves per partition to an offset; an upper bound stops that
// partition when consumption reaches it.

// boundKind says how an offsetBound resolves.
type boundKind int

const (
	boundStart     boundKind = iota // log start offset
	boundEnd                        // end offset captured at start
	boundExact                      // offset n
	boundFromEnd                    // end - n
	boundFromStart                  // start + n
	boundTime                       // first offset with timestamp >= millis
)

// offsetBound is one side of an offset spec.
type offsetBound struct {
	kind   boundKind
	n      int64 // offset or distance for exact, from-end, from-start
	millis int64 // unix milliseconds for boundTime
}

// offsetSpec is a parsed -o value: where to start and, optionally, where to
// stop (exclusive).
type offsetSpec struct {
	start offsetBound
	stop  *offsetBound
}

// parseOffsetSpec parses s according to the grammar above. Relative times
// are taken from now.
func parseOffsetSpec(s string, now time.Time) (offsetSpec, error) {
	if s == "" {
		return offsetSpec{}, fmt.Errorf("empty offset")
	}
	if b, err := parseBound(s, now); err == nil {
		return offsetSpec{start: b}, nil
	}
	// Timestamps contain colons, so try every colon as the range separator
	// and take the first split where both sides parse.
	var firstErr error
	for i := 0; i < len(s); i++ {
		if s[i] != ':' {
			continue
		}
		left, right := s[:i], s[i+1:]
		spec := offsetSpec{start: offsetBound{kind: boundStart}}
		if left != "" {
			b, err := parseBound(left, now)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			spec.start = b
		}
		if right != "" {
			b, err := parseBound(right, now)
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				continue
			}
			spec.stop = &b
		} else if left == "" {
			continue // a lone ":" says nothing
		}
		return spec, nil
	}
	if firstErr == nil {
		_, firstErr = parseBound(s, now)
	}
	return offsetSpec{}, fmt.Errorf("offset %q: %w", s, firstErr)
}

// parseBound parses one bound.
func parseBound(s string, now time.Time) (offsetBound, error) {
	switch {
	case s == "start" || s == "oldest" || s == "beginning":
		return offsetBound{kind: boundStart}, nil
	case s == "end" || s == "newest":
		return offsetBound{kind: boundEnd}, nil
	case strings.HasPrefix(s, "@"):
		ms, err := parseTimestamp(s[1:], now)
		if err != nil {
			return offsetBound{}, err
		}
		return offsetBound{kind: boundTime, millis: ms}, nil
	case strings.HasPrefix(s, "-"), strings.HasPrefix(s, "+"):
		n, err := parseCount(s[1:])
		if err != nil {
			return offsetBound{}, err
		}
		if s[0] == '-' {
			return offsetBound{kind: boundFromEnd, n: n}, nil
		}
		return offsetBound{kind: boundFromStart, n: n}, nil
	default:
		n, err := parseCount(s)
		if err != nil {
			return offsetBound{}, fmt.Errorf("want start, end, N, -N, +N or @TIME")
		}
		return offsetBound{kind: boundExact, n: n}, nil
	}
}

// parseCount parses a non-negative decimal number.
func parseCount(s string) (int64, error) {
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, fmt.Errorf("%q: want a non-negative number", s)
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: want a non-negative number", s)
	}
	return n, nil
}

// parseTimestamp parses the time after "@" into unix milliseconds.
func parseTimestamp(s string, now time.Time) (int64, error) {
	if s == "" {
		return 0, fmt.Errorf("empty timestamp after @")
	}
	if s[0] == '-' || s[0] == '+' {
		d, err := time.ParseDuration(s)
		if err != nil {
			return 0, fmt.Errorf("relative time %q: %w", s, err)
		}
		return now.Add(d).UnixMilli(), nil
	}
	if allDigits(s) {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("unix milliseconds %q: %w", s, err)
		}
		return ms, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, fmt.Errorf("timestamp %q: want RFC3339, YYYY-MM-DD, unix milliseconds or a duration like -1h", s)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// partitionOffsets are what a bound resolves against, for one partition.
type partitionOffsets struct {
	start int64           // log start offset
	end   int64           // end offset captured at start
	times map[int64]int64 // first offset at or after each timestamp in the spec
}

// resolve returns the offset the bound names in one partition, always within
// [start, end].
func (b offsetBound) resolve(p partitionOffsets) int64 {
	var o int64
	switch b.kind {
	case boundStart:
		o = p.start
	case boundEnd:
		o = p.end
	case boundExact:
		o = b.n
	case boundFromEnd:
		o = p.end - b.n
	case boundFromStart:
		o = p.start + b.n
		if o < p.start { // overflow
			o = p.end
		}
	case boundTime:
		t, ok := p.times[b.millis]
		if !ok {
			t = p.end
		}
		o = t
	}
	return max(p.start, min(o, p.end))
}

// kgoOffset returns the bound as a franz-go offset, used where the broker
// resolves it (the reset offset of a consumer group).
func (b offsetBound) kgoOffset() kgo.Offset {
	switch b.kind {
	case boundEnd:
		return kgo.NewOffset().AtEnd()
	case boundExact:
		return kgo.NewOffset().At(b.n)
	case boundFromEnd:
		return kgo.NewOffset().AtEnd().Relative(-b.n)
	case boundFromStart:
		return kgo.NewOffset().AtStart().Relative(b.n)
	case boundTime:
		return kgo.NewOffset().AfterMilli(b.millis)
	default:
		return kgo.NewOffset().AtStart()
	}
}

// timestamps returns the distinct timestamps the spec needs looked up.
func (s offsetSpec) timestamps() []int64 {
	var out []int64
	if s.start.kind == boundTime {
		out = append(out, s.start.millis)
	}
	if s.stop != nil && s.stop.kind == boundTime && (len(out) == 0 || out[0] != s.stop.millis) {
		out = append(out, s.stop.millis)
	}
	return out
}
