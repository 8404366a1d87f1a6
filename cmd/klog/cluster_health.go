package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/inspect"
)

// errUnhealthy is klog cluster health's answer for a cluster that is not.
var errUnhealthy = errors.New("cluster is not healthy")

func newClusterCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Look at the cluster as a whole",
	}
	cmd.AddCommand(newClusterHealthCmd(g), newClusterAdminCmd(g))
	return cmd
}

func newClusterHealthCmd(g *globals) *cobra.Command {
	var wait bool
	timeout := 30 * time.Second
	cmd := &cobra.Command{
		Use:   "health",
		Short: "Exit 0 when every node answers and every partition is led and in sync",
		Long: `Check that the cluster is healthy: every node (of the metadata, and every
replica its partitions name) answers, a controller is known, and every
partition has a leader and an ISR of at least min.insync.replicas (or all
its replicas, when it has fewer). Exits 0 when healthy, else 1 saying what
is wrong. With --wait it checks again until the cluster is healthy or
--timeout passes: a CI step that waits for a cluster.`,
		Example: `  klog cluster health
  klog cluster health --wait --timeout 60s`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			cl, err := g.newClient()
			if err != nil {
				return err
			}
			defer cl.Close()
			adm := kadm.NewClient(cl)
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			var h inspect.Health
			if wait {
				h, err = inspect.WaitHealthy(ctx, cl, adm)
			} else {
				h, err = inspect.CheckHealth(ctx, cl, adm)
			}
			if err != nil && len(h.Nodes) == 0 {
				return err
			}
			if err := writeOutput(g, cmd.OutOrStdout(), h, func(t *table) {
				if h.Healthy {
					t.row("healthy\tnodes %d, controller %d, partitions %d\n", len(h.Nodes), h.Controller, h.Partitions)
					return
				}
				for _, p := range h.Problems {
					t.row("unhealthy\t%s\n", p)
				}
			}); err != nil {
				return err
			}
			if !h.Healthy {
				if wait {
					return fmt.Errorf("%w after %s", errUnhealthy, timeout)
				}
				return errUnhealthy
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&wait, "wait", false, "check until the cluster is healthy or --timeout passes")
	cmd.Flags().DurationVar(&timeout, "timeout", timeout, "how long to check for")
	return cmd
}
