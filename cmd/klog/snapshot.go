package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/klogdev/klog/snapshot"
	"github.com/klogdev/klog/supervisor"
)

func newSnapshotCmd(g *globals) *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "snapshot",
		Short: "Save a local cluster's data under a name and restore it",
		Long: `Save the whole state of a local cluster on disk (klog up --data-dir: its
topics, records, committed offsets, transactions and metadata) under a name
in $XDG_STATE_HOME/klog/snapshots, and restore it later, as often as wanted. The
nodes of a running cluster of klog up -n are stopped while the copy is
taken; a single node must not be running (klog down first), and is named by
--data-dir.

` + pickHelp,
	}
	cmd.PersistentFlags().StringVar(&dataDir, "data-dir", "", "the cluster's data directory (default: the cluster -b names, else the only one running)")
	cmd.AddCommand(newSnapshotSaveCmd(g, &dataDir), newSnapshotRestoreCmd(g, &dataDir),
		newSnapshotListCmd(g), newSnapshotDeleteCmd(g))
	return cmd
}

// newSnapshotSaveCmd is klog snapshot save; dataDir is the parent's
// --data-dir.
func newSnapshotSaveCmd(g *globals, dataDir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "save NAME",
		Short: "Save the cluster's data as NAME",
		Long: `Save the cluster's data directory as snapshot NAME. The nodes of a running
cluster are stopped (SIGSTOP) while it is copied and resumed after, so the
copy is what a cluster killed at that instant leaves: every node recovers
from it on restore. NAME must not exist yet.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSnapshot(cmd, g, *dataDir, args[0], true)
		},
	}
}

// newSnapshotRestoreCmd is klog snapshot restore; dataDir is the parent's
// --data-dir.
func newSnapshotRestoreCmd(g *globals, dataDir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "restore NAME",
		Short: "Replace the cluster's data with snapshot NAME",
		Long: `Replace the cluster's data directory with snapshot NAME, saved from this
cluster. The nodes of a running cluster are killed, their data replaced and
every node launched again (a node dead before too); klog snapshot restore
returns once every node is ready. The snapshot stays, for the next restore.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSnapshot(cmd, g, *dataDir, args[0], false)
		},
	}
}

// newSnapshotListCmd is klog snapshot list.
func newSnapshotListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the saved snapshots",
		Long: `List the snapshots saved in $XDG_STATE_HOME/klog/snapshots: each one's name,
when its save completed, and its files and bytes.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			root, err := snapshotRoot(g)
			if err != nil {
				return err
			}
			list, err := snapshot.List(root)
			if err != nil {
				return err
			}
			if list == nil {
				list = []snapshot.Info{}
			}
			return writeOutput(g, cmd.OutOrStdout(), list, func(t *table) {
				t.row("NAME\tSAVED\tFILES\tBYTES\n")
				for _, s := range list {
					t.row("%s\t%s\t%d\t%d\n", s.Name, s.Saved.UTC().Format(time.RFC3339), s.Files, s.Bytes)
				}
			})
		},
	}
}

// newSnapshotDeleteCmd is klog snapshot delete; it confirms as every
// command that deletes data does.
func newSnapshotDeleteCmd(g *globals) *cobra.Command {
	var c consent
	cmd := &cobra.Command{
		Use:   "delete NAME",
		Short: "Delete snapshot NAME",
		Args:  usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, err := snapshotRoot(g)
			if err != nil {
				return err
			}
			dir, err := snapshot.Path(root, args[0])
			if err != nil {
				return usagef("%v", err)
			}
			if _, err := os.Stat(dir); err != nil {
				return snapshot.Delete(dir) // says there is no such snapshot
			}
			if err := c.ask(fmt.Sprintf("Delete snapshot %s?", args[0]), "deleted", "delete it"); err != nil {
				return err
			}
			if err := snapshot.Delete(dir); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "klog: deleted snapshot %s\n", args[0])
			return nil
		},
	}
	destructive(cmd, &c, "delete", "deleted")
	return cmd
}

// snapshotRoot is klog's snapshot directory: $XDG_STATE_HOME/klog/snapshots,
// else ~/.local/state/klog/snapshots.
func snapshotRoot(g *globals) (string, error) {
	return xdgDir(g.getenv, "XDG_STATE_HOME", ".local/state", "snapshots", "the snapshots; set XDG_STATE_HOME")
}

// runSnapshot saves (save) or restores snapshot name of the cluster meant.
func runSnapshot(cmd *cobra.Command, g *globals, dataDir, name string, save bool) error {
	root, err := snapshotRoot(g)
	if err != nil {
		return err
	}
	dir, err := snapshot.Path(root, name)
	if err != nil {
		return usagef("%v", err)
	}
	act := func(data string) error {
		if save {
			return snapshot.Save(data, dir)
		}
		return snapshot.Restore(dir, data)
	}
	r, err := pickCluster(cmd.Context(), cmd, g, dataDir)
	switch {
	case errors.Is(err, supervisor.ErrNotFound) && dataDir != "":
		err = act(dataDir)
	case err != nil:
		return err
	case r.DataDir == "":
		return fmt.Errorf("klog up pid %d runs in memory: it has no data directory to snapshot", r.PID)
	case r.Socket == "":
		return fmt.Errorf("a single node (pid %d) runs on %s: stop it first (klog down)", r.PID, r.DataDir)
	default:
		dataDir = r.DataDir
		err = aroundNodes(cmd.Context(), r.Socket, save, func() error { return act(r.DataDir) })
	}
	if err != nil {
		return err
	}
	how := "restored"
	if save {
		how = "saved"
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "klog: %s snapshot %s (%s)\n", how, name, dataDir)
	return nil
}

// aroundNodes runs fn with every node of the cluster on socket stopped:
// with SIGSTOP, and those resumed after, to save; killed, and every node
// launched again after, to restore.
func aroundNodes(ctx context.Context, socket string, save bool, fn func() error) error {
	resp, err := supervisor.Call(ctx, socket, supervisor.Request{Op: "list", Node: -1})
	if err != nil {
		return err
	}
	halt := "kill"
	if save {
		halt = "stop"
	}
	var halted []int32
	var errs []error
	for _, n := range resp.Nodes {
		if n.PID == 0 {
			continue // dead: nothing to stop, and left dead
		}
		if _, err := supervisor.Call(ctx, socket, supervisor.Request{Op: halt, Node: n.ID}); err != nil {
			errs = append(errs, err)
			break
		}
		halted = append(halted, n.ID)
	}
	if len(errs) == 0 {
		errs = append(errs, fn())
	}
	switch {
	case save:
		// Only the nodes paused here resume: one dead before stays dead.
		for _, id := range halted {
			if _, err := supervisor.Call(ctx, socket, supervisor.Request{Op: "start", Node: id}); err != nil {
				errs = append(errs, err)
			}
		}
	case len(halted) > 0:
		// Node -1: every node at once, as a voter launched again is
		// ready only once a majority of the quorum runs.
		if _, err := supervisor.Call(ctx, socket, supervisor.Request{Op: "start", Node: -1}); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
