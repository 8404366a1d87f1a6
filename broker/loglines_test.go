package broker_test

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// TestLogLinesNameTheirComponentOnce: each log line of a node names the
// component it comes from once (the controller's, Raft's, ...), not once
// per layer that wrapped the logger.
func TestLogLinesNameTheirComponentOnce(t *testing.T) {
	var logs testkit.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug - 4}))
	brokertest.Start(t, brokertest.Logger(logger))
	testkit.WaitFor(t, "a log line of the controller and one of Raft", func() (bool, string) {
		s := logs.String()
		return strings.Contains(s, "component=controller") && strings.Contains(s, "component=raft"), ""
	})
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Count(l, "component=") > 1 {
			t.Errorf("log line names its component twice: %s", l)
		}
	}
}
