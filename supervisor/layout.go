package supervisor

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// MaxNodes is the largest cluster klog up -n runs.
const MaxNodes = 9

// MaxVoters is how many nodes, the first ones, are Raft voters; the rest
// are brokers only.
const MaxVoters = 3

// DefaultListen is the first node's Kafka listener when none is given.
const DefaultListen = "127.0.0.1:9092"

// DefaultAdminListen is the first node's admin API when none is given;
// the others take the next ports.
const DefaultAdminListen = "127.0.0.1:9644"

// AdminOff as --admin-listen runs a node without its admin API.
const AdminOff = "off"

// layoutFile is the cluster's layout in its data directory.
const layoutFile = "cluster.json"

// layoutVersion is the version of cluster.json written.
const layoutVersion = 1

// Spec is the cluster klog up -n asks for.
type Spec struct {
	// Nodes is the number of nodes, 2 to MaxNodes.
	Nodes int
	// Listen is the first node's Kafka listener, host:port; the others
	// take the next ports. Port 0 picks free ports. Empty is DefaultListen
	// for a new cluster and the recorded layout for an existing one.
	Listen string
	// Hosts, when set, puts node i on Hosts[i % len(Hosts)] instead of
	// Listen's host. Empty for an existing cluster keeps its hosts.
	Hosts []string
	// Secure gives every node the ports of klog up --secure's SASL_SSL
	// and SSL listeners (kept in the layout once given).
	Secure bool
}

// Layout is a cluster laid out on disk: which node listens where. It is
// written to cluster.json in the cluster's data directory when the cluster
// is first made and read back on every start, so a restarted cluster has the
// same node ids, addresses and directories.
type Layout struct {
	Version int    `json:"version"`
	Listen  string `json:"listen"`
	// Hosts is --hosts as given when the cluster was made.
	Hosts []string     `json:"hosts,omitempty"`
	Nodes []NodeLayout `json:"nodes"`

	// reserved holds the sockets of the ports just chosen for a new
	// layout (port 0), for its nodes' first start.
	reserved *Reserved
}

// Reserved returns the sockets bound when l's free ports were chosen, and
// those AdminAddresses adds; Start passes each to its node and releases
// the rest. Empty for a recorded layout (its ports are fixed), nil for a
// Layout not from Prepare. A caller of Prepare that does not Start closes
// it.
func (l Layout) Reserved() *Reserved { return l.reserved }

// NodeLayout is one node of a Layout.
type NodeLayout struct {
	ID   int32  `json:"id"`
	Host string `json:"host"`
	// Port is the Kafka listener's port.
	Port int `json:"port"`
	// ControllerPort is the Raft port of a voter; 0 for a broker.
	ControllerPort int `json:"controller_port,omitempty"`
	// SecurePort and MTLSPort are the ports of klog up --secure's
	// SASL_SSL and SSL (mTLS) listeners; 0 until a --secure start.
	SecurePort int `json:"secure_port,omitempty"`
	MTLSPort   int `json:"mtls_port,omitempty"`
}

// SecureAddress is the node's SASL_SSL listener of klog up --secure,
// host:port; empty without one.
func (n NodeLayout) SecureAddress() string { return n.hostPort(n.SecurePort) }

// MTLSAddress is the node's SSL (mTLS) listener of klog up --secure,
// host:port; empty without one.
func (n NodeLayout) MTLSAddress() string { return n.hostPort(n.MTLSPort) }

func (n NodeLayout) hostPort(port int) string {
	if port == 0 {
		return ""
	}
	return net.JoinHostPort(n.Host, strconv.Itoa(port))
}

// Address is the node's Kafka listener, host:port.
func (n NodeLayout) Address() string { return net.JoinHostPort(n.Host, strconv.Itoa(n.Port)) }

// ControllerAddress is a voter's Raft address, host:port; empty for a
// broker.
func (n NodeLayout) ControllerAddress() string { return n.hostPort(n.ControllerPort) }

