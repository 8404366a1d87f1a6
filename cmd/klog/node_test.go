//go:build linux

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/supervisor"
)

// startCluster runs `klog up -n nodes` with args, registering in stateDir,
// and waits for its BROKERS= line.
func startCluster(t *testing.T, stateDir string, nodes string, args ...string) *upProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"up", "--log-level", "warn", "-n", nodes}, args...)...)
	cmd.Env = []string{"XDG_STATE_HOME=" + stateDir}
	return startUpCmd(t, cmd)
}

// nodeRun runs `klog node ARGS` in-process, finding the cluster from
// KLOG_BROKERS and the registrations in stateDir.
func nodeRun(t *testing.T, brokers, stateDir string, args ...string) result {
	t.Helper()
	env := map[string]string{"KLOG_BROKERS": brokers, "XDG_STATE_HOME": stateDir}
	return klogRunEnv(t, env, strings.NewReader(""), append([]string{"node", "--format", "json"}, args...)...)
}

// nodes runs `klog node ARGS --format json` and returns the nodes it
// printed.
func nodes(t *testing.T, brokers, stateDir string, args ...string) []supervisor.NodeStatus {
	t.Helper()
	r := nodeRun(t, brokers, stateDir, args...)
	if r.code != 0 {
		t.Fatalf("klog node %v: exit %d\nstdout:\n%s\nstderr:\n%s", args, r.code, r.stdout, r.stderr)
	}
	var doc struct{ Nodes []supervisor.NodeStatus }
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatalf("klog node %v: %v in %q", args, err, r.stdout)
	}
	return doc.Nodes
}

// answersAPIVersions fails the test unless addr answers ApiVersions.
func answersAPIVersions(t *testing.T, addr string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := kmsg.NewPtrApiVersionsRequest().RequestWith(ctx, cl)
	if err != nil || resp.ErrorCode != 0 || len(resp.ApiKeys) == 0 {
		t.Fatalf("ApiVersions from %s: %+v, %v", addr, resp, err)
	}
}

// procState is pid's state in /proc, 0 once the process is gone.
func procState(pid int) byte { return supervisor.ProcState(pid) }

