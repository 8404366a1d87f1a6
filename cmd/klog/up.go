package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/broker/adminapi"
	"github.com/klogdev/klog/inspect"
	"github.com/klogdev/klog/secure"
	"github.com/klogdev/klog/supervisor"
)

type upOptions struct {
	dataDir   string
	memory    bool
	durable   bool
	listen    string
	advertise string
	configs   []string
	logLevel  string
	readyFile string
	memLimit  string
	nodes     int
	hosts     []string
	racks     []string
	// faultSignals: SIGUSR1 isolates the node, SIGUSR2 heals it.
	faultSignals bool
	// adminListen is the (first) node's admin API address, or "off".
	adminListen string
	// detach runs klog up in the background (detach.go); detachedLog is
	// set by it for the process it starts: that process's output file,
	// and a ready line is wanted on file descriptor 3.
	detach, anyPort bool
	detachedLog     string
	// listenerFDs are the sockets the supervisor of klog up -n bound
	// for this node (--listener-fd NAME=FD, supervisor.ListenerFD).
	listenerFDs []string
	seedTopics  []string
	seedFile    string
	// secure opens SASL_SSL and SSL listeners with the dev CA's
	// certificates and users (up_secure.go).
	secure bool
}

// controlledShutdownTimeout bounds how long a stopping node waits for the
// controller to move its partitions' leadership to other nodes.
const controlledShutdownTimeout = 10 * time.Second

// defaultMemoryLimit is klog up's soft memory limit unless --memory-limit
// or GOMEMLIMIT says otherwise: the node's request and response budgets
// (100 MiB each by default) and its working set fit well inside it.
const defaultMemoryLimit = "448MiB"

// upLong is klog up's help.
const upLong = `Start a klog node (controller and broker in one process) and serve Kafka
clients until interrupted (SIGINT or SIGTERM shut it down cleanly).

Data lives in a per-cluster directory that survives restarts
(default: $XDG_DATA_HOME/klog/default, else ~/.local/share/klog/default);
--memory keeps everything in memory and leaves nothing behind.

When the node is ready, klog up prints BROKERS=HOST:PORT on stdout.

With -n N (2 to 9) klog up is the supervisor of a local cluster: it starts
N nodes, each its own klog up process, with ids 0 to N-1, their data in
DATA-DIR/node-ID, Kafka listeners on consecutive ports from --listen
(9092, 9093, ...) and the first three nodes Raft voters, on the ports right
after the Kafka range (9095, 9096, 9097 for -n 3); port 0 picks free
ports. --hosts puts node i on the i-th address (in turn when there are
fewer), and --racks in the i-th rack (broker.rack, for rack-aware placement
and, with -X replica.selector.class, consumers reading from the replica in
their client.rack). The layout is kept in DATA-DIR/cluster.json: klog up -n N on the
same directory brings the same cluster back. The nodes' output goes to
stderr, each line prefixed "node-ID | "; BROKERS= lists every node once
all are ready. Each node gets the cluster's defaults unless -X sets them:
default.replication.factor, offsets.topic.replication.factor and
transaction.state.log.replication.factor 3, min.insync.replicas and
transaction.state.log.min.isr 2 (for -n 2: 2 and 1). A node that dies stays down until klog node start; SIGINT
or SIGTERM stops all nodes (SIGTERM, then SIGKILL after 15s).

With --secure each node also serves a SASL_SSL listener (SCRAM-SHA-512,
SCRAM-SHA-256 and PLAIN) and an SSL listener that asks for a client
certificate (mTLS), with certificates of a dev CA: one node on the two
ports after --listen's (9093, 9094), a cluster on the ports after its Raft
range (9098-9100 and 9101-9103 for -n 3), free ports with --any-port; a
cluster's metadata quorum is mutual TLS between the nodes' certificates
(controller.listener.names=CONTROLLER over SSL). The
users admin and app get SCRAM credentials with generated passwords. The
CA, the certificates, the passwords (users.json) and client configs for
Java, librdkafka and franz-go live in DATA-DIR/secure and are kept across
restarts. After BROKERS= klog up prints the secure listeners, the users
and the client config files (with --format json, the "secure" object).
The authorizer is on (StandardAuthorizer): admin is a super user, and so
is User:ANONYMOUS, every client of the PLAINTEXT listener, which stays open
without authentication for klog's own commands: keep it on loopback. app
is given ALL on every topic, group and transactional id and
IDEMPOTENT_WRITE on the cluster when it is created (klog acl tightens
them).`