// Role is "voter" or "broker".
func (n NodeLayout) Role() string {
	if n.ControllerPort != 0 {
		return "voter"
	}
	return "broker"
}

// Brokers is the bootstrap list: every node's Kafka address, in id order.
func (l Layout) Brokers() []string {
	out := make([]string, len(l.Nodes))
	for i, n := range l.Nodes {
		out[i] = n.Address()
	}
	return out
}

// Voters is controller.quorum.voters in Kafka's format, ID@HOST:PORT,...
func (l Layout) Voters() string {
	var parts []string
	for _, n := range l.Nodes {
		if a := n.ControllerAddress(); a != "" {
			parts = append(parts, fmt.Sprintf("%d@%s", n.ID, a))
		}
	}
	return strings.Join(parts, ",")
}

// AdminAddresses lays out the admin APIs of nodes nodes from listen, the
// first one's address: node i on port + i of its host; port 0 picks free
// ports, chosen now, never one of taken (the cluster's Kafka and Raft
// ports, free until their nodes start). Unless explicit (the user gave
// listen), a port in use makes every node take a free one instead; moved
// says so. AdminOff, or an empty listen, is none. The sockets bound to
// check the ports are kept in held (nil: closed) for the nodes' start.
func AdminAddresses(listen string, nodes int, explicit bool, held *Reserved, taken ...int) (addrs []string, moved bool, err error) {
	if listen == "" || listen == AdminOff {
		return nil, false, nil
	}
	host, portText, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, false, fmt.Errorf("--admin-listen %q: %w", listen, err)
	}
	base, err := strconv.Atoi(portText)
	if err != nil || base < 0 || base+nodes-1 > 65535 {
		return nil, false, fmt.Errorf("--admin-listen %q: bad port for %d nodes", listen, nodes)
	}
	var open []net.Listener
	closeAll := func() {
		for _, ln := range open {
			ln.Close()
		}
		open = nil
	}
	defer func() { closeAll() }()
	pick := func(port int) (string, error) {
		if port != 0 && slices.Contains(taken, port) {
			return "", fmt.Errorf("port %d is another port of the cluster", port)
		}
		// A free port the cluster's other ports hold is kept open, so
		// that the next pick gets another.
		for range 100 {
			ln, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
			if err != nil {
				return "", err
			}
			open = append(open, ln)
			if port != 0 || !slices.Contains(taken, ln.Addr().(*net.TCPAddr).Port) {
				return ln.Addr().String(), nil
			}
		}
		return "", fmt.Errorf("no free port on %s apart from the cluster's", host)
	}
	for i := range nodes {
		port := 0
		if base != 0 {
			port = base + i
		}
		a, err := pick(port)
		if err != nil && port != 0 && !explicit {
			closeAll()
			addrs, _, err = AdminAddresses(net.JoinHostPort(host, "0"), nodes, true, held, taken...)
			return addrs, true, err
		}
		if err != nil {
			return nil, false, fmt.Errorf("--admin-listen: node %d: %w", i, err)
		}
		addrs = append(addrs, a)
	}
	if held != nil {
		for _, ln := range open {
			if a := ln.Addr().String(); slices.Contains(addrs, a) {
				held.hold(a, ln)
			} else {
				ln.Close()
			}
		}
		open = nil
	}
	return addrs, false, nil
}

// Ports are the Kafka, Raft and --secure ports of the layout's nodes.
func (l Layout) Ports() []int {
	var ports []int
	for _, n := range l.Nodes {
		for _, p := range []int{n.Port, n.ControllerPort, n.SecurePort, n.MTLSPort} {
			if p != 0 {
				ports = append(ports, p)
			}
		}
	}
	return ports
}

// NodeDir is the data directory of node id under the cluster's directory,
// the one klog up -X node.id=ID --data-dir dir uses.
func NodeDir(dir string, id int32) string {
	return filepath.Join(dir, "node-"+strconv.Itoa(int(id)))
}

