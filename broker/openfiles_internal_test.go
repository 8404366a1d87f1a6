package broker

import (
	"log/slog"
	"testing"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log"
)

// TestNodeCapsOpenLogFiles: klog.max.open.files reaches the node's log
// manager; 0, the default, leaves the cap to store/log.
func TestNodeCapsOpenLogFiles(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  int
	}{{"8", 8}, {"0", log.DefaultMaxOpenFiles()}} {
		n, err := Start(testkit.Context(t), Config{
			Listen: "127.0.0.1:0", Memory: true, Logger: testkit.Logger(t, slog.LevelWarn),
			Configs: map[string]string{"klog.max.open.files": tc.value},
		})
		if err != nil {
			t.Fatal(err)
		}
		open, maxOpen := n.logs.OpenFiles()
		n.Close()
		if maxOpen != tc.want {
			t.Errorf("klog.max.open.files=%s: the logs may open %d files, want %d", tc.value, maxOpen, tc.want)
		}
		if open > maxOpen {
			t.Errorf("klog.max.open.files=%s: %d files open, more than %d", tc.value, open, maxOpen)
		}
	}
}
