package broker_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// A client that sends malformed requests in a loop made the node log an
// INFO line for each one.
func TestMalformedRequestsDoNotFloodTheLog(t *testing.T) {
	var logs testkit.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	n := brokertest.Start(t, brokertest.Logger(logger))

	const requests = 300
	for i := range requests {
		r := dialRaw(t, n.Addr())
		// Metadata v1 whose topic array claims more entries than it holds.
		r.send(kmsg.Metadata.Int16(), 1, int32(i), false, []byte{0x00, 0x00, 0x10, 0x00})
		closedWithin(t, r, 10*time.Second)
		r.c.Close()
	}
	closed := strings.Count(logs.String(), "closing connection")
	if closed == 0 {
		t.Fatalf("no line for the malformed requests at all:\n%s", logs.String())
	}
	if closed > 10 {
		t.Fatalf("%d malformed requests logged %d lines, want a handful", requests, closed)
	}
	t.Logf("%d malformed requests, %d log lines", requests, closed)
}
