package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/klogdev/klog/supervisor"
)

// downTimeout is how long klog down waits after SIGTERM before SIGKILL: a
// cluster's supervisor gives each node 15s.
const downTimeout = 30 * time.Second

func newDownCmd(g *globals) *cobra.Command {
	var dataDir string
	timeout := downTimeout
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop the cluster klog up runs (klog up --detach, or one in another terminal)",
		Long: `Stop a running klog up, a single node or a cluster's supervisor: SIGTERM,
which shuts it down cleanly, then SIGKILL when it has not exited after
--timeout. The cluster is found from --data-dir, else from -b or
$KLOG_BROKERS, else it is the only one running. Exits 1 when none runs.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := findRunning(cmd, g, dataDir)
			if err != nil {
				return err
			}
			killed, err := supervisor.Terminate(r.PID, timeout)
			if err != nil {
				return err
			}
			supervisor.Unregister(r)
			how := "stopped"
			if killed {
				how = fmt.Sprintf("killed (not stopped %s after SIGTERM)", timeout)
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "klog: %s pid %d (%s)\n", how, r.PID, strings.Join(r.Brokers, ","))
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "the cluster's data directory (default: found from the brokers)")
	cmd.Flags().DurationVar(&timeout, "timeout", timeout, "how long to wait after SIGTERM before SIGKILL")
	return cmd
}

func newStatusCmd(g *globals) *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Say whether klog up runs: pid, brokers, admin API, data directory",
		Long: `Say whether a klog up runs, and its process id, brokers, admin API URLs,
data directory and log file (klog up --detach); for a cluster of klog up -n
its nodes too. The cluster is found as klog down finds it. Exits 1 when none
runs.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := findRunning(cmd, g, dataDir)
			if err != nil {
				if g.format == formatJSON {
					fmt.Fprintln(cmd.OutOrStdout(), `{"running":false}`)
				}
				return err
			}
			st := statusOf(cmd, r)
			return writeOutput(g, cmd.OutOrStdout(), st, func(t *table) {
				t.row("running\tpid %d\n", st.PID)
				t.row("brokers\t%s\n", strings.Join(st.Brokers, ","))
				t.row("admin\t%s\n", orDash(strings.Join(st.AdminURLs, ",")))
				t.row("data dir\t%s\n", orDash(st.DataDir))
				t.row("log\t%s\n", orDash(st.Log))
				for _, n := range st.Nodes {
					t.row("node %d\t%s %s pid %d\n", n.ID, n.Address, n.State, n.PID)
				}
			})
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "the cluster's data directory (default: found from the brokers)")
	return cmd
}

// clusterStatus is klog status's JSON.
type clusterStatus struct {
	Running   bool                    `json:"running"`
	PID       int                     `json:"pid"`
	Brokers   []string                `json:"brokers"`
	Admin     []string                `json:"admin,omitempty"`
	AdminURLs []string                `json:"admin_urls,omitempty"`
	DataDir   string                  `json:"data_dir,omitempty"`
	Log       string                  `json:"log,omitempty"`
	Nodes     []supervisor.NodeStatus `json:"nodes,omitempty"`
}

func statusOf(cmd *cobra.Command, r supervisor.Registration) clusterStatus {
	st := clusterStatus{Running: true, PID: r.PID, Brokers: r.Brokers, Admin: r.Admin, DataDir: r.DataDir, Log: r.Log}
	for _, a := range r.Admin {
		st.AdminURLs = append(st.AdminURLs, "http://"+a+"/v1/")
	}
	if r.Socket != "" {
		if resp, err := supervisor.Call(cmd.Context(), r.Socket, supervisor.Request{Op: "list", Node: -1}); err == nil {
			st.Nodes = resp.Nodes
		}
	}
	return st
}

// servesSeeds matches the klog up serving one of the seed brokers.
func servesSeeds(seeds []string) func(supervisor.Registration) bool {
	return func(r supervisor.Registration) bool {
		return slices.ContainsFunc(seeds, func(s string) bool { return slices.Contains(r.Brokers, s) })
	}
}

// findRunning is the running klog up that the command means: the one of
// --data-dir, else the one serving one of the brokers given with -b or
// $KLOG_BROKERS, else the only one running.
func findRunning(cmd *cobra.Command, g *globals, dataDir string) (supervisor.Registration, error) {
	stateDir, err := defaultStateDir(g.getenv)
	if err != nil {
		return supervisor.Registration{}, err
	}
	var match func(supervisor.Registration) bool
	what := "no klog up is running"
	switch {
	case dataDir != "":
		abs, err := filepath.Abs(dataDir)
		if err != nil {
			return supervisor.Registration{}, err
		}
		match = func(r supervisor.Registration) bool { return r.DataDir == abs }
		what = "no klog up is running on " + abs
	case cmd.Flags().Changed("brokers") || g.getenv("KLOG_BROKERS") != "":
		match = servesSeeds(g.seeds())
		what = "no klog up is running with brokers " + g.brokers
	}
	regs, err := supervisor.Running(stateDir, match)
	if err != nil {
		return supervisor.Registration{}, err
	}
	switch len(regs) {
	case 0:
		return supervisor.Registration{}, fmt.Errorf("%w: %s", supervisor.ErrNotFound, what)
	case 1:
		return regs[0], nil
	}
	var dirs []string
	for _, r := range regs {
		dirs = append(dirs, fmt.Sprintf("pid %d %s", r.PID, orDash(r.DataDir)))
	}
	return supervisor.Registration{}, usagef("%d klog up are running (%s); say which with --data-dir or -b", len(regs), strings.Join(dirs, "; "))
}
