package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/inspect"
)

// featureJSONVersion is the version of klog feature's JSON.
const featureJSONVersion = 1

// featureListJSON is klog feature list's JSON.
type featureListJSON struct {
	Version int `json:"version"`
	inspect.Features
}

// featureChangeJSON is klog feature upgrade's and downgrade's JSON.
type featureChangeJSON struct {
	Version  int                    `json:"version"`
	DryRun   bool                   `json:"dryRun,omitempty"`
	Features []inspect.FeatureLevel `json:"features"`
}

func newFeatureCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "feature",
		Short: "List, upgrade and downgrade the cluster's feature levels",
		Long: `List, upgrade and downgrade the cluster's feature flags (KIP-584, Kafka's
kafka-features): the levels a broker supports and the level finalized in
the cluster (ApiVersions, UpdateFeatures). Works against klog and any
Kafka; docs/compatibility.md lists klog's features and what each level
turns on.`,
	}
	cmd.AddCommand(newFeatureListCmd(g), newFeatureUpgradeCmd(g), newFeatureDowngradeCmd(g))
	return cmd
}

func newFeatureListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the feature flags: supported levels and the finalized one",
		Long: `List the feature flags as a broker reports them: the levels it supports
and the level finalized in the cluster (0: not finalized, the feature
off). --format json adds the epoch of the finalized levels.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withClients(g, func(cl *kgo.Client, _ *kadm.Client) error {
				fs, err := inspect.ListFeatures(cmd.Context(), cl)
				if err != nil {
					return err
				}
				return writeOutput(g, cmd.OutOrStdout(), featureListJSON{Version: featureJSONVersion, Features: fs}, func(t *table) {
					t.row("FEATURE\tSUPPORTED\tFINALIZED\n")
					for _, f := range fs.Features {
						t.row("%s\t%d-%d\t%d\n", f.Name, f.SupportedMin, f.SupportedMax, f.Finalized)
					}
				})
			})
		},
	}
}

func newFeatureUpgradeCmd(g *globals) *cobra.Command {
	var dryRun bool
	cmd := &cobra.Command{
		Use:     "upgrade NAME=LEVEL... [--dry-run]",
		Short:   "Raise features to the levels given",
		Long:    "Raise features to the levels given, all or none. --dry-run has the broker check the change without making it.",
		Example: `  klog feature upgrade group.version=1`,
		Args:    usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			levels, err := parseFeatureLevels(args)
			if err != nil {
				return err
			}
			return runFeatureChange(cmd, g, levels, inspect.FeatureUpgrade, dryRun, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "check the change without making it")
	return cmd
}

func newFeatureDowngradeCmd(g *globals) *cobra.Command {
	var dryRun, unsafe bool
	var c consent
	cmd := &cobra.Command{
		Use:   "downgrade NAME=LEVEL... [--unsafe] [--dry-run] [--yes]",
		Short: "Lower features to the levels given",
		Long: `Lower features to the levels given, all or none: a safe downgrade, or
with --unsafe one that may lose metadata (Kafka's; klog refuses what it
cannot honour either way). Clients relying on what the level turned on
lose it: group.version 0 turns KIP-848 consumer groups off. --dry-run has
the broker check the change without making it.`,
		Example: `  klog feature downgrade group.version=0 --yes`,
		Args:    usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			levels, err := parseFeatureLevels(args)
			if err != nil {
				return err
			}
			change := inspect.FeatureSafeDowngrade
			if unsafe {
				change = inspect.FeatureUnsafeDowngrade
			}
			if !dryRun {
				if err := c.ask("Downgrade "+strings.Join(args, ", ")+"?", "downgraded", "downgrade "+strings.Join(args, ", ")); err != nil {
					return err
				}
			}
			return runFeatureChange(cmd, g, levels, change, dryRun, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "check the change without making it")
	cmd.Flags().BoolVar(&unsafe, "unsafe", false, "an unsafe downgrade, which may lose metadata")
	destructive(cmd, &c, "downgrade", "downgraded")
	return cmd
}

// parseFeatureLevels parses NAME=LEVEL arguments.
func parseFeatureLevels(args []string) ([]inspect.FeatureLevel, error) {
	var out []inspect.FeatureLevel
	seen := map[string]bool{}
	for _, a := range args {
		name, v, ok := strings.Cut(a, "=")
		if !ok || name == "" {
			return nil, usagef("%q is not NAME=LEVEL", a)
		}
		level, err := strconv.ParseInt(v, 10, 16)
		if err != nil || level < 0 {
			return nil, usagef("%s: %q is not a level (a whole number from 0)", name, v)
		}
		if seen[name] {
			return nil, usagef("%s is given twice", name)
		}
		seen[name] = true
		out = append(out, inspect.FeatureLevel{Name: name, Level: int16(level)})
	}
	return out, nil
}

func runFeatureChange(cmd *cobra.Command, g *globals, levels []inspect.FeatureLevel, change inspect.FeatureChange, dryRun bool, out io.Writer) error {
	return withClients(g, func(cl *kgo.Client, _ *kadm.Client) error {
		if err := inspect.UpdateFeatures(cmd.Context(), cl, levels, change, dryRun); err != nil {
			return err
		}
		verb := "upgraded"
		if change != inspect.FeatureUpgrade {
			verb = "downgraded"
		}
		if dryRun {
			verb = "can be " + verb
		}
		return writeOutput(g, out, featureChangeJSON{Version: featureJSONVersion, DryRun: dryRun, Features: levels}, func(t *table) {
			for _, l := range levels {
				t.row("%s\t%s\n", l.Name, fmt.Sprintf("%s to %d", verb, l.Level))
			}
		})
	})
}
