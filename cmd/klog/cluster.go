package main

import (
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/inspect"
	"github.com/klogdev/klog/supervisor"
)

// runCluster is klog up -n N with N > 1: this process supervises N nodes,
// each a klog up of the same binary (package supervisor).
func runCluster(cmd *cobra.Command, g *globals, o upOptions, configs map[string]string, start time.Time) error {
	if err := checkClusterFlags(o, configs); err != nil {
		return err
	}
	dir, err := o.clusterDir(g)
	if err != nil {
		return err
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	spec := supervisor.Spec{Nodes: o.nodes, Hosts: o.hosts, Secure: o.secure}
	if cmd.Flags().Changed("listen") || o.anyPort {
		spec.Listen = o.listen
	}
	layout, err := supervisor.Prepare(dir, spec)
	if err != nil {
		return err
	}
	// The sockets bound while the ports were chosen are held for the
	// nodes, which serve on them (supervisor.Reserved).
	defer layout.Reserved().Close()
	adminListen, admin, moved, err := clusterAdmin(cmd, o, layout)
	if err != nil {
		return err
	}
	stateDir, err := defaultStateDir(g.getenv)
	if err != nil {
		return err
	}
	control, err := supervisor.ListenControl(dir, stateDir, layout.Brokers())
	if err != nil {
		return err
	}
	defer control.Close()

	sec, secureArgs, err := secureLayout(o, dir, layout)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	sup, err := startNodes(cmd, o, configs, dir, layout, admin, secureArgs)
	if err != nil {
		return err
	}
	defer sup.Shutdown()
	served := make(chan error, 1)
	go func() { served <- control.Serve(ctx, sup) }()

	nodes := sup.List()
	brokers := layout.Brokers()
	info := readyInfo{Brokers: brokers, Admin: admin, DataDir: dir, Nodes: nodes}
	if info.ClusterID, err = g.clusterID(ctx, brokers); err != nil {
		// Registered without its id, the cluster is still found by
		// its addresses in this network namespace.
		fmt.Fprintf(cmd.ErrOrStderr(), "klog: the cluster's id: %v\n", err)
	}
	if info.Secure, err = clusterSecureInfo(ctx, g, sec, layout); err != nil {
		return err
	}
	if _, err := announce(cmd, g, o, info, func(info readyInfo) (func(), error) {
		return func() {}, control.Update(info.ClusterID, info.Admin, info.Log)
	}); err != nil {
		return err
	}
	diag := cmd.ErrOrStderr()
	if moved {
		fmt.Fprintf(diag, "klog: admin API ports from %s are in use; the nodes took free ones\n", adminListen)
	}
	printNodes(diag, nodes)
	joined := strings.Join(brokers, ",")
	fmt.Fprintf(diag, "klog: %d nodes ready in %s; export KLOG_BROKERS=%s\n", len(nodes), time.Since(start).Round(time.Millisecond), joined)
	select {
	case <-ctx.Done():
		return nil
	case err := <-served:
		return err
	}
}

// startNodes starts the supervisor of the cluster in dir, which starts its
// nodes, each this binary, and returns once all are ready.
func startNodes(cmd *cobra.Command, o upOptions, configs map[string]string, dir string, layout supervisor.Layout, admin []string, nodeArgs func(supervisor.NodeLayout) []string) (*supervisor.Supervisor, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the klog binary for the nodes: %w", err)
	}
	var level slog.Level
	level.UnmarshalText([]byte(o.logLevel)) // checked by runUp
	diag := cmd.ErrOrStderr()
	return supervisor.Start(cmd.Context(), supervisor.Config{
		Dir:      dir,
		Layout:   layout,
		Exe:      exe,
		Args:     clusterArgs(cmd, o, configs, len(layout.Nodes)),
		NodeArgs: nodeArgs,
		Racks:    o.racks,
		// Until the controller knows controller.quorum.voters, the nodes
		// run without it, each a single-node cluster of its own.
		PassVoters: isBrokerConfig("controller.quorum.voters"),
		Admin:      admin,
		Log:        diag,
		Logger:     slog.New(slog.NewTextHandler(diag, &slog.HandlerOptions{Level: level})),
	})
}

