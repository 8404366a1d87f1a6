package controller

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"

	"github.com/klogdev/klog/broker/metadata"
)

// messages records the messages a logger was given, at every level.
type messages struct {
	mu   sync.Mutex
	msgs []string
}

func (m *messages) Enabled(context.Context, slog.Level) bool { return true }
func (m *messages) Handle(_ context.Context, r slog.Record) error {
	m.mu.Lock()
	m.msgs = append(m.msgs, r.Message)
	m.mu.Unlock()
	return nil
}
func (m *messages) WithAttrs([]slog.Attr) slog.Handler { return m }
func (m *messages) WithGroup(string) slog.Handler      { return m }

func (m *messages) seen() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.msgs)
}

// A lone voter leads without waiting out Raft's heartbeat timeout for a
// leader that cannot exist: on its first start and when it starts again
// on its own state.
func TestLoneVoterElectsAtOnce(t *testing.T) {
	for _, dir := range []string{"", t.TempDir()} {
		mem := NewMemoryStores()
		for _, run := range []string{"first start", "restart"} {
			logs := &messages{}
			cfg := Config{NodeID: 1, DataDir: dir, Logger: slog.New(logs), Self: metadata.Broker{Host: "127.0.0.1", Port: 9092}}
			if dir == "" {
				cfg.Memory = mem
			}
			c := start(t, cfg)
			c.Close()
			seen := logs.seen()
			if !slices.Contains(seen, "entering leader state") {
				t.Fatalf("%s (dir %q): never led; logged %q", run, dir, seen)
			}
			if slices.Contains(seen, "heartbeat timeout reached, starting election") {
				t.Errorf("%s (dir %q): the lone voter waited for the heartbeat timeout before its election", run, dir)
			}
		}
	}
}

// A new quorum's first voter starts the first election as soon as a
// majority listens, without waiting out its heartbeat timeout (300 to
// 600 ms), and leads.
func TestNewQuorumElectsAtOnce(t *testing.T) {
	first := &messages{}
	q := newQuorumWith(t, 3, func(c *Config) {
		if c.NodeID == 0 {
			c.Logger = slog.New(first)
		}
	})
	if got := q.leader(); got != 0 {
		t.Fatalf("node %d leads; want the first voter, node 0", got)
	}
	seen := first.seen()
	if !slices.Contains(seen, "entering leader state") {
		t.Fatalf("node 0 never led; logged %q", seen)
	}
	if slices.Contains(seen, "heartbeat timeout reached, starting election") {
		t.Errorf("node 0 waited for its heartbeat timeout before the first election")
	}
}