// TestUpNodes: klog up -n 3 runs three node processes, each answering
// Kafka on its own address; klog node kills, stops and starts them; SIGTERM
// to the supervisor ends them all; the same directory brings the same
// cluster back, and another -n is refused.
//
// It checks processes; TestUpNodesFormOneCluster checks that they are one
// cluster.
func TestUpNodes(t *testing.T) {
	dir, stateDir := t.TempDir(), t.TempDir()
	p := startCluster(t, stateDir, "3", "--data-dir", dir, "--listen", "127.0.0.1:0")
	addrs := strings.Split(p.brokers, ",")
	if len(addrs) != 3 {
		t.Fatalf("BROKERS=%s: want three addresses", p.brokers)
	}
	for _, a := range addrs {
		answersAPIVersions(t, a)
	}
	// Found from any one address, as -b or KLOG_BROKERS gives it.
	listed := nodes(t, addrs[2], stateDir, "list")
	var pids []int
	for i, n := range listed {
		if n.ID != int32(i) || n.Address != addrs[i] || n.State != "running" || n.Role != "voter" || procState(n.PID) == 0 {
			t.Fatalf("node %d: %+v", i, n)
		}
		pids = append(pids, n.PID)
	}

	killed := nodes(t, addrs[0], stateDir, "kill", "1")
	if len(killed) != 1 || killed[0].State != "dead" || procState(pids[1]) != 0 {
		t.Fatalf("after kill 1: %+v, pid %d state %q", killed, pids[1], procState(pids[1]))
	}
	if c, err := net.Dial("tcp", addrs[1]); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Fatalf("dial a killed node: %v, want connection refused", err)
	}
	if l := nodes(t, addrs[0], stateDir, "list"); l[1].State != "dead" || l[0].State != "running" || l[2].State != "running" {
		t.Fatalf("list after kill 1: %+v", l)
	}
	started := nodes(t, addrs[0], stateDir, "start", "1")
	if started[0].State != "running" || started[0].PID == pids[1] {
		t.Fatalf("after start 1: %+v", started)
	}
	answersAPIVersions(t, addrs[1])
	pids[1] = started[0].PID

	stopped := nodes(t, addrs[0], stateDir, "stop", "2")
	if stopped[0].State != "stopped" || procState(pids[2]) != 'T' {
		t.Fatalf("after stop 2: %+v, /proc state %q", stopped, procState(pids[2]))
	}
	resumed := nodes(t, addrs[0], stateDir, "start", "2")
	if resumed[0].State != "running" || resumed[0].PID != pids[2] || procState(pids[2]) == 'T' {
		t.Fatalf("after start 2: %+v, /proc state %q", resumed, procState(pids[2]))
	}
	answersAPIVersions(t, addrs[2])

	restarted := nodes(t, addrs[0], stateDir, "restart", "0")
	if restarted[0].State != "running" || restarted[0].PID == pids[0] || procState(pids[0]) != 0 {
		t.Fatalf("after restart 0: %+v", restarted)
	}
	answersAPIVersions(t, addrs[0])
	pids[0] = restarted[0].PID

	if r := nodeRun(t, addrs[0], stateDir, "kill", "3"); r.code != 1 || !strings.Contains(r.stderr, "no such node: 3") {
		t.Fatalf("kill 3: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := nodeRun(t, addrs[0], stateDir, "kill", "one"); r.code != 2 {
		t.Fatalf("kill one: exit %d, want 2", r.code)
	}

	// SIGTERM to the supervisor ends every node, stopped ones too.
	nodes(t, addrs[0], stateDir, "stop", "1")
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("supervisor after SIGTERM: %v", err)
	}
	for _, pid := range pids {
		if st := procState(pid); st != 0 {
			t.Errorf("node pid %d left after the supervisor's SIGTERM, state %q", pid, st)
		}
	}
	if r := nodeRun(t, addrs[0], stateDir, "list"); r.code != 1 || !strings.Contains(r.stderr, "no running local cluster") {
		t.Fatalf("list with the cluster down: exit %d, stderr %q", r.code, r.stderr)
	}

	// Another number of nodes, or one node, is refused on the directory.
	for _, n := range []string{"2", "1"} {
		r := klogRun(t, "", "", "up", "-n", n, "--data-dir", dir, "--memory-limit", "off")
		if r.code != 1 || !strings.Contains(r.stderr, "holds a cluster of 3 nodes") {
			t.Fatalf("up -n %s on a 3-node directory: exit %d, stderr %q", n, r.code, r.stderr)
		}
	}

	// The same directory brings the same cluster back: ids, addresses.
	p = startCluster(t, stateDir, "3", "--data-dir", dir)
	if p.brokers != strings.Join(addrs, ",") {
		t.Fatalf("BROKERS=%s after restart, want %s", p.brokers, strings.Join(addrs, ","))
	}
	again := nodes(t, "", stateDir, "list", "--data-dir", dir)
	if ids := []int32{again[0].ID, again[1].ID, again[2].ID}; !slices.Equal(ids, []int32{0, 1, 2}) {
		t.Fatalf("ids after restart: %v", ids)
	}
	for _, a := range addrs {
		answersAPIVersions(t, a)
	}

	// A supervisor killed with SIGKILL takes its nodes with it (the kernel
	// kills them, Pdeathsig); the next klog node finds no cluster.
	pids = pids[:0]
	for _, n := range again {
		pids = append(pids, n.PID)
	}
	p.kill(t)
	testkit.WaitFor(t, "the nodes of a killed supervisor to be gone", func() (bool, string) {
		for _, pid := range pids {
			if st := procState(pid); st != 0 {
				return false, fmt.Sprintf("pid %d in state %q", pid, st)
			}
		}
		return true, ""
	})
	if r := nodeRun(t, addrs[0], stateDir, "list"); r.code != 1 || !strings.Contains(r.stderr, "no running local cluster") {
		t.Fatalf("list after the supervisor's SIGKILL: exit %d, stderr %q", r.code, r.stderr)
	}
	// Its stale socket does not keep the cluster from starting again.
	p = startCluster(t, stateDir, "3", "--data-dir", dir)
	if l := nodes(t, addrs[1], stateDir, "list"); len(l) != 3 || l[1].State != "running" || p.brokers != strings.Join(addrs, ",") {
		t.Fatalf("after the supervisor's SIGKILL, again: BROKERS=%s, %+v", p.brokers, l)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.cmd.Wait()
}

func TestUpNodesUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-n", "10"}, "-n 10: want 1 to 9"},
		{[]string{"-n", "0"}, "-n 0: want 1 to 9"},
		{[]string{"-n", "3", "--memory"}, "--memory runs one node only"},
		{[]string{"-n", "3", "--advertise", "h:1"}, "--advertise names one node"},
		{[]string{"-n", "3", "-X", "node.id=4"}, "-X node.id: klog up -n 3 gives each node its own"},
		{[]string{"-n", "3", "-X", "klog.admin.advertised.url=http://h:1"}, "-X klog.admin.advertised.url: klog up -n 3 gives each node its own"},
		{[]string{"-n", "3", "-X", "nope=1"}, `"nope" is not a broker config`},
		{[]string{"--hosts", "127.0.0.2"}, "--hosts needs -n 2 or more"},
		{[]string{"--racks", "r1"}, "--racks needs -n 2 or more"},
		{[]string{"-n", "3", "--racks", "r1,r2", "-X", "broker.rack=r1"}, "-X broker.rack and --racks: give the nodes' racks once"},
		{[]string{"-n", "3", "--racks", "r1,,r3"}, `--racks "r1,,r3": a rack name is empty`},
	} {
		args := append([]string{"up", "--memory-limit", "off"}, tc.args...)
		if !slices.Contains(tc.args, "--memory") {
			args = append(args, "--data-dir", t.TempDir())
		}
		if r := klogRun(t, "", "", args...); r.code != 2 || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("klog %v: exit %d, stderr %q; want 2 and %q", args, r.code, r.stderr, tc.msg)
		}
	}
}

// TestUpNodesStartFails: a node that cannot start (its port is taken)
// fails klog up -n with exit 1, naming the node, and the nodes launched
// are all gone.
func TestUpNodesStartFails(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// Node 0 is on the taken port; node 1, on the next, may start.
	cmd := exec.CommandContext(ctx, os.Args[0], "up", "-n", "2", "--log-level", "info",
		"--data-dir", t.TempDir(), "--listen", taken.Addr().String())
	cmd.Env = append(os.Environ(), "KLOG_TEST_AS_KLOG=1", "XDG_STATE_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "node failed to start: node 0") {
		t.Fatalf("klog up -n 2 with node 0's port taken: %v\n%s", err, out)
	}
	var pids []int
	for _, line := range strings.Split(string(out), "\n") {
		if _, rest, ok := strings.Cut(line, `msg="node launched" node=`); ok {
			var id, pid int
			if _, err := fmt.Sscanf(rest, "%d pid=%d", &id, &pid); err != nil {
				t.Fatalf("%q: %v", line, err)
			}
			pids = append(pids, pid)
		}
	}
	if len(pids) != 2 {
		t.Fatalf("launched pids %v in:\n%s", pids, out)
	}
	for _, pid := range pids {
		if st := procState(pid); st != 0 {
			t.Errorf("pid %d left after the failed start, state %q", pid, st)
		}
	}
}