// checkClusterFlags refuses the flags and configs klog up -n cannot take,
// and a config every node would refuse, before any node starts.
func checkClusterFlags(o upOptions, configs map[string]string) error {
	switch {
	case o.nodes < 1 || o.nodes > supervisor.MaxNodes:
		return usagef("-n %d: want 1 to %d nodes", o.nodes, supervisor.MaxNodes)
	case o.memory:
		return usagef("--memory runs one node only; -n %d keeps its cluster in --data-dir", o.nodes)
	case o.advertise != "":
		return usagef("--advertise names one node; -n %d advertises each node's listener", o.nodes)
	}
	for _, k := range []string{"node.id", "broker.id", "controller.quorum.voters", inspect.AdminURLConfig} {
		if _, ok := configs[k]; ok {
			return usagef("-X %s: klog up -n %d gives each node its own", k, o.nodes)
		}
	}
	if _, ok := configs["broker.rack"]; ok && len(o.racks) > 0 {
		return usagef("-X broker.rack and --racks: give the nodes' racks once")
	}
	for _, r := range o.racks {
		if strings.TrimSpace(r) == "" {
			return usagef("--racks %q: a rack name is empty", strings.Join(o.racks, ","))
		}
	}
	if _, err := config.ParseBroker(configs); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// clusterArgs returns the flags every node of a cluster of n gets: the
// cluster's defaults (RF 3, min.insync.replicas 2 from three nodes), each
// unless the user's -X sets it, then the user's -X, log level and memory
// limit.
func clusterArgs(cmd *cobra.Command, o upOptions, configs map[string]string, n int) []string {
	var args []string
	defaults := supervisor.Defaults(n)
	for _, k := range slices.Sorted(maps.Keys(defaults)) {
		if _, set := configs[k]; !set {
			args = append(args, "-X", k+"="+defaults[k])
		}
	}
	for _, kv := range o.configs {
		args = append(args, "-X", kv)
	}
	args = append(args, "--log-level", o.logLevel)
	if cmd.Flags().Changed("memory-limit") {
		args = append(args, "--memory-limit", o.memLimit)
	}
	return args
}

// clusterAdmin returns the nodes' admin API addresses from --admin-listen
// (what it asked for, left at its default a free port when the Kafka
// listeners' is 0) and whether ports in use moved them.
func clusterAdmin(cmd *cobra.Command, o upOptions, layout supervisor.Layout) (adminListen string, admin []string, moved bool, err error) {
	adminListen = o.adminListen
	if _, port, _ := net.SplitHostPort(o.listen); port == "0" && !cmd.Flags().Changed("admin-listen") && adminListen != supervisor.AdminOff {
		host, _, _ := net.SplitHostPort(adminListen)
		adminListen = net.JoinHostPort(host, "0")
	}
	admin, moved, err = supervisor.AdminAddresses(adminListen, len(layout.Nodes), cmd.Flags().Changed("admin-listen"), layout.Reserved(), layout.Ports()...)
	if err != nil {
		return "", nil, false, usagef("%v", err)
	}
	return adminListen, admin, moved, nil
}

// printNodes writes a line for each node of a cluster that is ready.
func printNodes(w io.Writer, nodes []supervisor.NodeStatus) {
	for _, n := range nodes {
		controller := ""
		if n.ControllerAddress != "" {
			controller = " (controller " + n.ControllerAddress + ")"
		}
		adminAt := ""
		if n.Admin != "" {
			adminAt = ", admin API http://" + n.Admin + "/v1/"
		}
		fmt.Fprintf(w, "klog: node %d %s %s%s pid %d%s\n", n.ID, n.Address, n.Role, controller, n.PID, adminAt)
	}
}

// isBrokerConfig reports whether this klog knows the broker config name.
func isBrokerConfig(name string) bool {
	_, ok := config.LookupBroker(name)
	return ok
}

// defaultStateDir is where running clusters register, for commands that
// find them from their addresses: $XDG_STATE_HOME/klog/clusters, else
// ~/.local/state/klog/clusters.
func defaultStateDir(getenv func(string) string) (string, error) {
	return xdgDir(getenv, "XDG_STATE_HOME", ".local/state", "clusters", "the cluster registrations; set XDG_STATE_HOME")
}
