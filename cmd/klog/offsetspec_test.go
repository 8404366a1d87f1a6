package main

import (
	"testing"
	"time"
)

func TestParseOffsetSpec(t *testing.T) {
	now := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	at := func(ts time.Time) offsetBound { return offsetBound{kind: boundTime, millis: ts.UnixMilli()} }
	start := offsetBound{kind: boundStart}
	end := offsetBound{kind: boundEnd}
	exact := func(n int64) offsetBound { return offsetBound{kind: boundExact, n: n} }
	bp := func(b offsetBound) *offsetBound { return &b }

	tests := []struct {
		in   string
		want offsetSpec
	}{
		{"start", offsetSpec{start: start}},
		{"oldest", offsetSpec{start: start}},
		{"end", offsetSpec{start: end}},
		{"0", offsetSpec{start: exact(0)}},
		{"42", offsetSpec{start: exact(42)}},
		{"-5", offsetSpec{start: offsetBound{kind: boundFromEnd, n: 5}}},
		{"+5", offsetSpec{start: offsetBound{kind: boundFromStart, n: 5}}},
		{"@1700000000000", offsetSpec{start: offsetBound{kind: boundTime, millis: 1700000000000}}},
		{"@2024-01-15", offsetSpec{start: at(time.Date(2024, 1, 15, 0, 0, 0, 0, time.UTC))}},
		{"@2024-01-15T10:30:00Z", offsetSpec{start: at(time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC))}},
		{"@2024-01-15T10:30:00+02:00", offsetSpec{start: at(time.Date(2024, 1, 15, 8, 30, 0, 0, time.UTC))}},
		{"@-1h", offsetSpec{start: at(now.Add(-time.Hour))}},
		{"@-1h:end", offsetSpec{start: at(now.Add(-time.Hour)), stop: bp(end)}},
		{"@2024-01-15T10:30:00Z:end", offsetSpec{start: at(time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC)), stop: bp(end)}},
		{"@2024-01-15T10:30:00Z:@2024-01-16T00:00:00Z", offsetSpec{
			start: at(time.Date(2024, 1, 15, 10, 30, 0, 0, time.UTC)),
			stop:  bp(at(time.Date(2024, 1, 16, 0, 0, 0, 0, time.UTC))),
		}},
		{"3:7", offsetSpec{start: exact(3), stop: bp(exact(7))}},
		{":end", offsetSpec{start: start, stop: bp(end)}},
		{":10", offsetSpec{start: start, stop: bp(exact(10))}},
		{"10:", offsetSpec{start: exact(10)}},
		{"-10:-2", offsetSpec{start: offsetBound{kind: boundFromEnd, n: 10}, stop: bp(offsetBound{kind: boundFromEnd, n: 2})}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseOffsetSpec(tc.in, now)
			if err != nil {
				t.Fatalf("parse %q: %v", tc.in, err)
			}
			if got.start != tc.want.start {
				t.Errorf("start = %+v, want %+v", got.start, tc.want.start)
			}
			if (got.stop == nil) != (tc.want.stop == nil) || (got.stop != nil && *got.stop != *tc.want.stop) {
				t.Errorf("stop = %+v, want %+v", got.stop, tc.want.stop)
			}
		})
	}
}

func TestParseOffsetSpecErrors(t *testing.T) {
	for _, in := range []string{
		"", ":", "::", "yesterday", "-", "+", "--5", "+-5", "1.5", "@", "@tomorrow", "@-1parsec",
		"1:2:3", "start:nope", "nope:end", "99999999999999999999", "@2024-13-45",
	} {
		if got, err := parseOffsetSpec(in, time.Now()); err == nil {
			t.Errorf("parse %q = %+v, want an error", in, got)
		}
	}
}

func TestOffsetBoundResolve(t *testing.T) {
	p := partitionOffsets{start: 10, end: 20, times: map[int64]int64{1000: 15}}
	tests := []struct {
		b    offsetBound
		want int64
	}{
		{offsetBound{kind: boundStart}, 10},
		{offsetBound{kind: boundEnd}, 20},
		{offsetBound{kind: boundExact, n: 12}, 12},
		{offsetBound{kind: boundExact, n: 3}, 10},  // before start: clamped
		{offsetBound{kind: boundExact, n: 99}, 20}, // past end: clamped
		{offsetBound{kind: boundFromEnd, n: 3}, 17},
		{offsetBound{kind: boundFromEnd, n: 30}, 10},
		{offsetBound{kind: boundFromStart, n: 3}, 13},
		{offsetBound{kind: boundFromStart, n: 30}, 20},
		{offsetBound{kind: boundFromStart, n: 1<<63 - 1}, 20}, // overflow
		{offsetBound{kind: boundTime, millis: 1000}, 15},
		{offsetBound{kind: boundTime, millis: 5000}, 20}, // no lookup: end
	}
	for _, tc := range tests {
		if got := tc.b.resolve(p); got != tc.want {
			t.Errorf("%+v.resolve = %d, want %d", tc.b, got, tc.want)
		}
	}
	// An empty partition resolves everything to its one offset.
	empty := partitionOffsets{start: 5, end: 5}
	for _, k := range []boundKind{boundStart, boundEnd, boundExact, boundFromEnd, boundFromStart, boundTime} {
		if got := (offsetBound{kind: k, n: 2}).resolve(empty); got != 5 {
			t.Errorf("kind %d on empty partition = %d, want 5", k, got)
		}
	}
}
