package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/inspect"
)

// topicJSONVersion is the "version" field of every topic command's JSON
// output; it changes only when a field changes meaning or goes away.
const topicJSONVersion = 1

func newTopicCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "topic",
		Aliases: []string{"topics", "t"},
		Short:   "List, describe, create, delete and configure topics",
	}
	cmd.AddCommand(
		newTopicListCmd(g),
		newTopicDescribeCmd(g),
		newTopicCreateCmd(g),
		newTopicDeleteCmd(g),
		newTopicAddPartitionsCmd(g),
		newTopicAlterConfigCmd(g),
		newTopicTrimCmd(g),
		newTopicCompactCmd(g),
	)
	return cmd
}

// topicResult is one topic's outcome in the JSON output of create, delete,
// add-partitions and alter-config. Error is present only on failure.
type topicResult struct {
	Name              string `json:"name"`
	Partitions        int32  `json:"partitions,omitempty"`
	ReplicationFactor int16  `json:"replication_factor,omitempty"`
	Error             string `json:"error,omitempty"`
}

// topicResults is the JSON output of create, delete, add-partitions and
// alter-config.
type topicResults struct {
	Version int           `json:"version"`
	Topics  []topicResult `json:"topics"`
}

// reportResults prints per-topic results (a table or JSON on out, each
// failure on diag) and returns ErrItemsFailed if any failed. ok is the
// status word printed for successes in text.
func reportResults(g *globals, out, diag io.Writer, results []topicResult, ok string) error {
	sort.Slice(results, func(i, j int) bool { return results[i].Name < results[j].Name })
	failed := failures{diag: diag}
	for _, r := range results {
		failed.add(r.Error, "topic %q", r.Name)
	}
	if results == nil {
		results = []topicResult{}
	}
	err := writeOutput(g, out, topicResults{Version: topicJSONVersion, Topics: results}, func(t *table) {
		t.row("TOPIC\tSTATUS\n")
		for _, r := range results {
			status := ok
			if r.Error != "" {
				status = "ERROR: " + r.Error
			}
			t.row("%s\t%s\n", r.Name, status)
		}
	})
	if err != nil {
		return err
	}
	return failed.err("%d of %d topics failed", failed.n, len(results))
}

// answeredTopic is name's line of a topic command's report from the
// broker's answer: an error when it did not answer (answered false) or
// answered err. done reports success, for the caller to add its details.
func answeredTopic(name string, answered bool, err error, errMessage string) (res topicResult, done bool) {
	res = topicResult{Name: name}
	switch {
	case !answered:
		res.Error = inspect.ErrNoResponse.Error()
	case err != nil:
		res.Error = inspect.ErrorText(err, errMessage)
	default:
		return res, true
	}
	return res, false
}

// ---- topic create ----

type topicCreateOptions struct {
	names      []string
	partitions int32
	replicas   int16
	configs    []string
}

func newTopicCreateCmd(g *globals) *cobra.Command {
	o := topicCreateOptions{}
	cmd := &cobra.Command{
		Use:   "create NAME...",
		Short: "Create topics",
		Args:  usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.names = args
			return runTopicCreate(cmd.Context(), g, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.Int32VarP(&o.partitions, "partitions", "p", -1, "number of partitions (-1: the broker's num.partitions)")
	f.Int16VarP(&o.replicas, "replication-factor", "r", -1, "replication factor (-1: the broker's default.replication.factor)")
	f.StringArrayVarP(&o.configs, "config", "c", nil, "topic config key=value (repeatable)")
	return cmd
}

// parseConfigs parses repeated key=value flags.
func parseConfigs(flag string, kvs []string) (map[string]*string, error) {
	configs := make(map[string]*string, len(kvs))
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usagef("%s %q: want key=value", flag, kv)
		}
		configs[k] = &v
	}
	return configs, nil
}

func runTopicCreate(ctx context.Context, g *globals, o topicCreateOptions, out, diag io.Writer) error {
	if o.partitions == 0 || o.partitions < -1 {
		return usagef("-p %d: want a positive number of partitions, or -1", o.partitions)
	}
	if o.replicas == 0 || o.replicas < -1 {
		return usagef("-r %d: want a positive replication factor, or -1", o.replicas)
	}
	configs, err := parseConfigs("-c", o.configs)
	if err != nil {
		return err
	}
	return withAdmin(g, func(adm *kadm.Client) error {
		resps, err := adm.CreateTopics(ctx, o.partitions, o.replicas, configs, o.names...)
		if err != nil {
			return fmt.Errorf("create topics: %w", err)
		}
		var results []topicResult
		for _, name := range o.names {
			r, ok := resps[name]
			res, done := answeredTopic(name, ok, r.Err, r.ErrMessage)
			if done {
				res.Partitions, res.ReplicationFactor = r.NumPartitions, r.ReplicationFactor
			}
			results = append(results, res)
		}
		return reportResults(g, out, diag, results, "CREATED")
	})
}

