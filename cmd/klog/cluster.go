package main

import (
	"fmt"
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
	"github.com/klogdev/klog/supervisor"
)

// runCluster is klog up -n N with N > 1: this process supervises N nodes,
// each a klog up of the same binary (package supervisor).
func runCluster(cmd *cobra.Command, g *globals, o upOptions, configs map[string]string, start time.Time) error {
	switch {
	case o.nodes < 1 || o.nodes > supervisor.MaxNodes:
		return usagef("-n %d: want 1 to %d nodes", o.nodes, supervisor.MaxNodes)
	case o.memory:
		return usagef("--memory runs one node only; -n %d keeps its cluster in --data-dir", o.nodes)
	case o.advertise != "":
		return usagef("--advertise names one node; -n %d advertises each node's listener", o.nodes)
	}
	for _, k := range []string{"node.id", "broker.id", "controller.quorum.voters"} {
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
	// The nodes would each refuse a bad config; refuse it once, before any
	// starts.
	if _, err := config.ParseBroker(configs); err != nil {
		return usagef("%v", err)
	}
	dir := o.dataDir
	if dir == "" {
		var err error
		if dir, err = defaultDataDir(g.getenv); err != nil {
			return err
		}
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	spec := supervisor.Spec{Nodes: o.nodes, Hosts: o.hosts}
	if cmd.Flags().Changed("listen") || o.anyPort {
		spec.Listen = o.listen
	}
	layout, err := supervisor.Prepare(dir, spec)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find the klog binary for the nodes: %w", err)
	}
	var args []string
	// The cluster's defaults (RF 3, min.insync.replicas 2 from three
	// nodes), each unless the user's -X sets it.
	defaults := supervisor.Defaults(len(layout.Nodes))
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
	adminListen := o.adminListen
	if _, port, _ := net.SplitHostPort(o.listen); port == "0" && !cmd.Flags().Changed("admin-listen") && adminListen != supervisor.AdminOff {
		host, _, _ := net.SplitHostPort(adminListen)
		adminListen = net.JoinHostPort(host, "0")
	}
	admin, moved, err := supervisor.AdminAddresses(adminListen, len(layout.Nodes), cmd.Flags().Changed("admin-listen"), layout.Ports()...)
	if err != nil {
		return usagef("%v", err)
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

	var level slog.Level
	level.UnmarshalText([]byte(o.logLevel)) // checked by runUp
	diag := cmd.ErrOrStderr()
	ctx := cmd.Context()
	sup, err := supervisor.Start(ctx, supervisor.Config{
		Dir:    dir,
		Layout: layout,
		Exe:    exe,
		Args:   args,
		Racks:  o.racks,
		// Until the controller knows controller.quorum.voters, the nodes
		// run without it, each a single-node cluster of its own.
		PassVoters: isBrokerConfig("controller.quorum.voters"),
		Admin:      admin,
		Log:        diag,
		Logger:     slog.New(slog.NewTextHandler(diag, &slog.HandlerOptions{Level: level})),
	})
	if err != nil {
		return err
	}
	defer sup.Shutdown()
	served := make(chan error, 1)
	go func() { served <- control.Serve(ctx, sup) }()

	nodes := sup.List()
	brokers := layout.Brokers()
	info := readyInfo{Brokers: brokers, Admin: admin, DataDir: dir, Nodes: nodes}
	if _, err := announce(cmd, g, o, info, func(info readyInfo) (func(), error) {
		return func() {}, control.Update(info.Admin, info.Log)
	}); err != nil {
		return err
	}
	if moved {
		fmt.Fprintf(diag, "klog: admin API ports from %s are in use; the nodes took free ones\n", adminListen)
	}
	for _, n := range nodes {
		controller := ""
		if n.ControllerAddress != "" {
			controller = " (controller " + n.ControllerAddress + ")"
		}
		adminAt := ""
		if n.Admin != "" {
			adminAt = ", admin API http://" + n.Admin + "/v1/"
		}
		fmt.Fprintf(diag, "klog: node %d %s %s%s pid %d%s\n", n.ID, n.Address, n.Role, controller, n.PID, adminAt)
	}
	joined := strings.Join(brokers, ",")
	fmt.Fprintf(diag, "klog: %d nodes ready in %s; export KLOG_BROKERS=%s\n", len(nodes), time.Since(start).Round(time.Millisecond), joined)
	select {
	case <-ctx.Done():
		return nil
	case err := <-served:
		return err
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
