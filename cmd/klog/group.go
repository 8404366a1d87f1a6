package main

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
)

// groupJSONVersion is the "version" field of every group command's JSON
// output; it changes only when a field changes meaning or goes away.
const groupJSONVersion = 1

// ErrGroupActive reports that a group has members, so its committed offsets
// must not be changed from outside: stop its consumers first.
var ErrGroupActive = errors.New("group has active members")

// ErrNoCommittedOffsets reports a seek on a group that has no committed
// offsets and no --topics to say what to seek.
var ErrNoCommittedOffsets = errors.New("group has no committed offsets")

func newGroupCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "group",
		Aliases: []string{"groups"},
		Short:   "List, describe, seek and delete consumer groups",
	}
	cmd.AddCommand(
		newGroupListCmd(g),
		newGroupDescribeCmd(g),
		newGroupSeekCmd(g),
		newGroupDeleteCmd(g),
	)
	return cmd
}

// completionTimeout bounds the broker round trip of a shell completion.
const completionTimeout = 3 * time.Second

// completeGroups completes group names from the live cluster; every
// positional argument is a group, each named once.
func completeGroups(g *globals, maxArgs int) cobra.CompletionFunc {
	return completeNames(g, maxArgs, func(ctx context.Context, adm *kadm.Client) []string {
		listed, _ := adm.ListGroups(ctx)
		return listed.Groups()
	})
}

// completeNames completes the names list finds in the live cluster, up to
// maxArgs positional arguments (0: any number), each named once.
func completeNames(g *globals, maxArgs int, list func(context.Context, *kadm.Client) []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if maxArgs > 0 && len(args) >= maxArgs {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		if err := g.resolve(cmd); err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(cmd.Context(), completionTimeout)
		defer cancel()
		var names []cobra.Completion
		_ = withAdmin(g, func(adm *kadm.Client) error {
			for _, n := range list(ctx, adm) {
				if strings.HasPrefix(n, toComplete) && !slices.Contains(args, n) {
					names = append(names, n)
				}
			}
			return nil
		})
		return names, cobra.ShellCompDirectiveNoFileComp
	}
}
