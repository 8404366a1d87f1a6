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