// TestUpNodesFormOneCluster: the three nodes of klog up -n 3 are one
// cluster: Metadata from each lists all three brokers, a topic created on
// one node is served by every node; with the active controller's node
// isolated (klog node isolate) the others create a topic it does not see
// until healed; with the controller's node killed a topic is still
// created, through another node.
func TestUpNodesFormOneCluster(t *testing.T) {
	dir, stateDir := t.TempDir(), t.TempDir()
	p := startCluster(t, stateDir, "3", "--data-dir", dir, "--listen", "127.0.0.1:0")
	addrs := strings.Split(p.brokers, ",")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	admin := func(addr string) *kadm.Client {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return kadm.NewClient(cl)
	}
	var controller int32
	for _, a := range addrs {
		m, err := admin(a).BrokerMetadata(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Brokers) != 3 {
			t.Fatalf("Metadata from %s lists brokers %v, want all three", a, m.Brokers.NodeIDs())
		}
		controller = m.Controller
	}
	if _, err := admin(addrs[0]).CreateTopic(ctx, 3, 1, nil, "everywhere"); err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		adm := admin(a)
		testkit.WaitFor(t, "the topic on "+a, func() (bool, string) {
			td, err := adm.ListTopics(ctx, "everywhere")
			if err != nil {
				return false, err.Error()
			}
			return td.Has("everywhere") && td["everywhere"].Err == nil, fmt.Sprint(td)
		})
	}

	// The active controller's node isolated: the others elect another
	// and go on; it misses what they do until healed.
	isolated := nodes(t, addrs[0], stateDir, "isolate", fmt.Sprint(controller))
	if len(isolated) != 1 || isolated[0].State != "isolated" {
		t.Fatalf("after isolate %d: %+v", controller, isolated)
	}
	peerID := (controller + 1) % 3
	peer := admin(addrs[peerID])
	// Sent to the peer itself, which forwards it to the new active
	// controller: a client routing by metadata could ask the isolated
	// node, which still serves clients, for the controller.
	peerCl, err := kgo.NewClient(kgo.SeedBrokers(addrs[peerID]))
	if err != nil {
		t.Fatal(err)
	}
	defer peerCl.Close()
	testkit.WaitFor(t, "a topic created with the controller's node isolated", func() (bool, string) {
		req := kmsg.NewPtrCreateTopicsRequest()
		rt := kmsg.NewCreateTopicsRequestTopic()
		rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "while-isolated", 1, 1
		req.Topics = append(req.Topics, rt)
		req.TimeoutMillis = 5000
		resp, err := req.RequestWith(ctx, peerCl.Broker(int(peerID)))
		if err == nil {
			err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
		}
		return err == nil || errors.Is(err, kerr.TopicAlreadyExists), fmt.Sprint(err)
	})
	// Asked directly, not through a client that may ask another node.
	lonelyCl, err := kgo.NewClient(kgo.SeedBrokers(addrs[controller]))
	if err != nil {
		t.Fatal(err)
	}
	defer lonelyCl.Close()
	answer := func() (int16, error) {
		req := kmsg.NewPtrMetadataRequest()
		req.AllowAutoTopicCreation = false
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr("while-isolated")
		req.Topics = append(req.Topics, rt)
		resp, err := lonelyCl.Broker(int(controller)).Request(ctx, req)
		if err != nil {
			return 0, err
		}
		if ts := resp.(*kmsg.MetadataResponse).Topics; len(ts) == 1 {
			return ts[0].ErrorCode, nil
		}
		return 0, fmt.Errorf("metadata of %d topics", len(resp.(*kmsg.MetadataResponse).Topics))
	}
	knows := func() (bool, string) {
		code, err := answer()
		return err == nil && code == 0, fmt.Sprint(code, err)
	}
	if code, err := answer(); err != nil || code != kerr.UnknownTopicOrPartition.Code {
		t.Fatalf("the isolated node on a topic created without it: %v, %v; want UNKNOWN_TOPIC_OR_PARTITION", kerr.ErrorForCode(code), err)
	}
	if healed := nodes(t, addrs[0], stateDir, "heal", fmt.Sprint(controller)); healed[0].State != "running" {
		t.Fatalf("after heal %d: %+v", controller, healed)
	}
	testkit.WaitFor(t, "the healed node catching up", knows)

	m, err := peer.BrokerMetadata(ctx)
	if err != nil {
		t.Fatal(err)
	}
	controller = m.Controller
	nodes(t, addrs[0], stateDir, "kill", fmt.Sprint(controller))
	other := addrs[(controller+1)%3]
	adm := admin(other)
	testkit.WaitFor(t, "a topic created with the controller's node down", func() (bool, string) {
		resp, err := adm.CreateTopic(ctx, 1, 1, nil, "after-failover")
		if err == nil {
			err = resp.Err
		}
		return err == nil || errors.Is(err, kerr.TopicAlreadyExists), fmt.Sprint(err)
	})
}

