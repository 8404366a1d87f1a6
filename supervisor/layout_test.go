package supervisor

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestPrepare(t *testing.T) {
	dir := t.TempDir()
	l, err := Prepare(dir, Spec{Nodes: 4, Listen: "127.0.0.1:19092", Hosts: []string{"127.0.0.1", "127.0.0.2", "127.0.0.3"}})
	if err != nil {
		t.Fatal(err)
	}
	want := "127.0.0.1:19092,127.0.0.2:19093,127.0.0.3:19094,127.0.0.1:19095"
	if got := strings.Join(l.Brokers(), ","); got != want {
		t.Fatalf("brokers %s, want %s", got, want)
	}
	if got, want := l.Voters(), "0@127.0.0.1:19096,1@127.0.0.2:19097,2@127.0.0.3:19098"; got != want {
		t.Fatalf("voters %s, want %s", got, want)
	}
	if l.Nodes[3].Role() != "broker" {
		t.Fatalf("node 3: %s, want broker", l.Nodes[3].Role())
	}
	again, err := Prepare(dir, Spec{Nodes: 4})
	if err != nil || strings.Join(again.Brokers(), ",") != want {
		t.Fatalf("Prepare again: %v %v", again.Brokers(), err)
	}
	for _, tc := range []struct {
		spec Spec
		want error
		msg  string
	}{
		{Spec{Nodes: 3}, ErrNodeCount, "holds a cluster of 4 nodes, not 3"},
		{Spec{Nodes: 4, Listen: "127.0.0.1:9092"}, ErrLayoutChanged, "made with --listen 127.0.0.1:19092"},
		{Spec{Nodes: 4, Hosts: []string{"127.0.0.1"}}, ErrLayoutChanged, "made with --hosts"},
	} {
		if _, err := Prepare(dir, tc.spec); !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("Prepare(%+v): %v, want %v with %q", tc.spec, err, tc.want, tc.msg)
		}
	}
	if err := CheckSingle(dir); !errors.Is(err, ErrNodeCount) || !strings.Contains(err.Error(), "klog up -n 4") {
		t.Fatalf("CheckSingle on a 4-node cluster: %v", err)
	}

	single := t.TempDir()
	if err := CheckSingle(single); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(single, "node-0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(single, Spec{Nodes: 3}); !errors.Is(err, ErrNodeCount) || !strings.Contains(err.Error(), "single node") {
		t.Fatalf("Prepare on a single node's directory: %v", err)
	}
	if _, err := Prepare(t.TempDir(), Spec{Nodes: 3, Listen: "127.0.0.1:65533"}); err == nil || !strings.Contains(err.Error(), "need ports 65533 to 65538") {
		t.Fatalf("Prepare past port 65535: %v", err)
	}
	if _, err := Prepare(t.TempDir(), Spec{Nodes: 10}); err == nil {
		t.Fatal("Prepare of 10 nodes succeeded")
	}
}

// TestPreparePicksFreePorts: with port 0 every port is distinct, and a
// second Prepare keeps them.
func TestPreparePicksFreePorts(t *testing.T) {
	dir := t.TempDir()
	l, err := Prepare(dir, Spec{Nodes: 5, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, n := range l.Nodes {
		for _, p := range []int{n.Port, n.ControllerPort} {
			if p == 0 {
				continue
			}
			if seen[p] {
				t.Fatalf("port %d twice in %+v", p, l.Nodes)
			}
			seen[p] = true
		}
	}
	if len(seen) != 5+3 {
		t.Fatalf("ports %v: want 5 Kafka and 3 Raft ports", seen)
	}
	// Until the nodes start, the chosen ports stay bound: no other
	// process can take one in between.
	for p := range seen {
		if ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p))); err == nil {
			ln.Close()
			t.Fatalf("port %d was free again before its node started", p)
		}
	}
	l.Reserved().Close()
	for p := range seen {
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d after Reserved().Close: %v", p, err)
		}
		ln.Close()
	}
	again, err := Prepare(dir, Spec{Nodes: 5, Listen: "127.0.0.1:0"})
	if err != nil || strings.Join(again.Brokers(), ",") != strings.Join(l.Brokers(), ",") || again.Voters() != l.Voters() {
		t.Fatalf("Prepare again: %v %v, want %v", again.Brokers(), err, l.Brokers())
	}
}

