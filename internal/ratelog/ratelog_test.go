package ratelog_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/klogdev/klog/internal/ratelog"
	"github.com/klogdev/klog/internal/testkit"
)

func newLogger(clock *testkit.Clock) (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	text := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})
	h := ratelog.New(text, ratelog.Options{Burst: 3, Window: time.Second, Now: clock.Now})
	return slog.New(h), &buf
}

func lines(buf *bytes.Buffer) []string {
	s := strings.TrimSpace(buf.String())
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func TestRepeatsBeyondBurstAreDropped(t *testing.T) {
	clock := testkit.NewClock(time.Unix(1_700_000_000, 0))
	log, buf := newLogger(clock)
	for i := range 20_000 {
		log.Warn("cannot decompress batch", "offset", i)
	}
	if got := len(lines(buf)); got != 3 {
		t.Fatalf("20,000 repeats in one window logged %d lines, want the burst of 3:\n%s", got, buf)
	}
}

func TestNextWindowReportsSuppressed(t *testing.T) {
	clock := testkit.NewClock(time.Unix(1_700_000_000, 0))
	log, buf := newLogger(clock)
	for range 10 {
		log.Warn("disk full")
	}
	clock.Advance(time.Second)
	log.Warn("disk full")
	ls := lines(buf)
	if len(ls) != 4 {
		t.Fatalf("got %d lines, want 3 then 1:\n%s", len(ls), buf)
	}
	if !strings.Contains(ls[3], "suppressed=7") {
		t.Fatalf("first line of the next window = %q, want suppressed=7", ls[3])
	}
	if strings.Contains(ls[0], "suppressed") {
		t.Fatalf("first line carries a suppressed count: %q", ls[0])
	}
}

func TestKindsAreCountedApart(t *testing.T) {
	clock := testkit.NewClock(time.Unix(1_700_000_000, 0))
	log, buf := newLogger(clock)
	child := log.With("partition", 7)
	for range 10 {
		log.Warn("a")
		child.Warn("a") // same kind as the parent's: counted together
		log.Error("a")  // another level: another kind
		log.Warn("b")
	}
	var a, aErr, b int
	for _, l := range lines(buf) {
		switch {
		case strings.Contains(l, "level=WARN") && strings.Contains(l, "msg=a"):
			a++
		case strings.Contains(l, "level=ERROR"):
			aErr++
		case strings.Contains(l, "msg=b"):
			b++
		}
	}
	if a != 3 || aErr != 3 || b != 3 {
		t.Fatalf("warn a=%d error a=%d warn b=%d lines, want 3 each:\n%s", a, aErr, b, buf)
	}
}

func TestDebugIsNotLimited(t *testing.T) {
	clock := testkit.NewClock(time.Unix(1_700_000_000, 0))
	log, buf := newLogger(clock)
	for range 50 {
		log.Debug("trace")
	}
	if got := len(lines(buf)); got != 50 {
		t.Fatalf("debug lines = %d, want all 50", got)
	}
}

func TestManyKindsStayBounded(t *testing.T) {
	clock := testkit.NewClock(time.Unix(1_700_000_000, 0))
	log, buf := newLogger(clock)
	for i := range 5000 {
		log.Warn("kind " + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + time.Duration(i).String())
	}
	if got := len(lines(buf)); got != 5000 {
		t.Fatalf("5000 distinct lines logged %d, want every one (distinct kinds are never dropped)", got)
	}
}