func newUpCmd(g *globals) *cobra.Command {
	var o upOptions
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a local klog broker",
		Long:  upLong,
		Example: `  klog up
  klog up -n 3
  klog up -n 3 --hosts 127.0.0.1,127.0.0.2,127.0.0.3
  klog up -n 3 --racks r1,r2,r3 -X replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector
  klog up --memory --listen 127.0.0.1:0
  klog up --secure && klog --command-config ~/.local/share/klog/default/secure/app.properties topic list
  klog up -X num.partitions=3 -X log.retention.ms=3600000
  klog up --detach --any-port --format json --ready-file ready.json --seed-topic orders:3
  klog up -n 3 --detach --any-port --seed seed/testdata/seed.yaml && klog down`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runUp(cmd, g, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.dataDir, "data-dir", "", "directory for the cluster's data (default $XDG_DATA_HOME/klog/default)")
	f.BoolVar(&o.memory, "memory", false, "keep all data in memory; nothing is written to disk")
	f.BoolVar(&o.durable, "durable", false, "acknowledge produces once fsynced, concurrent produces sharing fsyncs (-X klog.produce.durable=true)")
	f.StringVar(&o.listen, "listen", "127.0.0.1:9092", "Kafka listener address (port 0 picks a free port); with -X listeners=..., the first listener's when given")
	f.StringVar(&o.advertise, "advertise", "", "host:port advertised to clients (default: the listener's address)")
	f.StringArrayVarP(&o.configs, "config", "X", nil, "broker config as key=value, Kafka's names (repeatable)")
	f.StringVar(&o.logLevel, "log-level", "info", "log level: debug, info, warn, error")
	f.StringVar(&o.readyFile, "ready-file", "", "once ready, write the bootstrap list (first line) and the admin API URLs (second line) to this file, or with --format json klog up's JSON object")
	f.StringVar(&o.memLimit, "memory-limit", defaultMemoryLimit, "soft memory limit of the node, as GOMEMLIMIT (e.g. 1GiB); off for none. GOMEMLIMIT in the environment wins over the default")
	f.IntVarP(&o.nodes, "nodes", "n", 1, "number of nodes, 1 to 9; more than one runs each as a process under this one")
	f.StringSliceVar(&o.hosts, "hosts", nil, "with -n: the nodes' listener hosts, node i on the i-th (comma-separated)")
	f.StringVar(&o.adminListen, "admin-listen", supervisor.DefaultAdminListen, "admin HTTP API address (JSON under /v1/); with -n, node i on the next ports; port 0 picks a free port; off for none")
	f.StringSliceVar(&o.racks, "racks", nil, "with -n: the nodes' racks (broker.rack), node i in the i-th (comma-separated)")
	// Set by the supervisor of klog up -n for its children: klog node
	// isolate and heal reach the node as SIGUSR1 and SIGUSR2.
	f.BoolVar(&o.faultSignals, "fault-signals", false, "SIGUSR1 cuts the node off from its peers, SIGUSR2 heals it (for klog node isolate and heal)")
	_ = f.MarkHidden("fault-signals")
	f.StringArrayVar(&o.listenerFDs, "listener-fd", nil, "serve on a socket the supervisor bound: kafka=FD, quorum=FD or admin=FD")
	_ = f.MarkHidden("listener-fd")
	f.BoolVarP(&o.detach, "detach", "d", false, "run in the background: return once the cluster is ready (its output goes to DATA-DIR/klog.log); klog status and klog down find it")
	f.BoolVar(&o.anyPort, "any-port", false, "take free ports for the Kafka listeners (those of -X listeners too), Raft and the admin API (the hosts of --listen and --admin-listen stay)")
	f.StringArrayVar(&o.seedTopics, "seed-topic", nil, "create topic name:partitions[:replication-factor] once ready (repeatable)")
	f.StringVar(&o.seedFile, "seed", "", "create the topics and produce the records of this YAML or JSON file once ready (see seed/testdata/seed.yaml)")
	f.BoolVar(&o.secure, "secure", false, "also serve SASL_SSL and mTLS (SSL) listeners with a dev CA's certificates and the SCRAM users admin and app, kept in DATA-DIR/secure; prints how to connect")
	f.StringVar(&o.detachedLog, "detached-log", "", "")
	_ = f.MarkHidden("detached-log")
	return cmd
}

