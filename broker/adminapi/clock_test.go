package adminapi_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/nodeapi"
)

// TestClock: GET /v1/clock shows the node's clock; POST
// /v1/clock/advance moves it forward, and refuses to move it back or by
// what is not a duration.
func TestClock(t *testing.T) {
	n := brokertest.Start(t)
	c := nodeapi.NewClient(n.AdminAddr(), 0)
	ctx := testkit.Context(t)
	st, err := c.Clock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.NodeID != 0 || st.OffsetMs != 0 || time.Since(st.Now).Abs() > time.Minute {
		t.Fatalf("clock at start: %+v", st)
	}
	if st, err = c.AdvanceClock(ctx, 2*time.Hour); err != nil {
		t.Fatal(err)
	}
	if st.Offset() != 2*time.Hour || st.Now.Sub(time.Now().Add(2*time.Hour)).Abs() > time.Minute {
		t.Fatalf("clock after advancing 2h: %+v", st)
	}
	if st, err = c.Clock(ctx); err != nil || st.Offset() != 2*time.Hour {
		t.Fatalf("clock after advancing 2h: %+v %v", st, err)
	}
	if _, err := c.AdvanceClock(ctx, -time.Second); err == nil {
		t.Fatal("the clock was moved back")
	} else if se, ok := err.(*nodeapi.StatusError); !ok || se.Status != http.StatusBadRequest {
		t.Fatalf("advance by -1s: %v, want 400", err)
	}
	for _, q := range []string{"", "?by=2x", "?by="} {
		resp, err := http.Post("http://"+n.AdminAddr()+nodeapi.PathClockAdvance+q, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("POST %s%s: %d, want 400", nodeapi.PathClockAdvance, q, resp.StatusCode)
		}
	}
	if st, err = c.Clock(ctx); err != nil || st.Offset() != 2*time.Hour {
		t.Fatalf("refused advances moved the clock: %+v %v", st, err)
	}
}
