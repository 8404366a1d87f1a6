package testkit

import (
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestWaitForReturnsOnceTrue(t *testing.T) {
	n := 0
	WaitFor(t, "three polls", func() (bool, string) { n++; return n == 3, "" })
	if n != 3 {
		t.Fatalf("polled %d times", n)
	}
}

func TestLoggerWritesToTest(t *testing.T) {
	var lines []string
	r := &lineRecorder{TB: t, lines: &lines}
	Logger(r, slog.LevelInfo).Debug("hidden")
	Logger(r, slog.LevelInfo).Info("shown", "k", 1)
	if len(lines) != 1 || !strings.Contains(lines[0], "msg=shown k=1") {
		t.Fatalf("logged %q", lines)
	}
}

type lineRecorder struct {
	testing.TB
	lines *[]string
}

func (r *lineRecorder) Helper()         {}
func (r *lineRecorder) Log(args ...any) { *r.lines = append(*r.lines, args[0].(string)) }

func TestClock(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewClock(start)
	c.Advance(time.Second)
	if got := c.Now(); !got.Equal(start.Add(time.Second)) {
		t.Fatalf("now %v", got)
	}
}

func TestFreePortsDistinct(t *testing.T) {
	seen := map[int]bool{}
	for _, p := range FreePorts(t, 20) {
		if seen[p] || p == 0 {
			t.Fatalf("port %d twice or zero", p)
		}
		seen[p] = true
	}
}

func TestSeedFromEnv(t *testing.T) {
	t.Setenv(SeedEnv, "42")
	if got := Seed(t); got != 42 {
		t.Fatalf("seed %d, want 42 from %s", got, SeedEnv)
	}
}