func runUp(cmd *cobra.Command, g *globals, o upOptions) error {
	start := time.Now()
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.logLevel)); err != nil {
		return usagef("--log-level %q: want debug, info, warn or error", o.logLevel)
	}
	if o.memory && cmd.Flags().Changed("data-dir") {
		return usagef("--data-dir and --memory: a node keeps its data in one place; give one")
	}
	if err := applyAnyPort(cmd, &o); err != nil {
		return err
	}
	if _, err := o.seedSpec(); err != nil {
		return err
	}
	if o.detach {
		return runDetached(cmd, g, o)
	}
	if err := setMemoryLimit(o.memLimit, cmd.Flags().Changed("memory-limit"), g.getenv); err != nil {
		return err
	}
	configs, err := o.brokerConfigs()
	if err != nil {
		return err
	}
	if err := checkSecure(o, configs); err != nil {
		return err
	}
	if o.nodes != 1 {
		return runCluster(cmd, g, o, configs, start)
	}
	return runSingle(cmd, g, o, configs, level, start)
}

// brokerConfigs returns the broker configs of -X, with --durable's.
func (o upOptions) brokerConfigs() (map[string]string, error) {
	given, err := parseConfigs("-X", o.configs)
	if err != nil {
		return nil, err
	}
	configs := make(map[string]string, len(given))
	for k, v := range given {
		configs[k] = *v
	}
	if o.durable {
		if o.memory {
			return nil, usagef("--durable and --memory: memory is never durable; give one")
		}
		if v, ok := configs["klog.produce.durable"]; ok && v != "true" {
			return nil, usagef("--durable and -X klog.produce.durable=%s disagree", v)
		}
		configs["klog.produce.durable"] = "true"
	}
	if v, ok := configs["listeners"]; ok && o.anyPort {
		configs["listeners"] = anyPortListeners(v)
	}
	return configs, nil
}

// anyPortListeners is a listeners config with every port 0, for
// --any-port: each listener takes a free port, its host kept.
func anyPortListeners(v string) string {
	parts := strings.Split(v, ",")
	for i, p := range parts {
		name, addr, ok := strings.Cut(strings.TrimSpace(p), "://")
		if host, _, err := net.SplitHostPort(addr); ok && err == nil {
			parts[i] = name + "://" + net.JoinHostPort(host, "0")
		}
	}
	return strings.Join(parts, ",")
}

// runSingle is klog up of one node: alone, or a node of klog up -n under
// its supervisor. It serves until the command's context ends or the node
// stops.
func runSingle(cmd *cobra.Command, g *globals, o upOptions, configs map[string]string, level slog.Level, start time.Time) error {
	if err := checkSingleFlags(o); err != nil {
		return err
	}
	nodeID, child, err := configNodeID(configs)
	if err != nil {
		return err
	}
	dataDir, rootDir, err := nodeDataDir(g, o, nodeID, child)
	if err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: level}))
	inherited, err := inheritedListeners(o.listenerFDs)
	if err != nil {
		return err
	}
	adminLn, err := listenAdmin(cmd, o, logger, inherited[supervisor.ListenerAdmin])
	if err != nil {
		return err
	}
	advertiseAdmin(configs, adminLn, o.advertise)
	sec, err := secureSingle(o, child, rootDir, configs)
	if err != nil {
		return err
	}
	listen := o.listen
	if _, ok := configs["listeners"]; ok && !cmd.Flags().Changed("listen") && !o.anyPort && !o.secure {
		listen = "" // the first of -X listeners binds its own address
	}
	node, err := broker.Start(cmd.Context(), broker.Config{
		NodeID:         nodeID,
		DataDir:        dataDir,
		Memory:         o.memory,
		Listen:         listen,
		Listener:       inherited[supervisor.ListenerKafka],
		QuorumListener: inherited[supervisor.ListenerQuorum],
		Listeners:      map[string]net.Listener{secure.SASLSSL: inherited[secure.SASLSSL], secure.MTLS: inherited[secure.MTLS]},
		Advertise:      o.advertise,
		Configs:        configs,
		Logger:         logger,
	})
	if err != nil {
		if adminLn != nil {
			adminLn.Close()
		}
		return err
	}
	var admin *adminapi.Server
	var adminAddrs []string
	if adminLn != nil {
		admin = adminapi.Serve(adminLn, node, adminapi.Options{Version: version, Logger: logger})
		defer admin.Close()
		adminAddrs = []string{admin.Addr()}
	}
	brokers := node.Advertised()
	info := readyInfo{Brokers: []string{brokers}, ClusterID: node.ClusterState().ClusterID, Admin: adminAddrs, DataDir: rootDir, Memory: o.memory,
		Listeners: nodeListeners(node)}
	if info.Secure, err = singleSecureInfo(cmd.Context(), g, sec, node); err != nil {
		node.Close()
		return err
	}
	unregister, err := announce(cmd, g, o, info, registerSingle(g, child))
	if err != nil {
		node.Close()
		return err
	}
	defer unregister()
	if admin != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "klog: admin API on http://%s/v1/\n", admin.Addr())
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "klog: ready in %s; export KLOG_BROKERS=%s\n", time.Since(start).Round(time.Millisecond), brokers)
	if o.faultSignals {
		stopFaults := handleFaultSignals(node, logger)
		defer stopFaults()
	}
	return serveNode(cmd.Context(), node, logger)
}

