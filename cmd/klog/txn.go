package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// txnJSONVersion is the "version" field of every txn command's JSON output;
// it changes only when a field changes meaning or goes away.
const txnJSONVersion = 1

// defaultHangingMaxAge is the broker default of transaction.max.timeout.ms:
// no transaction may legitimately stay open longer.
const defaultHangingMaxAge = 15 * time.Minute

// txnEndTimeout bounds the commit or abort that ends a produce transaction,
// also when the command's context was cancelled (the abort after SIGINT).
const txnEndTimeout = 30 * time.Second

// ErrTransactionNotFound reports that a transactional id named on the
// command line is not known to its coordinator.
var ErrTransactionNotFound = errors.New("transactional id does not exist")

// ErrNoOpenTransaction reports that no producer has an open transaction
// starting at the offset given to txn abort.
var ErrNoOpenTransaction = errors.New("no open transaction starts at this offset")

// ErrTransactionAborted reports that klog produce --txn-id aborted its
// transaction (bad input, a failed record, or an interrupt): none of the
// records it produced are visible to read_committed consumers.
var ErrTransactionAborted = errors.New("transaction aborted")

// txnStates are the transaction states a coordinator reports, spelled as
// the coordinator spells them.
var txnStates = []string{
	"Empty", "Ongoing", "PrepareCommit", "PrepareAbort",
	"CompleteCommit", "CompleteAbort", "Dead", "PrepareEpochFence",
}

// runningTxnStates are the states in which the coordinator still drives a
// transaction to its end: its partitions may rightly hold open data.
var runningTxnStates = []string{"Ongoing", "PrepareCommit", "PrepareAbort"}

func canonicalTxnState(s string) (string, bool) {
	for _, st := range txnStates {
		if strings.EqualFold(st, s) {
			return st, true
		}
	}
	return "", false
}

func newTxnCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "txn",
		Aliases: []string{"transactions"},
		Short:   "Inspect transactions and abort hanging ones",
	}
	cmd.AddCommand(
		newTxnListCmd(g),
		newTxnDescribeCmd(g),
		newTxnProducersCmd(g),
		newTxnHangingCmd(g),
		newTxnAbortCmd(g),
	)
	return cmd
}

// ---- list and describe ----

// txnJSON is one transactional id as txn list and txn describe show it.
// StartTime is null when no transaction is open.
type txnJSON struct {
	TransactionalID string          `json:"transactional_id"`
	Coordinator     int32           `json:"coordinator"`
	State           string          `json:"state"`
	ProducerID      int64           `json:"producer_id"`
	ProducerEpoch   int16           `json:"producer_epoch"`
	TimeoutMs       int32           `json:"timeout_ms"`
	StartTime       *int64          `json:"start_time_ms"`
	Partitions      []assignedTopic `json:"partitions"`
	Error           string          `json:"error,omitempty"`
}

// txnListJSON is the JSON output of txn list and txn describe.
type txnListJSON struct {
	Version      int       `json:"version"`
	Transactions []txnJSON `json:"transactions"`
}

