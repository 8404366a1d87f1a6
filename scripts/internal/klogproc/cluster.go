package klogproc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/supervisor"
)

// NodeTimeout bounds one klog node command; start and restart wait for the
// node to be ready, recovery included.
const NodeTimeout = 90 * time.Second

// ErrNodeCommand means a klog node command failed.
var ErrNodeCommand = errors.New("klog node")

// Cluster is a local cluster run as klog up -n N: one supervisor process
// with its N nodes as children, on a data directory and consecutive
// loopback ports kept across restarts. Nodes are acted on with the
// binary's own klog node commands, as a user would.
type Cluster struct {
	Bin, Dir string
	Nodes    int
	Opts     Options
	Port     int // the first node's Kafka port; the others follow
	brokers  []string
	starts   int
	proc     // the supervisor
}

// StartCluster starts klog up -n nodes (the binary bin) on free ports with
// its data in dir/data and waits until every node is ready.
func StartCluster(ctx context.Context, bin, dir string, nodes int, opts Options) (*Cluster, error) {
	c := &Cluster{Bin: bin, Dir: dir, Nodes: nodes, Opts: opts}
	var err error
	for range 3 { // a lost race for a port is retried on others
		// Kafka ports, then the voters' Raft ports (supervisor.Prepare).
		c.Port = freePorts(nodes + min(nodes, supervisor.MaxVoters))
		if err = c.Start(ctx); err == nil || !c.LogHas("address already in use") {
			return c, err
		}
		c.Kill()
		os.RemoveAll(c.DataDir()) // its layout names the ports lost
	}
	return c, err
}

// Start runs the supervisor on the cluster's directory and ports and waits
// until every node is ready.
func (c *Cluster) Start(ctx context.Context) error {
	c.starts++
	ready := filepath.Join(c.Dir, fmt.Sprintf("ready-%d", c.starts))
	args := []string{"up", "-n", strconv.Itoa(c.Nodes), "--data-dir", c.DataDir(),
		"--listen", fmt.Sprintf("127.0.0.1:%d", c.Port), "--ready-file", ready}
	for _, kv := range c.Opts.Configs {
		args = append(args, "-X", kv)
	}
	line, err := c.launch(ctx, c.Bin, args, c.env(), c.Opts, filepath.Join(c.Dir, fmt.Sprintf("cluster-%d.log", c.starts)), ready)
	if err != nil {
		return err
	}
	// The bootstrap list is the ready file's first line (the admin API
	// URLs follow).
	first, _, _ := strings.Cut(string(line), "\n")
	c.brokers = strings.Split(strings.TrimSpace(first), ",")
	if len(c.brokers) != c.Nodes {
		return fmt.Errorf("klog up -n %d is ready with %d brokers: %q", c.Nodes, len(c.brokers), line)
	}
	return nil
}

// env keeps the cluster's registration (klog up -n registers where
// klog node finds it) in the cluster's directory, not the user's.
func (c *Cluster) env() []string {
	return []string{"XDG_STATE_HOME=" + filepath.Join(c.Dir, "state")}
}

// DataDir is the cluster's data directory (klog up -n --data-dir).
func (c *Cluster) DataDir() string { return filepath.Join(c.Dir, "data") }

// Brokers is the bootstrap list klog up -n printed, node 0 first.
func (c *Cluster) Brokers() []string { return slices.Clone(c.brokers) }

// Addr is node id's Kafka listener.
func (c *Cluster) Addr(id int32) string { return c.brokers[id] }

// Client is a client seeded with every node, with opts added.
func (c *Cluster) Client(opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(c.brokers...)}, opts...)...)
}