// checkSingleFlags refuses the flags of a cluster of several nodes.
func checkSingleFlags(o upOptions) error {
	if len(o.hosts) > 0 {
		return usagef("--hosts needs -n 2 or more")
	}
	if len(o.racks) > 0 {
		return usagef("--racks needs -n 2 or more; one node takes -X broker.rack=RACK")
	}
	return nil
}

// nodeListeners are node's listeners by name, each where clients reach
// it: the advertised host, the listener's port.
func nodeListeners(node *broker.Node) map[string]string {
	brokers := node.Advertised()
	out := map[string]string{}
	for _, name := range node.ListenerNames() {
		out[name] = advertisedAt(brokers, node.ListenerAddr(name))
	}
	return out
}

// configNodeID is the id of a node of a cluster, which its supervisor
// gives it as -X node.id (child); a node without one is node 0 of a
// single-node cluster.
func configNodeID(configs map[string]string) (id int32, child bool, err error) {
	v, child := configs["node.id"]
	if !child {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil || n < 0 {
		return 0, true, usagef("-X node.id=%s: want a node id, 0 or more", v)
	}
	return int32(n), true, nil
}

// nodeDataDir makes the directory of node id, a child of klog up -n or
// not, and returns it with the cluster's directory (both "" with
// --memory).
func nodeDataDir(g *globals, o upOptions, id int32, child bool) (dataDir, rootDir string, err error) {
	if o.memory {
		return "", "", nil
	}
	if dataDir, err = o.clusterDir(g); err != nil {
		return "", "", err
	}
	if !child {
		if err := supervisor.CheckSingle(dataDir); err != nil {
			return "", "", err
		}
	}
	if rootDir, err = filepath.Abs(dataDir); err != nil {
		return "", "", err
	}
	dataDir = supervisor.NodeDir(dataDir, id)
	if err := os.MkdirAll(dataDir, 0o755); err != nil {
		return "", "", fmt.Errorf("create data directory: %w", err)
	}
	return dataDir, rootDir, nil
}

// clusterDir is --data-dir, else the default data directory.
func (o upOptions) clusterDir(g *globals) (string, error) {
	if o.dataDir != "" {
		return o.dataDir, nil
	}
	return defaultDataDir(g.getenv)
}

// serveNode serves until ctx ends or the node stops, then closes the node.
func serveNode(ctx context.Context, node *broker.Node, logger *slog.Logger) error {
	select {
	case <-ctx.Done():
		// SIGTERM or SIGINT: first move leadership and ISR membership to
		// the other nodes (a single node returns at once), so a rolling
		// restart does not interrupt acks=all producers; bounded well
		// within the supervisor's 15 s before SIGKILL.
		csStart := time.Now()
		csCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), controlledShutdownTimeout)
		if err := node.ControlledShutdown(csCtx); err != nil {
			logger.Warn("controlled shutdown did not finish; stopping anyway", "err", err)
		} else {
			logger.Info("controlled shutdown", "took", time.Since(csStart).Round(time.Millisecond))
		}
		cancel()
	case <-node.Done():
	}
	stopStart := time.Now()
	err := node.Close()
	logger.Info("stopped", "took", time.Since(stopStart).Round(time.Microsecond))
	return err
}

