package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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
--timeout. Exits 1 when none runs.

` + pickHelp,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := pickCluster(cmd.Context(), cmd, g, dataDir)
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
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "the cluster's data directory (default: the cluster -b names, else the only one running)")
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
runs (with --format json: {"running":false}, with other_namespaces, the
clusters of other network namespaces); when several fit, exits 2 and lists
them ({"running":true,"ambiguous":true,"candidates":[...]}).

` + pickHelp,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			r, err := pickCluster(cmd.Context(), cmd, g, dataDir)
			if err != nil {
				if g.format == formatJSON {
					writeNotChosen(cmd.OutOrStdout(), err)
				}
				return err
			}
			st := statusOf(cmd, r)
			return writeOutput(g, cmd.OutOrStdout(), st, func(t *table) {
				t.row("running\tpid %d\n", st.PID)
				t.row("cluster id\t%s\n", orDash(st.ClusterID))
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
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "the cluster's data directory (default: the cluster -b names, else the only one running)")
	return cmd
}

// clusterStatus is klog status's JSON.
type clusterStatus struct {
	Running   bool                    `json:"running"`
	PID       int                     `json:"pid"`
	ClusterID string                  `json:"cluster_id,omitempty"`
	Brokers   []string                `json:"brokers"`
	Admin     []string                `json:"admin,omitempty"`
	AdminURLs []string                `json:"admin_urls,omitempty"`
	DataDir   string                  `json:"data_dir,omitempty"`
	Log       string                  `json:"log,omitempty"`
	Nodes     []supervisor.NodeStatus `json:"nodes,omitempty"`
}

func statusOf(cmd *cobra.Command, r supervisor.Registration) clusterStatus {
	st := clusterStatus{Running: true, PID: r.PID, ClusterID: r.ClusterID, Brokers: r.Brokers, Admin: r.Admin, DataDir: r.DataDir, Log: r.Log}
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

// pickHelp says, in the help of the commands that act on a local cluster,
// how pickCluster picks it.
const pickHelp = `The cluster acted on is the klog up running on --data-dir (in any network
namespace); else, among those running in this network namespace, the one
serving one of the brokers of -b or $KLOG_BROKERS whose cluster id they
report; else the only one running. When several fit, the command lists
them (data dir, cluster id, pid, brokers), acts on none and exits 2: name
one with --data-dir.`

// candidateJSON is a cluster klog status could not choose among others.
type candidateJSON struct {
	PID       int      `json:"pid"`
	DataDir   string   `json:"data_dir,omitempty"`
	ClusterID string   `json:"cluster_id,omitempty"`
	Brokers   []string `json:"brokers"`
}

// notChosenJSON is klog status's JSON when no cluster was picked.
type notChosenJSON struct {
	Running    bool            `json:"running"`
	Ambiguous  bool            `json:"ambiguous,omitempty"`
	Candidates []candidateJSON `json:"candidates,omitempty"`
	// OtherNamespaces are the clusters running in other network
	// namespaces, which a command here does not reach by address.
	OtherNamespaces []candidateJSON `json:"other_namespaces,omitempty"`
	Error           string          `json:"error,omitempty"`
}

// writeNotChosen is klog status --format json when no cluster was picked:
// none runs here ({"running":false}, with those of other network
// namespaces), or several fit and are listed.
func writeNotChosen(out io.Writer, err error) {
	candidates := func(regs []supervisor.Registration) []candidateJSON {
		var out []candidateJSON
		for _, r := range regs {
			out = append(out, candidateJSON{PID: r.PID, DataDir: r.DataDir, ClusterID: r.ClusterID, Brokers: r.Brokers})
		}
		return out
	}
	var doc notChosenJSON
	var amb *supervisor.AmbiguousError
	var nf *supervisor.NotFoundError
	switch {
	case errors.As(err, &amb):
		doc = notChosenJSON{Running: true, Ambiguous: true, Candidates: candidates(amb.Candidates), Error: err.Error()}
	case errors.As(err, &nf):
		doc = notChosenJSON{OtherNamespaces: candidates(nf.Elsewhere), Error: err.Error()}
	default:
		doc.Error = err.Error()
	}
	b, _ := json.Marshal(doc)
	fmt.Fprintln(out, string(b))
}

// pickCluster is the running klog up the command is pointed at
// (supervisor.Pick): the one of --data-dir, wherever it runs; else, in
// this network namespace, the one serving one of the brokers given with
// -b or $KLOG_BROKERS and of the cluster id they report; else the only one
// running. More than one that fits is a usage error naming them.
func pickCluster(ctx context.Context, cmd *cobra.Command, g *globals, dataDir string) (supervisor.Registration, error) {
	stateDir, err := defaultStateDir(g.getenv)
	if err != nil {
		return supervisor.Registration{}, err
	}
	t := supervisor.Target{DataDir: dataDir}
	if cmd.Flags().Changed("brokers") || g.getenv("KLOG_BROKERS") != "" {
		t.Brokers = g.seeds()
		t.ClusterID = func(ctx context.Context) (string, error) { return g.clusterID(ctx, t.Brokers) }
	}
	r, err := supervisor.Pick(ctx, stateDir, t)
	if errors.Is(err, supervisor.ErrAmbiguous) {
		return r, &usageError{err: err}
	}
	return r, err
}
