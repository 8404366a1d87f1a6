package procfs

import (
	"errors"
	"strings"
	"testing"
)

func TestParseStatus(t *testing.T) {
	in := "Name:\tklog\nVmPeak:\t  9000 kB\nVmHWM:\t   20480 kB\nVmRSS:\t   10240 kB\nThreads:\t5\n"
	rss, hwm, err := ParseStatus(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if rss != 10240 || hwm != 20480 {
		t.Fatalf("rss %d hwm %d", rss, hwm)
	}
	if _, _, err := ParseStatus(strings.NewReader("Name:\tzombie\n")); !errors.Is(err, ErrFormat) {
		t.Fatalf("err %v, want ErrFormat", err)
	}
}

func TestParseStat(t *testing.T) {
	// The command name holds spaces and a ')' to check field counting.
	line := "4242 (kfake server) x) S 1 4242 4242 0 -1 4194560 1000 0 0 0 250 75 0 0 20 0 9 0 123 456 789"
	s, err := ParseStat(line)
	if err != nil {
		t.Fatal(err)
	}
	if s.UserS != 2.5 || s.SysS != 0.75 {
		t.Fatalf("user %v sys %v, want 2.5 0.75", s.UserS, s.SysS)
	}
	for _, bad := range []string{"", "12 (x", "12 (x) S 1 2", "1 (x) S 1 2 3 4 5 6 7 8 9 u s"} {
		if _, err := ParseStat(bad); !errors.Is(err, ErrFormat) {
			t.Errorf("ParseStat(%q) err %v, want ErrFormat", bad, err)
		}
	}
}