// ---- topic delete ----

func newTopicDeleteCmd(g *globals) *cobra.Command {
	var c consent
	cmd := &cobra.Command{
		Use:   "delete NAME... [--yes]",
		Short: "Delete topics and all their records",
		Args:  usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTopicDelete(cmd.Context(), g, args, c, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	destructive(cmd, &c, "delete", "deleted")
	return cmd
}

func runTopicDelete(ctx context.Context, g *globals, names []string, c consent, out, diag io.Writer) error {
	what := quoteList("topic", names)
	if err := c.ask(fmt.Sprintf("Delete %s and all their records?", what), "deleted", "delete "+what); err != nil {
		return err
	}
	return withAdmin(g, func(adm *kadm.Client) error {
		resps, err := adm.DeleteTopics(ctx, names...)
		if err != nil {
			return fmt.Errorf("delete topics: %w", err)
		}
		var results []topicResult
		for _, name := range names {
			r, ok := resps[name]
			res, _ := answeredTopic(name, ok, r.Err, r.ErrMessage)
			results = append(results, res)
		}
		return reportResults(g, out, diag, results, "DELETED")
	})
}

// ---- topic add-partitions ----

func newTopicAddPartitionsCmd(g *globals) *cobra.Command {
	var total int
	cmd := &cobra.Command{
		Use:   "add-partitions NAME... --total N",
		Short: "Grow topics to a total number of partitions",
		Args:  usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if total <= 0 {
				return usagef("--total %d: want the positive total number of partitions", total)
			}
			return runTopicAddPartitions(cmd.Context(), g, args, total, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().IntVarP(&total, "total", "n", 0, "total number of partitions after the change (required)")
	return cmd
}

func runTopicAddPartitions(ctx context.Context, g *globals, names []string, total int, out, diag io.Writer) error {
	return withAdmin(g, func(adm *kadm.Client) error {
		resps, err := adm.UpdatePartitions(ctx, total, names...)
		if err != nil {
			return fmt.Errorf("add partitions: %w", err)
		}
		var results []topicResult
		for _, name := range names {
			r, ok := resps[name]
			res, done := answeredTopic(name, ok, r.Err, r.ErrMessage)
			if done {
				res.Partitions = int32(total)
			}
			results = append(results, res)
		}
		return reportResults(g, out, diag, results, "UPDATED")
	})
}

// ---- topic alter-config ----

func newTopicAlterConfigCmd(g *globals) *cobra.Command {
	var sets, deletes []string
	cmd := &cobra.Command{
		Use:   "alter-config NAME... [--set k=v]... [--delete k]...",
		Short: "Set or delete topic configs (incrementally)",
		Args:  usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			alters, err := parseAlters(sets, deletes)
			if err != nil {
				return err
			}
			return runTopicAlterConfig(cmd.Context(), g, args, alters, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringArrayVarP(&sets, "set", "s", nil, "set config key=value (repeatable)")
	cmd.Flags().StringArrayVarP(&deletes, "delete", "d", nil, "delete config key, restoring its default (repeatable)")
	return cmd
}

// parseAlters turns --set and --delete flags into incremental alterations.
func parseAlters(sets, deletes []string) ([]kadm.AlterConfig, error) {
	if len(sets) == 0 && len(deletes) == 0 {
		return nil, usagef("nothing to alter: give --set k=v or --delete k")
	}
	configs, err := parseConfigs("--set", sets)
	if err != nil {
		return nil, err
	}
	var alters []kadm.AlterConfig
	keys := make([]string, 0, len(configs))
	for k := range configs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		alters = append(alters, kadm.AlterConfig{Op: kadm.SetConfig, Name: k, Value: configs[k]})
	}
	for _, k := range deletes {
		if k == "" || strings.Contains(k, "=") {
			return nil, usagef("--delete %q: want a config key", k)
		}
		if _, ok := configs[k]; ok {
			return nil, usagef("config %q is both set and deleted", k)
		}
		alters = append(alters, kadm.AlterConfig{Op: kadm.DeleteConfig, Name: k})
	}
	return alters, nil
}

func runTopicAlterConfig(ctx context.Context, g *globals, names []string, alters []kadm.AlterConfig, out, diag io.Writer) error {
	return withAdmin(g, func(adm *kadm.Client) error {
		resps, err := adm.AlterTopicConfigs(ctx, alters, names...)
		if err != nil {
			return fmt.Errorf("alter configs: %w", err)
		}
		var results []topicResult
		for _, name := range names {
			r, err := resps.On(name, nil)
			res, _ := answeredTopic(name, err == nil, r.Err, r.ErrMessage)
			results = append(results, res)
		}
		return reportResults(g, out, diag, results, "ALTERED")
	})
}
