package main

import (
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/klogdev/klog/supervisor"
)

// nodeActs are the klog node subcommands that act on one node, and what
// each does.
var nodeActs = []struct{ op, short, long string }{
	{"kill", "Kill a node with SIGKILL", "Kill node ID with SIGKILL: no flush, no clean shutdown. It stays dead until klog node start."},
	{"stop", "Stop a node with SIGSTOP (a hung node)", "Stop node ID with SIGSTOP: the process stays, its connections open, and answers nothing until klog node start resumes it."},
	{"start", "Resume a stopped node or relaunch a dead one", "Resume node ID with SIGCONT when it is stopped, or launch it again when it is dead, and wait until it is ready. A running node is left alone."},
	{"restart", "Restart a node: SIGTERM, then launch it again", "Stop node ID with SIGTERM (SIGKILL after 15s), launch it again on the same data and port, and wait until it is ready."},
	{"isolate", "Cut a node off from the other nodes", "Cut node ID off from the other nodes: its metadata quorum traffic (Raft and forwarded proposals), replica fetches and coordinator requests are dropped both ways until klog node heal; its clients stay connected. A leader so isolated loses its leadership; the others elect another."},
	{"heal", "End a node's isolation", "Let node ID talk to the other nodes again after klog node isolate; it catches up with the metadata it missed."},
}

func newNodeCmd(g *globals) *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "node",
		Short: "List, kill, stop and start the nodes of a local cluster (klog up -n N)",
		Long: `Act on the nodes of a local cluster started with klog up -n N. Its
supervisor does the act, so the node's process is its child still. -b
takes any address klog up -n printed.

` + pickHelp,
	}
	cmd.PersistentFlags().StringVar(&dataDir, "data-dir", "", "the cluster's data directory (default: the cluster -b names, else the only one running)")
	list := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the nodes: id, address, pid, state and role",
		Long: `List the cluster's nodes with their Kafka address, process id, state
(running, starting, stopped, isolated, dead), role (voter: a Raft voter and
broker; broker: a broker only) and admin API address.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runNode(cmd, g, dataDir, supervisor.Request{Op: "list", Node: -1}, cmd.OutOrStdout())
		},
	}
	cmd.AddCommand(list)
	for _, act := range nodeActs {
		cmd.AddCommand(&cobra.Command{
			Use:   act.op + " ID",
			Short: act.short,
			Long:  act.long + "\n\nIt prints the node's row as klog node list does.",
			Args:  usageArgs(cobra.ExactArgs(1)),
			RunE: func(cmd *cobra.Command, args []string) error {
				id, err := strconv.ParseInt(args[0], 10, 32)
				if err != nil || id < 0 {
					return usagef("node id %q: want a number, 0 or more", args[0])
				}
				return runNode(cmd, g, dataDir, supervisor.Request{Op: act.op, Node: int32(id)}, cmd.OutOrStdout())
			},
		})
	}
	return cmd
}

// runNode sends req to the cluster's supervisor and writes the nodes it
// answers with: all of them for list, the one acted on otherwise.
func runNode(cmd *cobra.Command, g *globals, dataDir string, req supervisor.Request, out io.Writer) error {
	socket, err := findSupervisor(cmd, g, dataDir)
	if err != nil {
		return err
	}
	resp, err := supervisor.Call(cmd.Context(), socket, req)
	if err != nil {
		return err
	}
	nodes := resp.Nodes
	if req.Op != "list" {
		nodes = nil
		for _, n := range resp.Nodes {
			if n.ID == req.Node {
				nodes = append(nodes, n)
			}
		}
	}
	return writeOutput(g, out, struct {
		Nodes []supervisor.NodeStatus `json:"nodes"`
	}{nodes}, func(t *table) {
		t.row("ID\tADDRESS\tPID\tSTATE\tROLE\tADMIN\n")
		for _, n := range nodes {
			pid := "-"
			if n.PID != 0 {
				pid = strconv.Itoa(n.PID)
			}
			t.row("%d\t%s\t%s\t%s\t%s\t%s\n", n.ID, n.Address, pid, n.State, n.Role, orDash(n.Admin))
		}
	})
}

// findSupervisor is the control socket of the cluster the command is
// pointed at (pickCluster); --data-dir names a cluster registered
// elsewhere (another $XDG_STATE_HOME) by its socket.
func findSupervisor(cmd *cobra.Command, g *globals, dataDir string) (string, error) {
	r, err := pickCluster(cmd.Context(), cmd, g, dataDir)
	switch {
	case errors.Is(err, supervisor.ErrNotFound) && dataDir != "":
		return supervisor.SocketPath(dataDir)
	case err != nil:
		return "", err
	case r.Socket == "":
		return "", fmt.Errorf("%w: the klog up there is a single node (%s); klog node acts on the nodes of klog up -n N", supervisor.ErrNotFound, r.Describe())
	}
	return r.Socket, nil
}
