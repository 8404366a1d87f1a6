package log

import (
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/vfs"
)

// TestManagerOnRoll: the Manager's OnRoll hears each roll of a log it
// created and of one it opened at start, with the partition, the reason
// and both bases.
func TestManagerOnRoll(t *testing.T) {
	fsys, clk, cfg := vfs.NewMem(), newClock(), DefaultConfig()
	cfg.SegmentMs = 1000
	var mu sync.Mutex
	var rolls []string
	open := func() *Manager {
		m, err := OpenManager(fsys, "/data", ManagerOptions{
			Logger: testkit.Logger(t, slog.LevelDebug), Now: clk.Now, ConfigFor: func(string) Config { return cfg },
			OnRoll: func(tp TopicPartition, r Roll) {
				mu.Lock()
				defer mu.Unlock()
				rolls = append(rolls, fmt.Sprintf("%s %s %d->%d %v", tp.Dir(), r.Reason, r.OldBase, r.NewBase, r.Time.Equal(clk.Now())))
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := open()
	l, err := m.Create("t", 2, [16]byte{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	appendAndAge := func(l *Log) {
		mustAppend(t, l, logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Values(3, 10)...), 0)
		clk.Advance(2 * time.Second)
		m.Maintain(clk.Now())
	}
	appendAndAge(l)
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	m = open()
	defer m.Close()
	appendAndAge(m.Get("t", 2))
	mu.Lock()
	defer mu.Unlock()
	if got := fmt.Sprint(rolls); got != "[t-2 segment.ms 0->3 true t-2 segment.ms 3->6 true]" {
		t.Fatalf("rolls %s", got)
	}
}
