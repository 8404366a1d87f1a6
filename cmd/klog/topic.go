package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
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

// writeJSON writes v as indented JSON with a trailing newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// reportResults prints per-topic results (a table or JSON on out, each
// failure on diag) and returns ErrItemsFailed if any failed. ok is the
// status word printed for successes in text.
func reportResults(g *globals, out, diag io.Writer, results []topicResult, ok string) error {
	sort.Slice(results, func(i, j int) bool { return results[i].Name < results[j].Name })
	failed := 0
	for _, r := range results {
		if r.Error != "" {
			failed++
			fmt.Fprintf(diag, "klog: topic %q: %s\n", r.Name, r.Error)
		}
	}
	if g.format == formatJSON {
		if results == nil {
			results = []topicResult{}
		}
		if err := writeJSON(out, topicResults{Version: topicJSONVersion, Topics: results}); err != nil {
			return err
		}
	} else {
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "TOPIC\tSTATUS")
		for _, r := range results {
			status := ok
			if r.Error != "" {
				status = "ERROR: " + r.Error
			}
			fmt.Fprintf(tw, "%s\t%s\n", r.Name, status)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d topics failed: %w", failed, len(results), ErrItemsFailed)
	}
	return nil
}

// errString renders a per-item error with the broker's message, if any.
func errString(err error, msg string) string {
	if err == nil {
		return ""
	}
	if msg != "" && !strings.Contains(err.Error(), msg) {
		return err.Error() + ": " + msg
	}
	return err.Error()
}

// withAdmin runs fn with an admin client that is closed afterwards.
func withAdmin(g *globals, fn func(*kadm.Client) error) error {
	adm, err := g.newAdmin()
	if err != nil {
		return err
	}
	defer adm.Close()
	return fn(adm)
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
			res := topicResult{Name: name}
			switch {
			case !ok:
				res.Error = "no response from the broker"
			case r.Err != nil:
				res.Error = errString(r.Err, r.ErrMessage)
			default:
				res.Partitions, res.ReplicationFactor = r.NumPartitions, r.ReplicationFactor
			}
			results = append(results, res)
		}
		return reportResults(g, out, diag, results, "CREATED")
	})
}

// ---- topic delete ----

func newTopicDeleteCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "delete NAME...",
		Short: "Delete topics",
		Args:  usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTopicDelete(cmd.Context(), g, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func runTopicDelete(ctx context.Context, g *globals, names []string, out, diag io.Writer) error {
	return withAdmin(g, func(adm *kadm.Client) error {
		resps, err := adm.DeleteTopics(ctx, names...)
		if err != nil {
			return fmt.Errorf("delete topics: %w", err)
		}
		var results []topicResult
		for _, name := range names {
			r, ok := resps[name]
			res := topicResult{Name: name}
			switch {
			case !ok:
				res.Error = "no response from the broker"
			case r.Err != nil:
				res.Error = errString(r.Err, r.ErrMessage)
			}
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
			res := topicResult{Name: name}
			switch {
			case !ok:
				res.Error = "no response from the broker"
			case r.Err != nil:
				res.Error = errString(r.Err, r.ErrMessage)
			default:
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
			res := topicResult{Name: name}
			r, err := resps.On(name, nil)
			switch {
			case err != nil:
				res.Error = "no response from the broker"
			case r.Err != nil:
				res.Error = errString(r.Err, r.ErrMessage)
			}
			results = append(results, res)
		}
		return reportResults(g, out, diag, results, "ALTERED")
	})
}

// ---- topic list ----

// topicListJSON is the JSON output of topic list.
type topicListJSON struct {
	Version int             `json:"version"`
	Topics  []topicListItem `json:"topics"`
}

type topicListItem struct {
	Name              string `json:"name"`
	Partitions        int    `json:"partitions"`
	ReplicationFactor int    `json:"replication_factor"`
	Internal          bool   `json:"internal"`
}

func newTopicListCmd(g *globals) *cobra.Command {
	var internal bool
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List topics",
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTopicList(cmd.Context(), g, internal, cmd.OutOrStdout())
		},
	}
	cmd.Flags().BoolVarP(&internal, "internal", "i", false, "include internal topics")
	return cmd
}

