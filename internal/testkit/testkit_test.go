package testkit

import (
	"log/slog"
	"strings"
	"testing"
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