// Prepare returns the layout of the cluster in dir: the recorded one when
// dir holds a cluster, which spec must then agree with, else a new one
// made from spec and recorded. A dir that holds a single node's data (klog
// up without -n) or a cluster of another size is refused with
// ErrNodeCount, a --listen or --hosts other than the recorded ones with
// ErrLayoutChanged.
func Prepare(dir string, spec Spec) (Layout, error) {
	if spec.Nodes < 2 || spec.Nodes > MaxNodes {
		return Layout{}, fmt.Errorf("-n %d: want 1 to %d nodes", spec.Nodes, MaxNodes)
	}
	l, err := readLayout(dir)
	switch {
	case err == nil:
		l.reserved = &Reserved{}
		if err := l.agrees(dir, spec); err != nil {
			return Layout{}, err
		}
		if spec.Secure && l.Nodes[0].SecurePort == 0 {
			// The ports of --secure join a cluster made without it.
			if err := l.planSecure(); err != nil {
				return Layout{}, err
			}
			if err := writeLayout(dir, l); err != nil {
				l.reserved.Close()
				return Layout{}, err
			}
		}
		return l, nil
	case !errors.Is(err, fs.ErrNotExist):
		return Layout{}, err
	}
	if _, err := os.Stat(NodeDir(dir, 0)); err == nil {
		return Layout{}, fmt.Errorf("%w: %s holds a single node's data (klog up without -n); start it with klog up -n 1, or give -n %d another --data-dir", ErrNodeCount, dir, spec.Nodes)
	}
	if l, err = plan(spec); err != nil {
		return Layout{}, err
	}
	if spec.Secure {
		if err := l.planSecure(); err != nil {
			l.reserved.Close()
			return Layout{}, err
		}
	}
	if err := writeLayout(dir, l); err != nil {
		l.reserved.Close()
		return Layout{}, err
	}
	return l, nil
}

// CheckSingle refuses to run one node in dir when dir holds a cluster laid
// out for several.
func CheckSingle(dir string) error {
	l, err := readLayout(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return err
	}
	return fmt.Errorf("%w: %s holds a cluster of %d nodes; start it with klog up -n %d, or give a single node another --data-dir", ErrNodeCount, dir, len(l.Nodes), len(l.Nodes))
}

func (l Layout) agrees(dir string, spec Spec) error {
	if len(l.Nodes) != spec.Nodes {
		return fmt.Errorf("%w: %s holds a cluster of %d nodes, not %d; start it with klog up -n %d, or give -n %d another --data-dir", ErrNodeCount, dir, len(l.Nodes), spec.Nodes, len(l.Nodes), spec.Nodes)
	}
	if spec.Listen != "" && spec.Listen != l.Listen {
		return fmt.Errorf("%w: %s was made with --listen %s, not %s; leave --listen out to start it as it was", ErrLayoutChanged, dir, l.Listen, spec.Listen)
	}
	if len(spec.Hosts) > 0 && !slices.Equal(spec.Hosts, l.Hosts) {
		return fmt.Errorf("%w: %s was made with --hosts %q, not %q; leave --hosts out to start it as it was", ErrLayoutChanged, dir, strings.Join(l.Hosts, ","), strings.Join(spec.Hosts, ","))
	}
	return nil
}

// plan lays out a new cluster: node i (ids from 0) listens for Kafka on
// the listener's port + i; voter j (the first MaxVoters nodes) takes the
// Raft port right after the Kafka range, port + Nodes + j. With port 0
// every port is a free one, chosen now.
func plan(spec Spec) (Layout, error) {
	listen := spec.Listen
	if listen == "" {
		listen = DefaultListen
	}
	host, portText, err := net.SplitHostPort(listen)
	if err != nil {
		return Layout{}, fmt.Errorf("--listen %q: %w", listen, err)
	}
	base, err := strconv.Atoi(portText)
	if err != nil || base < 0 || base > 65535 {
		return Layout{}, fmt.Errorf("--listen %q: bad port", listen)
	}
	voters := min(spec.Nodes, MaxVoters)
	if base != 0 && base+spec.Nodes+voters-1 > 65535 {
		return Layout{}, fmt.Errorf("--listen %q: %d nodes need ports %d to %d", listen, spec.Nodes, base, base+spec.Nodes+voters-1)
	}
	l := Layout{Version: layoutVersion, Listen: listen, Hosts: spec.Hosts}
	for i := range spec.Nodes {
		n := NodeLayout{ID: int32(i), Host: host}
		if len(spec.Hosts) > 0 {
			n.Host = spec.Hosts[i%len(spec.Hosts)]
		}
		if base != 0 {
			n.Port = base + i
			if i < voters {
				n.ControllerPort = base + spec.Nodes + i
			}
		}
		l.Nodes = append(l.Nodes, n)
	}
	if base == 0 {
		if err := pickFreePorts(&l, voters); err != nil {
			return Layout{}, err
		}
	}
	return l, nil
}