func runTopicList(ctx context.Context, g *globals, internal bool, out io.Writer) error {
	return withAdmin(g, func(adm *kadm.Client) error {
		var details kadm.TopicDetails
		var err error
		if internal {
			details, err = adm.ListTopicsWithInternal(ctx)
		} else {
			details, err = adm.ListTopics(ctx)
		}
		if err != nil {
			return fmt.Errorf("list topics: %w", err)
		}
		items := []topicListItem{}
		for _, d := range details.Sorted() {
			if d.Err != nil {
				continue
			}
			items = append(items, topicListItem{
				Name:              d.Topic,
				Partitions:        len(d.Partitions),
				ReplicationFactor: d.Partitions.NumReplicas(),
				Internal:          d.IsInternal,
			})
		}
		if g.format == formatJSON {
			return writeJSON(out, topicListJSON{Version: topicJSONVersion, Topics: items})
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tPARTITIONS\tREPLICAS")
		for _, it := range items {
			fmt.Fprintf(tw, "%s\t%d\t%d\n", it.Name, it.Partitions, it.ReplicationFactor)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
		return nil
	})
}

// ---- topic describe ----

// topicDescribeJSON is the JSON output of topic describe.
type topicDescribeJSON struct {
	Version int             `json:"version"`
	Topics  []topicDescribe `json:"topics"`
}

type topicDescribe struct {
	Name              string              `json:"name"`
	ID                string              `json:"id,omitempty"`
	Internal          bool                `json:"internal"`
	ReplicationFactor int                 `json:"replication_factor"`
	Partitions        []partitionDescribe `json:"partitions"`
	Configs           []configDescribe    `json:"configs"` // those that differ from the default
	Error             string              `json:"error,omitempty"`
}

type partitionDescribe struct {
	Partition       int32   `json:"partition"`
	Leader          int32   `json:"leader"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	Replicas        []int32 `json:"replicas"`
	ISR             []int32 `json:"isr"`
	OfflineReplicas []int32 `json:"offline_replicas"`
	LogStartOffset  int64   `json:"log_start_offset"`
	HighWatermark   int64   `json:"high_watermark"`
	Error           string  `json:"error,omitempty"`
}

type configDescribe struct {
	Key       string  `json:"key"`
	Value     *string `json:"value"`
	Source    string  `json:"source"`
	Sensitive bool    `json:"sensitive"`
}

func newTopicDescribeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "describe NAME...",
		Short: "Describe topics: partitions, leaders, replicas, ISR, offsets, configs",
		Args:  usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTopicDescribe(cmd.Context(), g, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func runTopicDescribe(ctx context.Context, g *globals, names []string, out, diag io.Writer) error {
	return withAdmin(g, func(adm *kadm.Client) error {
		descs, err := describeTopics(ctx, adm, names)
		if err != nil {
			return err
		}
		failed := 0
		for _, d := range descs {
			if d.Error != "" {
				failed++
				fmt.Fprintf(diag, "klog: topic %q: %s\n", d.Name, d.Error)
			}
		}
		if g.format == formatJSON {
			if err := writeJSON(out, topicDescribeJSON{Version: topicJSONVersion, Topics: descs}); err != nil {
				return err
			}
		} else if err := writeTopicDescribeText(out, descs); err != nil {
			return err
		}
		if failed > 0 {
			return fmt.Errorf("%d of %d topics failed: %w", failed, len(descs), ErrItemsFailed)
		}
		return nil
	})
}

// describeTopics gathers metadata, offsets and non-default configs.
func describeTopics(ctx context.Context, adm *kadm.Client, names []string) ([]topicDescribe, error) {
	details, err := adm.ListTopicsWithInternal(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	var found []string
	for _, n := range names {
		if d, ok := details[n]; ok && d.Err == nil {
			found = append(found, n)
		}
	}
	var starts, ends kadm.ListedOffsets
	var configs kadm.ResourceConfigs
	if len(found) > 0 {
		if starts, err = adm.ListStartOffsets(ctx, found...); err != nil {
			return nil, fmt.Errorf("list start offsets: %w", err)
		}
		if ends, err = adm.ListEndOffsets(ctx, found...); err != nil {
			return nil, fmt.Errorf("list end offsets: %w", err)
		}
		if configs, err = adm.DescribeTopicConfigs(ctx, found...); err != nil {
			return nil, fmt.Errorf("describe configs: %w", err)
		}
	}
	descs := make([]topicDescribe, 0, len(names))
	for _, n := range names {
		d, ok := details[n]
		desc := topicDescribe{Name: n, Partitions: []partitionDescribe{}, Configs: []configDescribe{}}
		switch {
		case !ok:
			desc.Error = ErrTopicNotFound.Error()
		case d.Err != nil:
			desc.Error = d.Err.Error()
		}
		if desc.Error != "" {
			descs = append(descs, desc)
			continue
		}
		if d.ID != (kadm.TopicID{}) {
			desc.ID = base64.RawURLEncoding.EncodeToString(d.ID[:])
		}
		desc.Internal = d.IsInternal
		desc.ReplicationFactor = d.Partitions.NumReplicas()
		for _, p := range d.Partitions.Sorted() {
			pd := partitionDescribe{
				Partition:       p.Partition,
				Leader:          p.Leader,
				LeaderEpoch:     p.LeaderEpoch,
				Replicas:        nonNil(p.Replicas),
				ISR:             nonNil(p.ISR),
				OfflineReplicas: nonNil(p.OfflineReplicas),
				LogStartOffset:  -1,
				HighWatermark:   -1,
			}
			if p.Err != nil {
				pd.Error = p.Err.Error()
			}
			if s, ok := starts.Lookup(n, p.Partition); ok && s.Err == nil {
				pd.LogStartOffset = s.Offset
			}
			if e, ok := ends.Lookup(n, p.Partition); ok && e.Err == nil {
				pd.HighWatermark = e.Offset
			}
			desc.Partitions = append(desc.Partitions, pd)
		}
		if rc, err := configs.On(n, nil); err == nil {
			if rc.Err != nil {
				desc.Error = "describe configs: " + errString(rc.Err, rc.ErrMessage)
			}
			for _, c := range rc.Configs {
				if c.Source == kmsg.ConfigSourceDefaultConfig || c.Source == kmsg.ConfigSourceStaticBrokerConfig ||
					c.Source == kmsg.ConfigSourceDynamicDefaultBrokerConfig || c.Source == kmsg.ConfigSourceDynamicBrokerConfig {
					continue
				}
				desc.Configs = append(desc.Configs, configDescribe{
					Key:       c.Key,
					Value:     c.Value,
					Source:    c.Source.String(),
					Sensitive: c.Sensitive,
				})
			}
			sort.Slice(desc.Configs, func(i, j int) bool { return desc.Configs[i].Key < desc.Configs[j].Key })
		}
		descs = append(descs, desc)
	}
	return descs, nil
}

func nonNil(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return s
}

// writeTopicDescribeText prints one block per topic.
func writeTopicDescribeText(out io.Writer, descs []topicDescribe) error {
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	first := true
	for _, d := range descs {
		if d.Error != "" && len(d.Partitions) == 0 {
			continue
		}
		if !first {
			fmt.Fprintln(tw)
		}
		first = false
		fmt.Fprintf(tw, "NAME\t%s\n", d.Name)
		if d.ID != "" {
			fmt.Fprintf(tw, "ID\t%s\n", d.ID)
		}
		fmt.Fprintf(tw, "INTERNAL\t%t\n", d.Internal)
		fmt.Fprintf(tw, "PARTITIONS\t%d\n", len(d.Partitions))
		fmt.Fprintf(tw, "REPLICATION-FACTOR\t%d\n", d.ReplicationFactor)
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
		if len(d.Configs) > 0 {
			fmt.Fprintln(tw)
			fmt.Fprintln(tw, "CONFIG\tVALUE\tSOURCE")
			for _, c := range d.Configs {
				v := "<null>"
				switch {
				case c.Sensitive:
					v = "<sensitive>"
				case c.Value != nil:
					v = *c.Value
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Key, v, c.Source)
			}
			if err := tw.Flush(); err != nil {
				return fmt.Errorf("write output: %w", err)
			}
		}
		fmt.Fprintln(tw)
		fmt.Fprintln(tw, "PARTITION\tLEADER\tEPOCH\tREPLICAS\tISR\tLOG-START\tHIGH-WATERMARK")
		for _, p := range d.Partitions {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%s\t%s\t%d\t%d", p.Partition, p.Leader, p.LeaderEpoch,
				int32List(p.Replicas), int32List(p.ISR), p.LogStartOffset, p.HighWatermark)
			if p.Error != "" {
				fmt.Fprintf(tw, "\t%s", p.Error)
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("write output: %w", err)
		}
	}
	return nil
}

// int32List renders [1 2 3] as "1,2,3".
func int32List(s []int32) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprint(v)
	}
	return strings.Join(parts, ",")
}
