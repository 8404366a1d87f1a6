package brokertest_test

import (
	"net"
	"testing"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/nodeapi"
)

// A node's admin API keeps its port across a kill and a restart without
// binding it again: while the node is down no other listener can take
// the port, so the restart cannot find it taken (a port closed and bound
// again is a race with every process of the machine). A request made
// while the node is down is answered once it is back.
func TestAdminPortKeptAcrossRestarts(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	addr := n.AdminAddr()
	api := nodeapi.NewClient(addr, 0)
	if _, err := api.Node(ctx); err != nil {
		t.Fatal(err)
	}
	for _, stop := range []func(){n.Kill, n.Close} {
		stop()
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			t.Fatalf("the admin port %s could be bound while the node was down", addr)
		}
		answered := make(chan error, 1)
		go func() {
			_, err := api.Node(ctx)
			answered <- err
		}()
		n.Start()
		if got := n.AdminAddr(); got != addr {
			t.Fatalf("admin API on %s after a restart, was %s", got, addr)
		}
		if err := <-answered; err != nil {
			t.Fatalf("a request made while the node was down: %v", err)
		}
	}
}
