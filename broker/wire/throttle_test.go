package wire_test

import (
	"context"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

// A reply with a Throttle is answered at once, and the connection reads
// nothing further for that long: the request the client pipelined after
// it is handled only once the mute ends. A drain ends the mute.
func TestThrottleMutesTheConnection(t *testing.T) {
	const throttle = 400 * time.Millisecond
	handled := make(chan time.Time, 4)
	s, ln := serve(t, fakeHandler{func(_ context.Context, rc *wire.RequestContext, req kmsg.Request) (wire.Reply, error) {
		handled <- time.Now()
		reply := respond(req)
		if rc.Header.CorrelationID == 1 || rc.Header.CorrelationID == 3 {
			reply.Throttle = throttle
			if rc.Header.CorrelationID == 3 {
				reply.Throttle = time.Hour
			}
		}
		return reply, nil
	}}, testLimits(), 1<<20)
	c := dial(t, ln)
	start := time.Now()
	c.send(metadata(), 1)
	c.send(metadata(), 2)
	if corr, err := c.recv(); err != nil || corr != 1 {
		t.Fatalf("first answer: %d, %v", corr, err)
	}
	if since := time.Since(start); since >= throttle {
		t.Errorf("the throttled answer came after %v, not at once", since)
	}
	<-handled
	second := <-handled
	if waited := second.Sub(start); waited < throttle {
		t.Errorf("the pipelined request was handled %v after the throttled one, want at least %v", waited, throttle)
	}
	if corr, err := c.recv(); err != nil || corr != 2 {
		t.Fatalf("second answer: %d, %v", corr, err)
	}
	// Muted for an hour: a drain ends the connection at once.
	c.send(metadata(), 3)
	if corr, err := c.recv(); err != nil || corr != 3 {
		t.Fatalf("third answer: %d, %v", corr, err)
	}
	ln.Close()
	go s.Drain(10 * time.Second)
	if took := c.closed(); took > 5*time.Second {
		t.Errorf("a muted connection took %v to end in a drain", took)
	}
}