// NodeLog is the lines node id logged through the supervisor.
func (c *Cluster) NodeLog(id int32) string {
	b, _ := os.ReadFile(c.logPath)
	var out []string
	prefix := fmt.Sprintf("node-%d | ", id)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// The acts of klog node, each running that command of the binary on the
// cluster's data directory; each returns once the supervisor has done it
// (start and restart: once the node is ready).

// KillNode is klog node kill ID: SIGKILL.
func (c *Cluster) KillNode(ctx context.Context, id int32) error { return c.act(ctx, "kill", id) }

// StopNode is klog node stop ID: SIGSTOP, a hung node.
func (c *Cluster) StopNode(ctx context.Context, id int32) error { return c.act(ctx, "stop", id) }

// StartNode is klog node start ID: resume a stopped node, relaunch a dead
// one.
func (c *Cluster) StartNode(ctx context.Context, id int32) error { return c.act(ctx, "start", id) }

// RestartNode is klog node restart ID: SIGTERM (a controlled shutdown),
// then launch it again.
func (c *Cluster) RestartNode(ctx context.Context, id int32) error {
	return c.act(ctx, "restart", id)
}

// IsolateNode is klog node isolate ID: cut it off from the other nodes.
func (c *Cluster) IsolateNode(ctx context.Context, id int32) error {
	return c.act(ctx, "isolate", id)
}

// HealNode is klog node heal ID: end its isolation.
func (c *Cluster) HealNode(ctx context.Context, id int32) error { return c.act(ctx, "heal", id) }

func (c *Cluster) act(ctx context.Context, op string, id int32) error {
	_, err := c.node(ctx, op, strconv.Itoa(int(id)))
	return err
}

// List is klog node list: every node's address, pid, state and role.
func (c *Cluster) List(ctx context.Context) ([]supervisor.NodeStatus, error) {
	return c.node(ctx, "list")
}

// NodeState is node id's state as klog node list shows it
// (supervisor.StateRunning, ...).
func (c *Cluster) NodeState(ctx context.Context, id int32) (string, error) {
	nodes, err := c.List(ctx)
	if err != nil {
		return "", err
	}
	for _, n := range nodes {
		if n.ID == id {
			return n.State, nil
		}
	}
	return "", fmt.Errorf("%w list: no node %d", ErrNodeCommand, id)
}

// node runs klog node ARGS --data-dir DIR --format json and returns the
// nodes it printed.
func (c *Cluster) node(ctx context.Context, args ...string) ([]supervisor.NodeStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, NodeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, c.Bin, append(append([]string{"node"}, args...), "--data-dir", c.DataDir(), "--format", "json")...)
	cmd.Env = append(os.Environ(), c.env()...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("%w %s: %v: %s", ErrNodeCommand, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	var out struct {
		Nodes []supervisor.NodeStatus `json:"nodes"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return nil, fmt.Errorf("%w %s: %v: %q", ErrNodeCommand, strings.Join(args, " "), err, stdout.String())
	}
	return out.Nodes, nil
}

// WaitRunning waits until klog node list shows every node running.
func (c *Cluster) WaitRunning(ctx context.Context) error {
	var last []supervisor.NodeStatus
	err := WaitFor(ctx, func() (bool, error) {
		nodes, err := c.List(ctx)
		if err != nil {
			return false, err
		}
		last = nodes
		for _, n := range nodes {
			if n.State != supervisor.StateRunning {
				return false, nil
			}
		}
		return len(nodes) == c.Nodes, nil
	})
	if err != nil {
		return fmt.Errorf("wait for every node running (last %+v): %w", last, err)
	}
	return nil
}

// Metadata is node id's own answer to a Metadata request for topics (all
// topics when none), sent to that node's address and no other.
func (c *Cluster) Metadata(ctx context.Context, id int32, topics ...string) (*kmsg.MetadataResponse, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr(id)), kgo.RequestRetries(0))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	req := kmsg.NewPtrMetadataRequest()
	if len(topics) == 0 {
		req.Topics = nil // all
	}
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return nil, fmt.Errorf("metadata from node %d: %w", id, err)
	}
	return resp, nil
}

// PartitionState is one partition as a node's Metadata shows it.
type PartitionState struct {
	Leader, LeaderEpoch int32
	Replicas, ISR       []int32
}

// Partition is partition p of topic as node id's Metadata shows it.
func (c *Cluster) Partition(ctx context.Context, id int32, topic string, p int32) (PartitionState, error) {
	resp, err := c.Metadata(ctx, id, topic)
	if err != nil {
		return PartitionState{}, err
	}
	for _, t := range resp.Topics {
		if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
			return PartitionState{}, fmt.Errorf("metadata from node %d: topic %s: %w", id, topic, err)
		}
		for _, pt := range t.Partitions {
			if pt.Partition == p {
				return PartitionState{pt.Leader, pt.LeaderEpoch, pt.Replicas, pt.ISR}, kerr.ErrorForCode(pt.ErrorCode)
			}
		}
	}
	return PartitionState{}, fmt.Errorf("metadata from node %d: no partition %s-%d", id, topic, p)
}

// Leader is the leader of partition p of topic and its epoch, as node
// id's Metadata shows it; -1 when it has none.
func (c *Cluster) Leader(ctx context.Context, id int32, topic string, p int32) (leader, epoch int32, err error) {
	st, err := c.Partition(ctx, id, topic, p)
	return st.Leader, st.LeaderEpoch, err
}

// Controller is the active controller's node id as node id's
// DescribeQuorum answer shows it; -1 when there is none.
func (c *Cluster) Controller(ctx context.Context, id int32) (int32, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.Addr(id)), kgo.RequestRetries(0))
	if err != nil {
		return -1, err
	}
	defer cl.Close()
	req := kmsg.NewPtrDescribeQuorumRequest()
	rt := kmsg.NewDescribeQuorumRequestTopic()
	rt.Topic = "__cluster_metadata"
	rt.Partitions = []kmsg.DescribeQuorumRequestTopicPartition{kmsg.NewDescribeQuorumRequestTopicPartition()}
	req.Topics = append(req.Topics, rt)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	resp, err := req.RequestWith(ctx, cl.SeedBrokers()[0])
	if err != nil {
		return -1, fmt.Errorf("describe quorum from node %d: %w", id, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return -1, fmt.Errorf("describe quorum from node %d: %w", id, err)
	}
	if len(resp.Topics) != 1 || len(resp.Topics[0].Partitions) != 1 {
		return -1, fmt.Errorf("describe quorum from node %d: %d topics in the answer", id, len(resp.Topics))
	}
	pt := resp.Topics[0].Partitions[0]
	if err := kerr.ErrorForCode(pt.ErrorCode); err != nil {
		return -1, fmt.Errorf("describe quorum from node %d: %w", id, err)
	}
	return pt.LeaderID, nil
}

// WaitISR waits until every partition of topic has a leader and all its
// replicas in the ISR in the Metadata of every node in ids (all nodes
// when none), and the nodes agree on each partition's state.
func (c *Cluster) WaitISR(ctx context.Context, topic string, ids ...int32) error {
	if len(ids) == 0 {
		for id := range c.Nodes {
			ids = append(ids, int32(id))
		}
	}
	var last string
	err := WaitFor(ctx, func() (bool, error) {
		var first map[int32]PartitionState
		for _, id := range ids {
			parts, err := c.Partitions(ctx, id, topic)
			if err != nil {
				last = err.Error()
				return false, nil // not known there yet, or the node not up
			}
			for p, st := range parts {
				if st.Leader < 0 || len(st.ISR) != len(st.Replicas) {
					last = fmt.Sprintf("node %d: partition %d leader %d ISR %v replicas %v", id, p, st.Leader, st.ISR, st.Replicas)
					return false, nil
				}
				if first != nil && !first[p].equal(st) {
					last = fmt.Sprintf("node %d: partition %d %+v, node %d: %+v", id, p, st, ids[0], first[p])
					return false, nil
				}
			}
			if first == nil {
				first = parts
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("wait for the full ISR of %s on nodes %v (last: %s): %w", topic, ids, last, err)
	}
	return nil
}

// Partitions is every partition of topic as node id's Metadata shows it.
func (c *Cluster) Partitions(ctx context.Context, id int32, topic string) (map[int32]PartitionState, error) {
	resp, err := c.Metadata(ctx, id, topic)
	if err != nil {
		return nil, err
	}
	if len(resp.Topics) != 1 {
		return nil, fmt.Errorf("metadata from node %d: %d topics", id, len(resp.Topics))
	}
	t := resp.Topics[0]
	if err := kerr.ErrorForCode(t.ErrorCode); err != nil {
		return nil, fmt.Errorf("metadata from node %d: %s: %w", id, topic, err)
	}
	parts := make(map[int32]PartitionState)
	for _, pt := range t.Partitions {
		parts[pt.Partition] = PartitionState{pt.Leader, pt.LeaderEpoch, pt.Replicas, pt.ISR}
	}
	return parts, nil
}

func (s PartitionState) equal(o PartitionState) bool {
	return s.Leader == o.Leader && s.LeaderEpoch == o.LeaderEpoch && slices.Equal(s.Replicas, o.Replicas) && slices.Equal(s.ISR, o.ISR)
}

// TerminateNode ends node id with SIGTERM, a clean shutdown (Kafka's
// controlled shutdown moves its leadership and ISR membership away first),
// and waits until klog node list shows it dead; it stays down until
// StartNode. klog node has no act for this (restart launches the node
// again at once), so the signal goes to the pid klog node list shows.
func (c *Cluster) TerminateNode(ctx context.Context, id int32) error {
	nodes, err := c.List(ctx)
	if err != nil {
		return err
	}
	pid := 0
	for _, n := range nodes {
		if n.ID == id {
			pid = n.PID
		}
	}
	if pid == 0 {
		return fmt.Errorf("terminate node %d: it has no process", id)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return fmt.Errorf("terminate node %d: %w", id, err)
	}
	ctx, cancel := context.WithTimeout(ctx, NodeTimeout)
	defer cancel()
	err = WaitFor(ctx, func() (bool, error) {
		st, err := c.NodeState(ctx, id)
		return st == supervisor.StateDead, err
	})
	if err != nil {
		return fmt.Errorf("terminate node %d: wait until it is dead: %w", id, err)
	}
	return nil
}