// listenAdmin binds the node's admin API on --admin-listen, nil for off.
// Left at its default, it takes a free port instead when the Kafka
// listener's port is 0 (a node of tests, beside others), or when the
// default's port is taken (another klog up), and says so. It is bound
// before the node starts, so that the node advertises it
// (klog.admin.advertised.url). A socket the supervisor bound for it
// (inherited) is taken as it is.
func listenAdmin(cmd *cobra.Command, o upOptions, logger *slog.Logger, inherited net.Listener) (net.Listener, error) {
	addr, explicit := o.adminListen, cmd.Flags().Changed("admin-listen")
	if inherited != nil {
		return inherited, nil
	}
	if addr == supervisor.AdminOff || addr == "" {
		return nil, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, usagef("--admin-listen %q: %v", addr, err)
	}
	if _, port, _ := net.SplitHostPort(o.listen); !explicit && port == "0" {
		addr = net.JoinHostPort(host, "0")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil && !explicit && errors.Is(err, syscall.EADDRINUSE) {
		if ln, err = net.Listen("tcp", net.JoinHostPort(host, "0")); err == nil {
			logger.Warn("admin API port in use; serving it on a free port", "wanted", addr, "admin", ln.Addr().String())
		}
	}
	if err != nil {
		return nil, fmt.Errorf("--admin-listen %s: admin API: %w", addr, err)
	}
	return ln, nil
}

// advertiseAdmin sets klog.admin.advertised.url in configs to the admin
// API on ln (none: its default, empty), unless -X sets it: on an unspecified host
// (0.0.0.0) the host of --advertise, else loopback.
func advertiseAdmin(configs map[string]string, ln net.Listener, advertise string) {
	if _, set := configs[inspect.AdminURLConfig]; set || ln == nil {
		return
	}
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
		if h, _, err := net.SplitHostPort(advertise); err == nil && h != "" {
			host = h
		}
	}
	configs[inspect.AdminURLConfig] = "http://" + net.JoinHostPort(host, port)
}

// inheritedListeners returns the listeners of --listener-fd, by name.
func inheritedListeners(specs []string) (map[string]net.Listener, error) {
	out := make(map[string]net.Listener, len(specs))
	for _, spec := range specs {
		name, fdText, ok := strings.Cut(spec, "=")
		fd, err := strconv.Atoi(fdText)
		if !ok || err != nil || fd < 3 {
			return nil, usagef("--listener-fd %q: want NAME=FD", spec)
		}
		if out[name], err = supervisor.InheritedListener(fd); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// setMemoryLimit sets the Go runtime's soft memory limit from
// --memory-limit: past it the garbage collector works harder (never more
// than about half the CPU) to stay under it; no allocation fails because of
// it. An explicit flag wins over GOMEMLIMIT, GOMEMLIMIT over the default.
func setMemoryLimit(value string, explicit bool, getenv func(string) string) error {
	if !explicit && getenv("GOMEMLIMIT") != "" {
		return nil // the runtime read it at start
	}
	limit, err := parseMemoryLimit(value)
	if err != nil {
		return usagef("--memory-limit %q: %v", value, err)
	}
	debug.SetMemoryLimit(limit)
	return nil
}

// parseMemoryLimit reads a size as GOMEMLIMIT writes it: a number of bytes
// with an optional B, KiB, MiB, GiB or TiB suffix, or "off".
func parseMemoryLimit(s string) (int64, error) {
	if s == "off" {
		return math.MaxInt64, nil
	}
	num, unit := s, int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}} {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, unit = n, u.mult
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 || n > math.MaxInt64/unit {
		return 0, errors.New("want a positive size such as 512MiB or 2GiB, or off")
	}
	return n * unit, nil
}

// printReady writes klog up's ready line, BROKERS=HOST:PORT,..., or with
// --format json info as one object.
func printReady(w io.Writer, format string, info readyInfo) error {
	if format == formatJSON {
		return json.NewEncoder(w).Encode(info)
	}
	if _, err := fmt.Fprintf(w, "BROKERS=%s\n", strings.Join(info.Brokers, ",")); err != nil || info.Secure == nil {
		return err
	}
	return printSecure(w, info.Secure)
}

// defaultDataDir is the per-cluster data directory used when --data-dir is
// not given.
func defaultDataDir(getenv func(string) string) (string, error) {
	return xdgDir(getenv, "XDG_DATA_HOME", ".local/share", "default", "the default data directory; pass --data-dir or --memory")
}

// xdgDir is $VARIABLE/klog/name, else ~/FALLBACK/klog/name, after the XDG
// base directories; what names the directory for the error when there is
// no home.
func xdgDir(getenv func(string) string, variable, fallback, name, what string) (string, error) {
	if getenv != nil {
		if x := getenv(variable); x != "" {
			return filepath.Join(x, "klog", name), nil
		}
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("no home directory for %s", what)
	}
	return filepath.Join(home, filepath.FromSlash(fallback), "klog", name), nil
}