// TestUpNodesControlledShutdown: SIGTERM to a node of klog up -n 3 (klog
// node restart) first moves the leadership of its partitions to other
// nodes, as Kafka's controlled shutdown does. The node is back within the
// broker session, so without it nothing would have moved: the partition it
// led keeps another leader, at a new leader epoch, after the restart.
func TestUpNodesControlledShutdown(t *testing.T) {
	dir, stateDir := t.TempDir(), t.TempDir()
	p := startCluster(t, stateDir, "3", "--data-dir", dir, "--listen", "127.0.0.1:0")
	addrs := strings.Split(p.brokers, ",")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs[1]))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := adm.CreateTopic(ctx, 3, 3, nil, "moved"); err != nil {
		t.Fatal(err)
	}
	var led int32 = -1 // a partition node 0 leads
	testkit.WaitFor(t, "a partition led by node 0", func() (bool, string) {
		td, err := adm.ListTopics(ctx, "moved")
		if err != nil {
			return false, err.Error()
		}
		for _, pd := range td["moved"].Partitions {
			if pd.Leader == 0 && pd.Err == nil && len(pd.ISR) == 3 {
				led = pd.Partition
				return true, ""
			}
		}
		return false, fmt.Sprint(td["moved"].Partitions)
	})
	nodes(t, addrs[1], stateDir, "restart", "0")
	testkit.WaitFor(t, fmt.Sprintf("partition %d led by another node at a new epoch", led), func() (bool, string) {
		td, err := adm.ListTopics(ctx, "moved")
		if err != nil {
			return false, err.Error()
		}
		pd := td["moved"].Partitions[led]
		return pd.Leader > 0 && pd.LeaderEpoch >= 1, fmt.Sprintf("leader %d, epoch %d", pd.Leader, pd.LeaderEpoch)
	})
}

// TestUpNodesDefaults: klog up -n 3 gives its nodes Kafka's durable
// defaults for a cluster: a topic created without a replication factor has
// three replicas and min.insync.replicas 2, and __consumer_offsets, created
// by the first FindCoordinator, three replicas on every partition. With -n
// 2 the defaults are two replicas and one in sync, and the user's -X wins
// over them.
func TestUpNodesDefaults(t *testing.T) {
	for _, tc := range []struct {
		nodes          string
		args           []string
		rf, internalRF int
		minISR         string
	}{
		{"3", nil, 3, 3, "2"},
		{"2", []string{"-X", "min.insync.replicas=2"}, 2, 2, "2"},
	} {
		t.Run("n"+tc.nodes, func(t *testing.T) {
			args := append([]string{"--data-dir", t.TempDir(), "--listen", "127.0.0.1:0"}, tc.args...)
			p := startCluster(t, t.TempDir(), tc.nodes, args...)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(p.brokers, ",")...))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			adm := kadm.NewClient(cl)
			if resp, err := adm.CreateTopic(ctx, -1, -1, nil, "defaults"); err != nil || resp.Err != nil {
				t.Fatalf("create a topic with the defaults: %v, %v", err, resp.Err)
			}
			replicas := func(topic string, want int) {
				t.Helper()
				testkit.WaitFor(t, fmt.Sprintf("%s with %d replicas in sync", topic, want), func() (bool, string) {
					td, err := adm.ListTopicsWithInternal(ctx, topic)
					if err != nil {
						return false, err.Error()
					}
					d := td[topic]
					if d.Err != nil || len(d.Partitions) == 0 {
						return false, fmt.Sprint(d.Err)
					}
					for _, pd := range d.Partitions.Sorted() {
						if len(pd.Replicas) != want || len(pd.ISR) != want {
							return false, fmt.Sprintf("partition %d: replicas %v, isr %v", pd.Partition, pd.Replicas, pd.ISR)
						}
					}
					return true, ""
				})
			}
			replicas("defaults", tc.rf)
			// Asked of any node: one that has not applied the topic yet
			// answers UNKNOWN_TOPIC_OR_PARTITION, with no configs.
			var minISR string
			testkit.WaitFor(t, "the configs of topic defaults", func() (bool, string) {
				rcs, err := adm.DescribeTopicConfigs(ctx, "defaults")
				if err != nil {
					return false, err.Error()
				}
				rc, err := rcs.On("defaults", nil)
				if err == nil {
					err = rc.Err
				}
				if err != nil {
					return false, err.Error()
				}
				for _, c := range rc.Configs {
					if c.Key == "min.insync.replicas" {
						minISR = c.MaybeValue()
					}
				}
				return true, ""
			})
			if minISR != tc.minISR {
				t.Errorf("min.insync.replicas of a topic with the defaults: %q, want %s", minISR, tc.minISR)
			}
			testkit.WaitFor(t, "a group coordinator", func() (bool, string) {
				req := kmsg.NewPtrFindCoordinatorRequest()
				req.CoordinatorKeys = []string{"g"}
				resp, err := req.RequestWith(ctx, cl)
				if err != nil {
					return false, err.Error()
				}
				return resp.Coordinators[0].ErrorCode == 0, fmt.Sprint(kerr.ErrorForCode(resp.Coordinators[0].ErrorCode))
			})
			replicas("__consumer_offsets", tc.internalRF)
		})
	}
}