// pickFreePorts gives every node of l a free Kafka port, and the first
// voters a free Raft port. The listeners stay open, held in l.reserved
// for the nodes' first start, so no port is picked twice and none is
// taken by another process before its node serves on it.
func pickFreePorts(l *Layout, voters int) (err error) {
	l.reserved = &Reserved{}
	defer func() {
		if err != nil {
			l.reserved.Close()
			l.reserved = nil
		}
	}()
	for i := range l.Nodes {
		n := &l.Nodes[i]
		var err error
		if n.Port, err = l.reserved.free(n.Host); err != nil {
			return err
		}
		if i < voters {
			if n.ControllerPort, err = l.reserved.free(n.Host); err != nil {
				return err
			}
		}
	}
	return nil
}

// planSecure gives every node of l the ports of klog up --secure: with
// a fixed --listen port, the SASL_SSL listeners on the consecutive ports
// right after the Raft range and the SSL listeners after them (9098 to
// 9100 and 9101 to 9103 for -n 3 from 9092); with port 0 free ports,
// held in l.reserved as pickFreePorts holds its own.
func (l *Layout) planSecure() error {
	_, portText, err := net.SplitHostPort(l.Listen)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", l.Listen, err)
	}
	base, _ := strconv.Atoi(portText)
	nodes, voters := len(l.Nodes), min(len(l.Nodes), MaxVoters)
	if base == 0 {
		if l.reserved == nil {
			l.reserved = &Reserved{}
		}
		for i := range l.Nodes {
			n := &l.Nodes[i]
			if n.SecurePort, err = l.reserved.free(n.Host); err != nil {
				return err
			}
			if n.MTLSPort, err = l.reserved.free(n.Host); err != nil {
				return err
			}
		}
		return nil
	}
	first := base + nodes + voters
	if last := first + 2*nodes - 1; last > 65535 {
		return fmt.Errorf("--listen %q --secure: %d nodes need ports %d to %d", l.Listen, nodes, base, last)
	}
	for i := range l.Nodes {
		l.Nodes[i].SecurePort = first + i
		l.Nodes[i].MTLSPort = first + nodes + i
	}
	return nil
}

func readLayout(dir string) (Layout, error) {
	b, err := os.ReadFile(filepath.Join(dir, layoutFile))
	if err != nil {
		return Layout{}, err
	}
	var l Layout
	if err := json.Unmarshal(b, &l); err != nil {
		return Layout{}, fmt.Errorf("read %s: %w", filepath.Join(dir, layoutFile), err)
	}
	if l.Version != layoutVersion || len(l.Nodes) < 2 {
		return Layout{}, fmt.Errorf("read %s: version %d with %d nodes is not a layout this klog knows", filepath.Join(dir, layoutFile), l.Version, len(l.Nodes))
	}
	return l, nil
}

// writeLayout records l in dir, whole or not at all.
func writeLayout(dir string, l Layout) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create data directory: %w", err)
	}
	b, err := json.MarshalIndent(l, "", "  ")
	if err != nil {
		return err
	}
	if err := WriteFileAtomic(filepath.Join(dir, layoutFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("write cluster layout: %w", err)
	}
	return nil
}