func newTxnListCmd(g *globals) *cobra.Command {
	var states []string
	cmd := &cobra.Command{
		Use:     "list [--state STATE]...",
		Aliases: []string{"ls"},
		Short:   "List transactional ids with their producer, state, timeout and partitions",
		Long: `List the transactional ids the cluster's coordinators know, each with its
producer id and epoch, state, transaction timeout and the partitions of its
open transaction.

--state keeps only transactions in the given states (repeatable or
comma-separated, any case): ` + strings.Join(txnStates, ", ") + `.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTxnList(cmd.Context(), g, states, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringSliceVar(&states, "state", nil, "only transactions in this state (repeatable)")
	return cmd
}

func runTxnList(ctx context.Context, g *globals, states []string, out, diag io.Writer) error {
	canon := make([]string, 0, len(states))
	for _, s := range states {
		c, ok := canonicalTxnState(strings.TrimSpace(s))
		if !ok {
			return usagef("--state %q: want one of %s", s, strings.Join(txnStates, ", "))
		}
		canon = append(canon, c)
	}
	return withAdmin(g, func(adm *kadm.Client) error {
		listed, listErr := adm.ListTransactions(ctx, nil, canon)
		if listErr != nil && len(listed) == 0 {
			return fmt.Errorf("list transactions: %w", listErr)
		}
		failed := 0
		if listErr != nil {
			failed++
			fmt.Fprintf(diag, "klog: list transactions: %v\n", listErr)
		}
		var ids []string
		for _, l := range listed.Sorted() {
			// Brokers that predate the state filter ignore it.
			if len(canon) > 0 && !containsFold(canon, l.State) {
				continue
			}
			ids = append(ids, l.TxnID)
		}
		txns := []txnJSON{}
		if len(ids) > 0 {
			described, err := adm.DescribeTransactions(ctx, ids...)
			if described == nil && err != nil {
				return fmt.Errorf("describe transactions: %w", err)
			}
			for _, id := range ids {
				tj := txnFromDescribed(id, described, err)
				if errors.Is(tj.err, kerr.TransactionalIDNotFound) {
					continue // gone since the listing
				}
				if tj.Error != "" {
					failed++
					fmt.Fprintf(diag, "klog: transactional id %q: %s\n", id, tj.Error)
				}
				txns = append(txns, tj.txnJSON)
			}
		}
		if err := writeTxns(g, out, txns, false); err != nil {
			return err
		}
		if failed > 0 {
			return fmt.Errorf("%d transactions could not be listed or described: %w", failed, ErrItemsFailed)
		}
		return nil
	})
}

// describedTxn is a txnJSON with the error it carries, if any.
type describedTxn struct {
	txnJSON
	err error
}

// txnFromDescribed turns one id of a DescribeTransactions answer into its
// output form; reqErr explains an id missing from the answer.
func txnFromDescribed(id string, described kadm.DescribedTransactions, reqErr error) describedTxn {
	tj := txnJSON{TransactionalID: id, Coordinator: -1, ProducerID: -1, ProducerEpoch: -1, Partitions: []assignedTopic{}}
	d, ok := described[id]
	switch {
	case !ok:
		err := noResponse(reqErr)
		tj.Error = err.Error()
		return describedTxn{tj, err}
	case errors.Is(d.Err, kerr.TransactionalIDNotFound):
		err := fmt.Errorf("%w (%v)", ErrTransactionNotFound, d.Err)
		tj.Coordinator, tj.Error = d.Coordinator, err.Error()
		return describedTxn{tj, errors.Join(err, d.Err)}
	case d.Err != nil:
		tj.Coordinator, tj.Error = d.Coordinator, d.Err.Error()
		return describedTxn{tj, d.Err}
	}
	tj.Coordinator, tj.State = d.Coordinator, d.State
	tj.ProducerID, tj.ProducerEpoch, tj.TimeoutMs = d.ProducerID, d.ProducerEpoch, d.TimeoutMillis
	if d.StartTimestamp >= 0 && d.State != "Empty" {
		st := d.StartTimestamp
		tj.StartTime = &st
	}
	if d.Topics != nil {
		tj.Partitions = sortedAssignment(d.Topics)
	}
	return describedTxn{txnJSON: tj}
}

// writeTxns prints transactions as JSON or a table; withStart adds the
// start time column.
func writeTxns(g *globals, out io.Writer, txns []txnJSON, withStart bool) error {
	if g.format == formatJSON {
		return writeJSON(out, txnListJSON{Version: txnJSONVersion, Transactions: txns})
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	header := "TRANSACTIONAL-ID\tCOORDINATOR\tSTATE\tPRODUCER-ID\tEPOCH\tTIMEOUT"
	if withStart {
		header += "\tSTART"
	}
	fmt.Fprintln(tw, header+"\tPARTITIONS")
	for _, t := range txns {
		if t.Error != "" {
			fmt.Fprintf(tw, "%s\t%d\tERROR: %s\n", t.TransactionalID, t.Coordinator, t.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%d\t%d\t%s", t.TransactionalID, t.Coordinator, orDash(t.State),
			t.ProducerID, t.ProducerEpoch, time.Duration(t.TimeoutMs)*time.Millisecond)
		if withStart {
			start := "-"
			if t.StartTime != nil {
				start = time.UnixMilli(*t.StartTime).UTC().Format(time.RFC3339Nano)
			}
			fmt.Fprintf(tw, "\t%s", start)
		}
		fmt.Fprintf(tw, "\t%s\n", assignmentString(t.Partitions))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

func newTxnDescribeCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "describe TRANSACTIONAL-ID...",
		Short: "Describe transactions: state, producer, timeout, start time and partitions",
		Long: `Describe transactional ids: state, producer id and epoch, transaction
timeout, when the open transaction started and the partitions it spans. An id
the cluster does not know is reported on stderr and makes the exit status 1.`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTxnDescribe(cmd.Context(), g, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func runTxnDescribe(ctx context.Context, g *globals, ids []string, out, diag io.Writer) error {
	return withAdmin(g, func(adm *kadm.Client) error {
		described, err := adm.DescribeTransactions(ctx, ids...)
		if described == nil && err != nil {
			return fmt.Errorf("describe transactions: %w", err)
		}
		txns := make([]txnJSON, 0, len(ids))
		failed := 0
		for _, id := range ids {
			tj := txnFromDescribed(id, described, err)
			if tj.Error != "" {
				failed++
				fmt.Fprintf(diag, "klog: transactional id %q: %s\n", id, tj.Error)
			}
			txns = append(txns, tj.txnJSON)
		}
		if err := writeTxns(g, out, txns, true); err != nil {
			return err
		}
		if failed > 0 {
			return fmt.Errorf("%d of %d transactional ids failed: %w", failed, len(ids), ErrItemsFailed)
		}
		return nil
	})
}

// ---- producers ----

// producerJSON is one producer with an open transaction on a partition.
// CurrentTxnStartOffset is -1 when the producer has no open transaction.
type producerJSON struct {
	ProducerID            int64 `json:"producer_id"`
	ProducerEpoch         int16 `json:"producer_epoch"`
	LastSequence          int32 `json:"last_sequence"`
	LastTimestamp         int64 `json:"last_timestamp_ms"`
	CoordinatorEpoch      int32 `json:"coordinator_epoch"`
	CurrentTxnStartOffset int64 `json:"current_txn_start_offset"`
}

// partitionProducersJSON is the producers of one partition.
type partitionProducersJSON struct {
	Topic     string         `json:"topic"`
	Partition int32          `json:"partition"`
	Leader    int32          `json:"leader"`
	Producers []producerJSON `json:"producers"`
	Error     string         `json:"error,omitempty"`
}

// txnProducersJSON is the JSON output of txn producers.
type txnProducersJSON struct {
	Version    int                      `json:"version"`
	Partitions []partitionProducersJSON `json:"partitions"`
}

func newTxnProducersCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:   "producers TOPIC[/PARTITION]...",
		Short: "Show the producers writing to partitions: ids, epochs, sequences, open transactions",
		Long: `Show the active producers of partitions as their leaders report them:
producer id and epoch, last sequence number, timestamp of the last write,
coordinator epoch, and the first offset of the producer's open transaction
("-" when none is open).

Name partitions as TOPIC/PARTITION; a bare TOPIC means all its partitions.`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runTxnProducers(cmd.Context(), g, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

// parseTopicPartitions parses TOPIC or TOPIC/P arguments; a bare topic is
// returned with no partitions (all of them).
func parseTopicPartitions(args []string) (kadm.TopicsSet, error) {
	set := make(kadm.TopicsSet)
	var bare []string
	for _, a := range args {
		topic, p, hasP := strings.Cut(a, "/")
		if topic == "" {
			return nil, usagef("%q: want TOPIC or TOPIC/PARTITION", a)
		}
		if !hasP {
			bare = append(bare, topic)
			continue
		}
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil || n < 0 {
			return nil, usagef("%q: partition must be a non-negative number", a)
		}
		set.Add(topic, int32(n))
	}
	for _, t := range bare {
		set[t] = make(map[int32]struct{}) // all partitions, whatever else was named
	}
	return set, nil
}

// resolvePartitions checks that the topics and partitions exist and fills
// in all partitions of topics named without one.
func resolvePartitions(ctx context.Context, adm *kadm.Client, set kadm.TopicsSet) (kadm.TopicsSet, error) {
	details, err := topicPartitions(ctx, adm, set.Topics())
	if err != nil {
		return nil, err
	}
	out := make(kadm.TopicsSet)
	for topic, ps := range set {
		n := int32(len(details[topic].Partitions))
		if len(ps) == 0 {
			for p := range n {
				out.Add(topic, p)
			}
			continue
		}
		for p := range ps {
			if p >= n {
				return nil, fmt.Errorf("topic %q has %d partitions, %s/%d: %w", topic, n, topic, p, ErrPartitionNotFound)
			}
			out.Add(topic, p)
		}
	}
	return out, nil
}

// describeProducers describes the producers of every partition in set, one
// entry per partition sorted by topic and partition.
func describeProducers(ctx context.Context, adm *kadm.Client, set kadm.TopicsSet) ([]partitionProducersJSON, error) {
	described, err := adm.DescribeProducers(ctx, set)
	if described == nil && err != nil {
		return nil, fmt.Errorf("describe producers: %w", err)
	}
	var parts []partitionProducersJSON
	for _, tp := range set.Sorted() {
		ps := append([]int32(nil), tp.Partitions...)
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
		for _, p := range ps {
			pj := partitionProducersJSON{Topic: tp.Topic, Partition: p, Leader: -1, Producers: []producerJSON{}}
			dp, ok := described[tp.Topic].Partitions[p]
			switch {
			case !ok:
				pj.Error = noResponse(err).Error()
			case dp.Err != nil:
				pj.Leader, pj.Error = dp.Leader, errString(dp.Err, dp.ErrMessage)
			default:
				pj.Leader = dp.Leader
				for _, d := range dp.ActiveProducers.Sorted() {
					pj.Producers = append(pj.Producers, producerJSON{
						ProducerID:            d.ProducerID,
						ProducerEpoch:         d.ProducerEpoch,
						LastSequence:          d.LastSequence,
						LastTimestamp:         d.LastTimestamp,
						CoordinatorEpoch:      d.CoordinatorEpoch,
						CurrentTxnStartOffset: d.CurrentTxnStartOffset,
					})
				}
			}
			parts = append(parts, pj)
		}
	}
	return parts, nil
}

func runTxnProducers(ctx context.Context, g *globals, args []string, out, diag io.Writer) error {
	set, err := parseTopicPartitions(args)
	if err != nil {
		return err
	}
	return withAdmin(g, func(adm *kadm.Client) error {
		set, err := resolvePartitions(ctx, adm, set)
		if err != nil {
			return err
		}
		parts, err := describeProducers(ctx, adm, set)
		if err != nil {
			return err
		}
		failed := 0
		for _, p := range parts {
			if p.Error != "" {
				failed++
				fmt.Fprintf(diag, "klog: %s/%d: %s\n", p.Topic, p.Partition, p.Error)
			}
		}
		if g.format == formatJSON {
			if parts == nil {
				parts = []partitionProducersJSON{}
			}
			if err := writeJSON(out, txnProducersJSON{Version: txnJSONVersion, Partitions: parts}); err != nil {
				return err
			}
		} else {
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TOPIC\tPARTITION\tPRODUCER-ID\tEPOCH\tLAST-SEQUENCE\tLAST-TIMESTAMP\tCOORDINATOR-EPOCH\tTXN-START-OFFSET")
			for _, p := range parts {
				for _, d := range p.Producers {
					fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%s\t%d\t%s\n", p.Topic, p.Partition, d.ProducerID, d.ProducerEpoch,
						d.LastSequence, millisString(d.LastTimestamp), d.CoordinatorEpoch, offsetOrDash(d.CurrentTxnStartOffset))
				}
			}
			if err := tw.Flush(); err != nil {
				return fmt.Errorf("write output: %w", err)
			}
		}
		if failed > 0 {
			return fmt.Errorf("%d of %d partitions failed: %w", failed, len(parts), ErrItemsFailed)
		}
		return nil
	})
}

// millisString renders a unix millisecond timestamp; negative is unknown.
func millisString(ms int64) string {
	if ms < 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano)
}

// ---- hanging ----

// hangingTxn is an open transaction on a partition that no coordinator is
// driving to its end. TransactionalID is null when no coordinator knows the
// producer id at all.
type hangingTxn struct {
	Topic            string  `json:"topic"`
	Partition        int32   `json:"partition"`
	ProducerID       int64   `json:"producer_id"`
	ProducerEpoch    int16   `json:"producer_epoch"`
	CoordinatorEpoch int32   `json:"coordinator_epoch"`
	StartOffset      int64   `json:"start_offset"`
	LastTimestamp    int64   `json:"last_timestamp_ms"`
	TransactionalID  *string `json:"transactional_id"`
	CoordinatorState string  `json:"coordinator_state,omitempty"`
}

// txnHangingJSON is the JSON output of txn hanging.
type txnHangingJSON struct {
	Version  int          `json:"version"`
	MaxAgeMs int64        `json:"max_age_ms"`
	Hanging  []hangingTxn `json:"hanging"`
}

func newTxnHangingCmd(g *globals) *cobra.Command {
	var topics []string
	maxAge := defaultHangingMaxAge
	cmd := &cobra.Command{
		Use:   "hanging [--topic TOPIC]... [--max-age DURATION]",
		Short: "Find transactions left open on partitions that no coordinator will finish",
		Long: `Find hanging transactions: a producer whose open transaction on a partition
was last written more than --max-age ago (default 15m, the broker default of
transaction.max.timeout.ms), and whose coordinator is not running a matching
transaction (the producer id is unknown to every coordinator, or its
transactional id is not Ongoing/PrepareCommit/PrepareAbort on that partition).

A hanging transaction holds back the last stable offset of its partition, so
read_committed consumers stop there. Abort one with
  klog txn abort --topic T --partition P --start-offset N

--topic limits the search (repeatable); by default every partition of every
topic, internal ones included, is examined.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runTxnHanging(cmd.Context(), g, topics, maxAge, time.Now(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringSliceVar(&topics, "topic", nil, "only partitions of this topic (repeatable)")
	cmd.Flags().DurationVar(&maxAge, "max-age", maxAge, "a transaction last written longer ago than this is a candidate")
	return cmd
}

// openTxnCandidate is a producer's open transaction on one partition.
type openTxnCandidate struct {
	topic     string
	partition int32
	producer  producerJSON
}

// hangingCandidates returns the open transactions last written more than
// maxAge before now.
func hangingCandidates(parts []partitionProducersJSON, maxAge time.Duration, now time.Time) []openTxnCandidate {
	var out []openTxnCandidate
	for _, p := range parts {
		for _, d := range p.Producers {
			if d.CurrentTxnStartOffset < 0 {
				continue
			}
			if now.UnixMilli()-d.LastTimestamp <= maxAge.Milliseconds() {
				continue
			}
			out = append(out, openTxnCandidate{topic: p.Topic, partition: p.Partition, producer: d})
		}
	}
	return out
}

// classifyHanging keeps the candidates whose coordinator is not running a
// matching transaction. txnIDs maps producer ids to the transactional ids
// the coordinators list for them; described holds those ids' descriptions.
func classifyHanging(cands []openTxnCandidate, txnIDs map[int64]string, described kadm.DescribedTransactions) []hangingTxn {
	out := []hangingTxn{}
	for _, c := range cands {
		h := hangingTxn{
			Topic:            c.topic,
			Partition:        c.partition,
			ProducerID:       c.producer.ProducerID,
			ProducerEpoch:    c.producer.ProducerEpoch,
			CoordinatorEpoch: c.producer.CoordinatorEpoch,
			StartOffset:      c.producer.CurrentTxnStartOffset,
			LastTimestamp:    c.producer.LastTimestamp,
		}
		id, known := txnIDs[c.producer.ProducerID]
		if known {
			idCopy := id
			h.TransactionalID = &idCopy
			d, ok := described[id]
			if ok && d.Err == nil {
				h.CoordinatorState = d.State
				running := d.ProducerID == c.producer.ProducerID &&
					containsFold(runningTxnStates, d.State) &&
					d.Topics.Lookup(c.topic, c.partition)
				if running {
					continue
				}
			}
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Topic != b.Topic {
			return a.Topic < b.Topic
		}
		if a.Partition != b.Partition {
			return a.Partition < b.Partition
		}
		return a.ProducerID < b.ProducerID
	})
	return out
}

func runTxnHanging(ctx context.Context, g *globals, topics []string, maxAge time.Duration, now time.Time, out, diag io.Writer) error {
	if maxAge < 0 {
		return usagef("--max-age %v: must not be negative", maxAge)
	}
	for _, t := range topics {
		if strings.TrimSpace(t) == "" {
			return usagef("--topic: empty topic name")
		}
	}
	return withAdmin(g, func(adm *kadm.Client) error {
		set := make(kadm.TopicsSet)
		if len(topics) > 0 {
			for _, t := range topics {
				set.Add(t)
			}
		} else {
			details, err := adm.ListTopicsWithInternal(ctx)
			if err != nil {
				return fmt.Errorf("metadata: %w", err)
			}
			for _, d := range details {
				set.Add(d.Topic)
			}
		}
		failed := 0
		var parts []partitionProducersJSON
		if len(set) > 0 {
			resolved, err := resolvePartitions(ctx, adm, set)
			if err != nil {
				return err
			}
			if parts, err = describeProducers(ctx, adm, resolved); err != nil {
				return err
			}
		}
		for _, p := range parts {
			if p.Error != "" {
				failed++
				fmt.Fprintf(diag, "klog: %s/%d: %s\n", p.Topic, p.Partition, p.Error)
			}
		}
		cands := hangingCandidates(parts, maxAge, now)
		txnIDs := make(map[int64]string)
		var described kadm.DescribedTransactions
		if len(cands) > 0 {
			var pids []int64
			for _, c := range cands {
				pids = append(pids, c.producer.ProducerID)
			}
			listed, err := adm.ListTransactions(ctx, pids, nil)
			if err != nil {
				// Without the coordinators' view every candidate would look
				// hanging: refuse rather than invite a wrong abort.
				return fmt.Errorf("list transactions of producers %v: %w", pids, err)
			}
			var ids []string
			for _, l := range listed.Sorted() {
				txnIDs[l.ProducerID] = l.TxnID
				ids = append(ids, l.TxnID)
			}
			if len(ids) > 0 {
				if described, err = adm.DescribeTransactions(ctx, ids...); err != nil {
					return fmt.Errorf("describe transactions: %w", err)
				}
			}
		}
		hanging := classifyHanging(cands, txnIDs, described)
		if g.format == formatJSON {
			if err := writeJSON(out, txnHangingJSON{Version: txnJSONVersion, MaxAgeMs: maxAge.Milliseconds(), Hanging: hanging}); err != nil {
				return err
			}
		} else {
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "TOPIC\tPARTITION\tPRODUCER-ID\tEPOCH\tCOORDINATOR-EPOCH\tSTART-OFFSET\tLAST-TIMESTAMP\tTRANSACTIONAL-ID\tCOORDINATOR-STATE")
			for _, h := range hanging {
				id := "-"
				if h.TransactionalID != nil {
					id = *h.TransactionalID
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", h.Topic, h.Partition, h.ProducerID, h.ProducerEpoch,
					h.CoordinatorEpoch, h.StartOffset, millisString(h.LastTimestamp), id, orDash(h.CoordinatorState))
			}
			if err := tw.Flush(); err != nil {
				return fmt.Errorf("write output: %w", err)
			}
		}
		if failed > 0 {
			return fmt.Errorf("%d of %d partitions could not be examined: %w", failed, len(parts), ErrItemsFailed)
		}
		return nil
	})
}

// ---- abort ----

type txnAbortOptions struct {
	topic       string
	partition   int32
	startOffset int64
	yes         bool
	interactive bool // stdin is a terminal: ask before aborting
}

// txnAbortJSON is the JSON output of txn abort. Aborted tells whether the
// abort marker was written.
type txnAbortJSON struct {
	Version          int    `json:"version"`
	Topic            string `json:"topic"`
	Partition        int32  `json:"partition"`
	StartOffset      int64  `json:"start_offset"`
	ProducerID       int64  `json:"producer_id"`
	ProducerEpoch    int16  `json:"producer_epoch"`
	CoordinatorEpoch int32  `json:"coordinator_epoch"`
	Aborted          bool   `json:"aborted"`
}

func newTxnAbortCmd(g *globals) *cobra.Command {
	o := txnAbortOptions{partition: -1, startOffset: -1}
	cmd := &cobra.Command{
		Use:   "abort --topic TOPIC --partition P --start-offset N [--yes]",
		Short: "Abort a hanging transaction by writing an abort marker to its partition",
		Long: `Abort the open transaction that starts at --start-offset in one partition
(find it with "klog txn hanging" or "klog txn producers"). klog looks up the
producer id, epoch and coordinator epoch of that transaction and writes an
abort marker for it to the partition (WriteTxnMarkers), which closes the
transaction and releases the partition's last stable offset.

This bypasses the transaction coordinator: use it only for transactions no
coordinator will finish. In a terminal klog asks first; --yes aborts without
asking. Without a terminal nothing is aborted unless --yes is given.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.interactive = isTerminal(cmd.InOrStdin())
			return runTxnAbort(cmd.Context(), g, o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.topic, "topic", "", "the topic of the transaction (required)")
	f.Int32Var(&o.partition, "partition", -1, "the partition of the transaction (required)")
	f.Int64Var(&o.startOffset, "start-offset", -1, "the first offset of the transaction in the partition (required)")
	f.BoolVarP(&o.yes, "yes", "y", false, "abort without asking")
	return cmd
}

func runTxnAbort(ctx context.Context, g *globals, o txnAbortOptions, in io.Reader, out, diag io.Writer) error {
	switch {
	case o.topic == "":
		return usagef("--topic is required")
	case o.partition < 0:
		return usagef("--partition is required and must not be negative")
	case o.startOffset < 0:
		return usagef("--start-offset is required and must not be negative")
	}
	return withAdmin(g, func(adm *kadm.Client) error {
		set := make(kadm.TopicsSet)
		set.Add(o.topic, o.partition)
		set, err := resolvePartitions(ctx, adm, set)
		if err != nil {
			return err
		}
		parts, err := describeProducers(ctx, adm, set)
		if err != nil {
			return err
		}
		p := parts[0]
		if p.Error != "" {
			return fmt.Errorf("describe producers of %s/%d: %s", o.topic, o.partition, p.Error)
		}
		var found *producerJSON
		for i := range p.Producers {
			if p.Producers[i].CurrentTxnStartOffset == o.startOffset {
				found = &p.Producers[i]
				break
			}
		}
		if found == nil {
			return fmt.Errorf("%s/%d@%d: %w (see klog txn producers %s/%d)", o.topic, o.partition, o.startOffset, ErrNoOpenTransaction, o.topic, o.partition)
		}
		res := txnAbortJSON{
			Version:          txnJSONVersion,
			Topic:            o.topic,
			Partition:        o.partition,
			StartOffset:      o.startOffset,
			ProducerID:       found.ProducerID,
			ProducerEpoch:    found.ProducerEpoch,
			CoordinatorEpoch: found.CoordinatorEpoch,
		}
		what := fmt.Sprintf("the transaction of producer %d (epoch %d, coordinator epoch %d) on %s/%d starting at offset %d",
			res.ProducerID, res.ProducerEpoch, res.CoordinatorEpoch, o.topic, o.partition, o.startOffset)
		if !o.yes {
			if !o.interactive {
				return fmt.Errorf("nothing aborted: stdin is not a terminal; pass --yes to abort %s: %w", what, ErrNotConfirmed)
			}
			ok, err := confirm(in, diag, "Abort "+what+"?")
			if err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("nothing aborted: %w", ErrNotConfirmed)
			}
		}
		resps, err := adm.WriteTxnMarkers(ctx, kadm.TxnMarkers{
			ProducerID:       res.ProducerID,
			ProducerEpoch:    res.ProducerEpoch,
			Commit:           false,
			CoordinatorEpoch: res.CoordinatorEpoch,
			Topics:           set,
		})
		if err != nil {
			return fmt.Errorf("write abort marker: %w", err)
		}
		r, ok := resps[res.ProducerID].Topics[o.topic].Partitions[o.partition]
		switch {
		case !ok:
			return fmt.Errorf("write abort marker: %w", noResponse(nil))
		case r.Err != nil:
			return fmt.Errorf("write abort marker to %s/%d: %w", o.topic, o.partition, r.Err)
		}
		res.Aborted = true
		if g.format == formatJSON {
			return writeJSON(out, res)
		}
		fmt.Fprintf(out, "aborted %s\n", what)
		return nil
	})
}

// ---- produce --txn-id ----

// inputItem is one record read from the input, or the error that ended it.
type inputItem struct {
	r   *kgo.Record
	err error
}

// readInput reads records from src and sends them on items until the input
// ends (a final item with io.EOF or the error) or ctx is done. It is the
// only reader of src; a read blocked on a terminal returns when the input
// yields or closes, after which the goroutine sees ctx done and exits.
func readInput(ctx context.Context, src recordSource, items chan<- inputItem) {
	defer close(items)
	for {
		r, err := src.next()
		select {
		case items <- inputItem{r: r, err: err}:
		case <-ctx.Done():
			return
		}
		if err != nil {
			return
		}
	}
}

// runProduceTxn produces every input record in one transaction of cl (a
// transactional client) and commits it at the end of the input. Bad input,
// a failed record or cancellation (SIGINT) abort the transaction instead.
// prepare fixes up a record before it is produced, or says why it cannot be.
func runProduceTxn(ctx context.Context, cl *kgo.Client, txnID string, src recordSource, prepare func(*kgo.Record) error, rep *produceReport) error {
	if err := cl.BeginTransaction(); err != nil {
		return fmt.Errorf("begin transaction %q: %w", txnID, err)
	}
	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	items := make(chan inputItem)
	go readInput(readCtx, src, items)

	var n int64
	var cause error // why the transaction is aborted
loop:
	for {
		var it inputItem
		select {
		case <-ctx.Done():
			cause = fmt.Errorf("interrupted after %d records: %w", n, context.Cause(ctx))
			break loop
		case got, ok := <-items:
			if !ok {
				cause = fmt.Errorf("interrupted after %d records: %w", n, context.Cause(ctx))
				break loop
			}
			it = got
		}
		if errors.Is(it.err, io.EOF) {
			break
		}
		n++
		if it.err != nil {
			cause = fmt.Errorf("input record %d: %w", n, it.err)
			break
		}
		if err := prepare(it.r); err != nil {
			rep.fail(n, err)
			continue
		}
		idx := n
		cl.Produce(ctx, it.r, func(r *kgo.Record, err error) { rep.done(idx, r, err) })
	}
	stopReading()

	// Ending the transaction must outlive an interrupt, but not forever.
	endCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), txnEndTimeout)
	defer cancel()
	if cause == nil {
		if err := cl.Flush(endCtx); err != nil {
			cause = fmt.Errorf("flush: %w", err)
		} else if err := rep.result(n); err != nil {
			cause = err
		}
	}
	if cause != nil {
		if err := cl.AbortBufferedRecords(endCtx); err != nil {
			return fmt.Errorf("%w; abort transaction %q: %w", cause, txnID, err)
		}
		if err := cl.EndTransaction(endCtx, kgo.TryAbort); err != nil {
			return fmt.Errorf("%w; abort transaction %q: %w", cause, txnID, err)
		}
		if !rep.quiet {
			fmt.Fprintf(rep.w, "aborted transaction %q\n", txnID)
		}
		return fmt.Errorf("%w: %w", ErrTransactionAborted, cause)
	}
	if err := cl.EndTransaction(endCtx, kgo.TryCommit); err != nil {
		return fmt.Errorf("commit transaction %q: %w", txnID, err)
	}
	if !rep.quiet {
		fmt.Fprintf(rep.w, "committed transaction %q: %d records\n", txnID, n)
	}
	return nil
}
