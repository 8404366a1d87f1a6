package ledger

import "testing"

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		acked [][3]int64 // partition, sequence, offset
		reads []Read
		want  Report
	}{
		{
			name:  "all read once, in order, unacknowledged extras allowed",
			acked: [][3]int64{{0, 0, 0}, {0, 1, 1}, {1, 0, 0}},
			reads: []Read{{0, 0, 0}, {1, 0, 0}, {0, 1, 1}, {0, 2, 2}},
			want:  Report{Acked: 3, Read: 4},
		},
		{
			name:  "lost",
			acked: [][3]int64{{0, 0, 0}, {0, 1, 1}, {0, 2, 2}},
			reads: []Read{{0, 0, 0}, {0, 2, 2}},
			want:  Report{Acked: 3, Read: 2, Lost: 1},
		},
		{
			name:  "duplicated",
			acked: [][3]int64{{0, 0, 0}, {0, 1, 1}},
			reads: []Read{{0, 0, 0}, {0, 1, 1}, {0, 1, 2}},
			want:  Report{Acked: 2, Read: 3, Duplicated: 1},
		},
		{
			name:  "reordered",
			acked: [][3]int64{{0, 0, 0}, {0, 1, 2}, {0, 2, 1}},
			reads: []Read{{0, 0, 0}, {0, 2, 1}, {0, 1, 2}},
			want:  Report{Acked: 3, Read: 3, Reordered: 1},
		},
		{
			name:  "moved",
			acked: [][3]int64{{0, 0, 0}, {0, 1, 1}},
			reads: []Read{{0, 0, 0}, {0, 1, 5}},
			want:  Report{Acked: 2, Read: 2, Moved: 1},
		},
		{
			name:  "a sequence of another partition is not this one's",
			acked: [][3]int64{{0, 0, 0}, {1, 0, 0}},
			reads: []Read{{1, 0, 0}},
			want:  Report{Acked: 2, Read: 1, Lost: 1},
		},
	} {
		l := New()
		for _, a := range tc.acked {
			l.Ack(int32(a[0]), a[1], a[2])
		}
		l.Ack(int32(tc.acked[0][0]), tc.acked[0][1], tc.acked[0][2]) // a second ack of one record counts once
		got := l.Check(tc.reads)
		if got.OK() != tc.want.OK() || got.Acked != tc.want.Acked || got.Read != tc.want.Read ||
			got.Lost != tc.want.Lost || got.Duplicated != tc.want.Duplicated || got.Reordered != tc.want.Reordered || got.Moved != tc.want.Moved {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
		if !got.OK() && len(got.Examples) == 0 {
			t.Errorf("%s: a failed check gives no example", tc.name)
		}
	}
}

func TestReportString(t *testing.T) {
	r := Report{Acked: 10, Lost: 1}
	if got, want := r.String(), "acked: 10, lost: 1, duplicated: 0, reordered: 0"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestAckedIn(t *testing.T) {
	l := New()
	l.Ack(0, 0, 0)
	l.Ack(0, 0, 0) // the same record again
	l.Ack(0, 1, 1)
	l.Ack(2, 0, 0)
	if got := [3]int{l.AckedIn(0), l.AckedIn(1), l.AckedIn(2)}; got != [3]int{2, 0, 1} {
		t.Fatalf("AckedIn of partitions 0, 1, 2: %v, want [2 0 1]", got)
	}
}