// TestAdminAddressesAvoidClusterPorts: the admin APIs never take one of
// the cluster's Kafka or Raft ports, which are free until the nodes start:
// a base port on one of them moves every node to free ports (or is
// refused when the user gave it), and free ports are picked apart from
// them.
func TestAdminAddressesAvoidClusterPorts(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	taken := ln.Addr().(*net.TCPAddr).Port
	ln.Close() // free, as the cluster's ports are before their nodes start
	base := net.JoinHostPort("127.0.0.1", strconv.Itoa(taken-1))
	addrs, moved, err := AdminAddresses(base, 2, false, nil, taken)
	if err != nil || !moved || len(addrs) != 2 {
		t.Fatalf("base next to a cluster port: %v moved %v err %v", addrs, moved, err)
	}
	for _, a := range append(addrs, func() []string {
		more, _, err := AdminAddresses("127.0.0.1:0", 50, false, nil, taken)
		if err != nil {
			t.Fatal(err)
		}
		return more
	}()...) {
		if a == net.JoinHostPort("127.0.0.1", strconv.Itoa(taken)) {
			t.Fatalf("admin address %s is a cluster port", a)
		}
	}
	if _, _, err := AdminAddresses(base, 2, true, nil, taken); err == nil {
		t.Fatal("an explicit base on a cluster port was accepted")
	}
}

// TestPrepareSecure: --secure's SASL_SSL and SSL ports follow the Raft
// range from a fixed --listen, are free ports for port 0, join a cluster
// made without --secure when it is next started with it, and are kept.
func TestPrepareSecure(t *testing.T) {
	dir := t.TempDir()
	if _, err := Prepare(dir, Spec{Nodes: 3, Listen: "127.0.0.1:19092"}); err != nil {
		t.Fatal(err)
	}
	l, err := Prepare(dir, Spec{Nodes: 3, Secure: true})
	if err != nil {
		t.Fatal(err)
	}
	var secure, mtls []string
	for _, n := range l.Nodes {
		secure, mtls = append(secure, n.SecureAddress()), append(mtls, n.MTLSAddress())
	}
	if got, want := strings.Join(secure, ","), "127.0.0.1:19098,127.0.0.1:19099,127.0.0.1:19100"; got != want {
		t.Fatalf("SASL_SSL listeners %s, want %s", got, want)
	}
	if got, want := strings.Join(mtls, ","), "127.0.0.1:19101,127.0.0.1:19102,127.0.0.1:19103"; got != want {
		t.Fatalf("SSL listeners %s, want %s", got, want)
	}
	if again, err := Prepare(dir, Spec{Nodes: 3}); err != nil || again.Nodes[2].MTLSPort != 19103 {
		t.Fatalf("Prepare again: %+v %v", again.Nodes, err)
	}

	free, err := Prepare(t.TempDir(), Spec{Nodes: 2, Listen: "127.0.0.1:0", Secure: true})
	if err != nil {
		t.Fatal(err)
	}
	defer free.Reserved().Close()
	ports := free.Ports()
	slices.Sort(ports)
	if len(slices.Compact(ports)) != 2+2+2+2 {
		t.Fatalf("ports %v: want 2 Kafka, 2 Raft, 2 SASL_SSL and 2 SSL ports, all apart", free.Ports())
	}
	if _, err := Prepare(t.TempDir(), Spec{Nodes: 3, Listen: "127.0.0.1:65525", Secure: true}); err == nil || !strings.Contains(err.Error(), "need ports 65525 to 65536") {
		t.Fatalf("Prepare --secure past port 65535: %v", err)
	}
}
