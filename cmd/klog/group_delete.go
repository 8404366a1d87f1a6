package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/inspect"
)

// groupDeleteJSON is the JSON output of group delete.
type groupDeleteJSON struct {
	Version int           `json:"version"`
	Groups  []groupResult `json:"groups"`
}

// groupResult is one group's outcome; Error is present only on failure.
type groupResult struct {
	Group string `json:"group"`
	Error string `json:"error,omitempty"`
}

func newGroupDeleteCmd(g *globals) *cobra.Command {
	var c consent
	cmd := &cobra.Command{
		Use:   "delete GROUP... [--yes]",
		Short: "Delete groups and their committed offsets (groups must have no members)",
		Long: `Delete groups and their committed offsets. A group with members is not
deleted (NON_EMPTY_GROUP).`,
		Args:              usageArgs(cobra.MinimumNArgs(1)),
		ValidArgsFunction: completeGroups(g, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGroupDelete(cmd.Context(), g, args, c, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	destructive(cmd, &c, "delete", "deleted")
	return cmd
}

func runGroupDelete(ctx context.Context, g *globals, names []string, c consent, out, diag io.Writer) error {
	what := quoteList("group", names)
	if err := c.ask(fmt.Sprintf("Delete %s and their committed offsets?", what), "deleted", "delete "+what); err != nil {
		return err
	}
	return withAdmin(g, func(adm *kadm.Client) error {
		inspect.WaitCoordinators(ctx, adm, inspect.GroupCoordinator, names...)
		resps, err := adm.DeleteGroups(ctx, names...)
		if err != nil && resps == nil {
			return fmt.Errorf("delete groups: %w", err)
		}
		results := make([]groupResult, 0, len(names))
		failed := failures{diag: diag}
		for _, n := range names {
			res := groupResult{Group: n}
			r, ok := resps[n]
			switch {
			case !ok:
				res.Error = inspect.NoResponse(err).Error()
			case r.Err != nil:
				res.Error = inspect.ErrorText(r.Err, r.ErrMessage)
			}
			failed.add(res.Error, "group %q", n)
			results = append(results, res)
		}
		err = writeOutput(g, out, groupDeleteJSON{Version: groupJSONVersion, Groups: results}, func(t *table) {
			t.row("GROUP\tSTATUS\n")
			for _, r := range results {
				status := "DELETED"
				if r.Error != "" {
					status = "ERROR: " + r.Error
				}
				t.row("%s\t%s\n", r.Group, status)
			}
		})
		if err != nil {
			return err
		}
		return failed.err("%d of %d groups failed", failed.n, len(names))
	})
}

// quoteList names things for a question or an error: group "a", groups
// "a", "b".
func quoteList(noun string, names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(names) != 1 {
		noun += "s"
	}
	return noun + " " + strings.Join(q, ", ")
}
