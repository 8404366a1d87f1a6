package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/inspect"
	"github.com/klogdev/klog/recordjson"
	"github.com/klogdev/klog/waits"
)

// consumePollRecords bounds how many records one poll hands out, so output
// is written and -n checked in small steps.
const consumePollRecords = 500

// consumeOptions are the flags of klog consume.
type consumeOptions struct {
	topics          []string
	offset          string        // -o
	exitAtEnd       bool          // -e
	count           int64         // -n; 0 is unlimited
	partitions      []int32       // -p; empty is all
	group           string        // -g
	format          string        // -f
	timeout         time.Duration // --timeout idle exit; 0 waits forever
	readUncommitted bool          // --read-uncommitted
	printControl    bool          // --print-control
}

func newConsumeCmd(g *globals) *cobra.Command {
	var o consumeOptions
	var partitions string
	cmd := &cobra.Command{
		Use:   "consume TOPIC...",
		Short: "Consume records and print them on stdout",
		Long: `Consume records from one or more topics and print them on stdout.

Offsets (-o):
  start | end | N | -N (N before end) | +N (N after start) | @TIME
  A:B from A up to but excluding B; :end; @-1h:end
  TIME is RFC3339, YYYY-MM-DD, unix milliseconds, or a duration like -1h.

-e exits once every partition has reached the end it had when klog started.
A topic that does not exist is an error; klog never creates it.

--timeout is an idle exit: klog exits 0 once no record has arrived for that
long. Otherwise klog consume waits as long as it takes: a member of a group
(-g) rides through coordinator moves, unreachable brokers and a cluster
without quorum, rejoining the group when it can, as Kafka's consumers do;
only an error retrying cannot fix (such as GROUP_AUTHORIZATION_FAILED or
INVALID_GROUP_ID) ends it with exit status 1. A wait that lasts more than 2s
is reported on stderr, again as it goes on, and when it ends, e.g.
  klog: waiting 2.1s for group live: coordinator for group live is moving (NOT_COORDINATOR)
  klog: broker 127.0.0.1:9093 unreachable for 4.0s: connection refused
  klog: group live joined again after 7.3s

Output formats (-f):
  json     klog's lossless JSON lines (docs/records-json.md)
  LAYOUT   a franz-go record formatter layout (default '%v\n'), e.g.
           '%t[%p]@%o %k=%v\n'`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.topics = args
			ps, err := parsePartitionList(partitions)
			if err != nil {
				return err
			}
			o.partitions = ps
			return runConsume(cmd.Context(), g, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.offset, "offset", "o", "start", "where to start (and optionally stop): start|end|N|-N|+N|@TIME, or A:B")
	f.BoolVarP(&o.exitAtEnd, "exit", "e", false, "exit when every partition reaches its end offset")
	f.Int64VarP(&o.count, "num", "n", 0, "exit after N records")
	f.StringVarP(&partitions, "partitions", "p", "", "comma-separated partitions to consume (default all)")
	f.StringVarP(&o.group, "group", "g", "", "consume as a member of this group and commit offsets")
	f.StringVarP(&o.format, "format", "f", "%v\\n", "output format: json, or a franz-go record formatter layout")
	f.DurationVar(&o.timeout, "timeout", 0, "exit when no record arrives for this long (0: wait forever)")
	f.BoolVar(&o.readUncommitted, "read-uncommitted", false, "also read records of open and aborted transactions")
	f.BoolVar(&o.printControl, "print-control", false, "also print transaction control records")
	return cmd
}

// parsePartitionList parses "0,1,2".
func parsePartitionList(s string) ([]int32, error) {
	if s == "" {
		return nil, nil
	}
	var out []int32
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.ParseInt(strings.TrimSpace(f), 10, 32)
		if err != nil || n < 0 {
			return nil, usagef("-p %q: want comma-separated partition numbers", s)
		}
		if !slices.Contains(out, int32(n)) {
			out = append(out, int32(n))
		}
	}
	return out, nil
}

// recordWriter formats records onto stdout.
type recordWriter struct {
	w    *bufio.Writer
	fmt  *kgo.RecordFormatter // nil for JSON
	buf  []byte
	json bool
}

func newRecordWriter(out io.Writer, format string) (*recordWriter, error) {
	rw := &recordWriter{w: bufio.NewWriterSize(out, 64<<10)}
	if format == formatJSON {
		rw.json = true
		return rw, nil
	}
	f, err := kgo.NewRecordFormatter(format)
	if err != nil {
		return nil, usagef("-f %q: %v", format, err)
	}
	rw.fmt = f
	return rw, nil
}

func (rw *recordWriter) write(r *kgo.Record) error {
	var err error
	if rw.json {
		rw.buf, err = recordjson.Append(rw.buf[:0], r)
		if err != nil {
			return err
		}
	} else {
		rw.buf = rw.fmt.AppendRecord(rw.buf[:0], r)
	}
	if _, err := rw.w.Write(rw.buf); err != nil {
		return fmt.Errorf("write stdout: %w", err)
	}
	return nil
}

func (rw *recordWriter) flush() error {
	if err := rw.w.Flush(); err != nil {
		return fmt.Errorf("write stdout: %w", err)
	}
	return nil
}

// consumePlan is where each partition starts and stops. A stop of -1 means
// the partition has no upper bound.
type consumePlan map[string]map[int32]partitionRange

type partitionRange struct {
	start, stop int64
}

// runConsume consumes o.topics and writes the records to out.
func runConsume(ctx context.Context, g *globals, o consumeOptions, out, diag io.Writer) error {
	spec, err := parseOffsetSpec(o.offset, time.Now())
	if err != nil {
		return &usageError{err: fmt.Errorf("-o: %w", err)}
	}
	if o.count < 0 {
		return usagef("-n %d: must not be negative", o.count)
	}
	if o.group != "" && len(o.partitions) > 0 {
		return usagef("-p cannot be combined with -g (the group assigns partitions)")
	}
	rw, err := newRecordWriter(out, o.format)
	if err != nil {
		return err
	}

	// Resolve everything with an admin client first: topics must exist
	// (checked without auto-creation), and the plan needs the offsets as
	// they are now.
	adminCl, err := g.newClient()
	if err != nil {
		return err
	}
	plan, err := planConsume(ctx, kadm.NewClient(adminCl), o, spec)
	adminCl.Close()
	if err != nil {
		return err
	}

	opts := consumeClientOpts(o, spec, plan)
	wt := waits.New(diag, waits.Options{Group: o.group, Brokers: true})
	cl, err := g.newClient(append(opts, wt.Opts()...)...)
	if err != nil {
		return err
	}
	stopWatching := wt.Start(ctx, cl)
	c := &consumer{cl: cl, o: o, plan: plan, rw: rw, diag: diag}
	err = c.run(ctx)
	stopWatching()
	if ferr := rw.flush(); err == nil {
		err = ferr
	}
	if o.group != "" {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		if cerr := cl.CommitMarkedOffsets(cctx); cerr != nil && err == nil {
			err = fmt.Errorf("commit offsets for group %q: %w", o.group, cerr)
		}
		cancel()
	}
	cl.Close()
	return err
}

// consumeClientOpts are the options of the client that consumes: as a
// group member, or the partitions of plan from their start.
func consumeClientOpts(o consumeOptions, spec offsetSpec, plan consumePlan) []kgo.Opt {
	opts := []kgo.Opt{kgo.KeepControlRecords()}
	if !o.readUncommitted {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	if o.group != "" {
		opts = append(opts,
			kgo.ConsumerGroup(o.group),
			kgo.ConsumeTopics(o.topics...),
			kgo.ConsumeResetOffset(spec.start.kgoOffset()),
			kgo.AutoCommitMarks(),
		)
	} else {
		parts := make(map[string]map[int32]kgo.Offset)
		for t, ps := range plan {
			for p, r := range ps {
				if r.stop >= 0 && r.start >= r.stop {
					continue // nothing to read
				}
				if parts[t] == nil {
					parts[t] = make(map[int32]kgo.Offset)
				}
				parts[t][p] = kgo.NewOffset().At(r.start)
			}
		}
		opts = append(opts, kgo.ConsumePartitions(parts))
	}
	return opts
}

// planConsume checks that every topic and partition exists and resolves the
// offset spec for each partition.
func planConsume(ctx context.Context, adm *kadm.Client, o consumeOptions, spec offsetSpec) (consumePlan, error) {
	details, err := inspect.LookupTopics(ctx, adm, o.topics)
	if err != nil {
		return nil, err
	}
	for _, t := range o.topics {
		for _, p := range o.partitions {
			if _, ok := details[t].Partitions[p]; !ok {
				return nil, fmt.Errorf("topic %q partition %d: %w", t, p, inspect.ErrPartitionNotFound)
			}
		}
	}
	x, err := listConsumeOffsets(ctx, adm, o, spec)
	if err != nil {
		return nil, err
	}
	plan := make(consumePlan)
	for _, t := range o.topics {
		plan[t] = make(map[int32]partitionRange)
		for p := range details[t].Partitions {
			if len(o.partitions) > 0 && !slices.Contains(o.partitions, p) {
				continue
			}
			plan[t][p] = x.partitionRange(t, p, o, spec)
		}
	}
	return plan, nil
}

// consumeOffsets are the offsets of o.topics, as they are now, that
// planConsume resolves the offset spec against.
type consumeOffsets struct {
	starts, ends kadm.ListedOffsets
	times        map[int64]kadm.ListedOffsets // the first at or after each timestamp of the spec
	committed    kadm.OffsetResponses         // o.group's commits, if any
}

// listConsumeOffsets lists the start offsets of o.topics, their end
// offsets (last stable, unless o.readUncommitted), the offsets at each
// timestamp spec names, and o.group's committed offsets.
func listConsumeOffsets(ctx context.Context, adm *kadm.Client, o consumeOptions, spec offsetSpec) (consumeOffsets, error) {
	var x consumeOffsets
	var err error
	x.starts, err = adm.ListStartOffsets(ctx, o.topics...)
	if err == nil {
		err = x.starts.Error()
	}
	if err != nil {
		return x, fmt.Errorf("list start offsets: %w", err)
	}
	if o.readUncommitted {
		x.ends, err = adm.ListEndOffsets(ctx, o.topics...)
	} else {
		x.ends, err = adm.ListCommittedOffsets(ctx, o.topics...)
	}
	if err == nil {
		err = x.ends.Error()
	}
	if err != nil {
		return x, fmt.Errorf("list end offsets: %w", err)
	}
	x.times = make(map[int64]kadm.ListedOffsets)
	for _, ms := range spec.timestamps() {
		l, err := adm.ListOffsetsAfterMilli(ctx, ms, o.topics...)
		if err == nil {
			err = l.Error()
		}
		if err != nil {
			return x, fmt.Errorf("list offsets after %s: %w", time.UnixMilli(ms).UTC().Format(time.RFC3339), err)
		}
		x.times[ms] = l
	}
	if o.group != "" {
		inspect.WaitCoordinators(ctx, adm, inspect.GroupCoordinator, o.group)
		x.committed, err = adm.FetchOffsetsForTopics(ctx, o.group, o.topics...)
		if errors.Is(err, kerr.GroupIDNotFound) {
			x.committed, err = nil, nil // a new group has no commits
		}
		if err != nil {
			return x, fmt.Errorf("fetch committed offsets of group %q: %w", o.group, err)
		}
	}
	return x, nil
}

// partitionRange resolves spec in partition p of topic t: where reading
// starts (the group's commit, when it has one) and stops (at the end
// offset with o.exitAtEnd).
func (x consumeOffsets) partitionRange(t string, p int32, o consumeOptions, spec offsetSpec) partitionRange {
	s, _ := x.starts.Lookup(t, p)
	e, _ := x.ends.Lookup(t, p)
	po := partitionOffsets{start: s.Offset, end: e.Offset, times: make(map[int64]int64)}
	for ms, l := range x.times {
		if lo, ok := l.Lookup(t, p); ok && lo.Offset >= 0 {
			po.times[ms] = lo.Offset
		}
	}
	r := partitionRange{start: spec.start.resolve(po), stop: -1}
	if spec.stop != nil {
		r.stop = spec.stop.resolve(po)
	}
	if o.exitAtEnd && (r.stop < 0 || r.stop > po.end) {
		r.stop = po.end
	}
	if c, ok := x.committed.Lookup(t, p); ok && c.Err == nil && c.At >= 0 {
		r.start = c.At
	}
	return r
}

// consumer runs the poll loop of one klog consume.
type consumer struct {
	cl   *kgo.Client
	o    consumeOptions
	plan consumePlan
	rw   *recordWriter
	diag io.Writer

	printed int64
	// open holds the partitions with an upper bound not yet reached;
	// bounded tells whether every partition has one (then an empty open
	// set means done).
	open    map[string]map[int32]bool
	bounded bool
}

func (c *consumer) run(ctx context.Context) error {
	c.open = make(map[string]map[int32]bool)
	c.bounded = true
	for t, ps := range c.plan {
		for p, r := range ps {
			if r.stop < 0 {
				c.bounded = false
				continue
			}
			if r.start < r.stop {
				if c.open[t] == nil {
					c.open[t] = make(map[int32]bool)
				}
				c.open[t][p] = true
			}
		}
	}
	for {
		if c.finished() {
			return nil
		}
		pollCtx, cancel := ctx, context.CancelFunc(func() {})
		if c.o.timeout > 0 {
			pollCtx, cancel = context.WithTimeout(ctx, c.o.timeout)
		}
		fetches := c.cl.PollRecords(pollCtx, consumePollRecords)
		idle := pollCtx.Err() != nil
		cancel()
		if ctx.Err() != nil {
			return nil // interrupted: a clean exit after what was printed
		}
		if fetches.IsClientClosed() {
			return nil
		}
		if err := c.checkErrors(fetches); err != nil {
			return err
		}
		got := false
		var err error
		fetches.EachRecord(func(r *kgo.Record) {
			if err == nil {
				got = true
				err = c.handle(r)
			}
		})
		if err != nil {
			return err
		}
		if err := c.rw.flush(); err != nil {
			return err
		}
		if idle && !got {
			return nil
		}
	}
}

// finished reports whether -n or the upper bounds are reached.
func (c *consumer) finished() bool {
	if c.o.count > 0 && c.printed >= c.o.count {
		return true
	}
	return c.bounded && len(c.open) == 0
}

// checkErrors reports the first fetch error that is not transient. A
// group session that is lost and rejoined is transient: the watcher
// reports it while it lasts.
func (c *consumer) checkErrors(fetches kgo.Fetches) error {
	var first error
	fetches.EachError(func(t string, p int32, err error) {
		var loss *kgo.ErrDataLoss
		switch {
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded), errors.Is(err, kgo.ErrClientClosed):
		case waits.RideThrough(err):
		case errors.As(err, &loss):
			fmt.Fprintf(c.diag, "klog: %v\n", err)
		case first == nil:
			first = fmt.Errorf("consume %s[%d]: %w", t, p, err)
		}
	})
	return first
}

// handle prints one record unless it is past its partition's bound, and
// tracks progress towards the bounds.
func (c *consumer) handle(r *kgo.Record) error {
	if c.finished() {
		return nil
	}
	rg, ok := c.plan[r.Topic][r.Partition]
	if ok && rg.stop >= 0 && r.Offset >= rg.stop {
		c.close(r.Topic, r.Partition)
		return nil
	}
	if !r.Attrs.IsControl() || c.o.printControl {
		if err := c.rw.write(r); err != nil {
			return err
		}
		if !r.Attrs.IsControl() {
			c.printed++
		}
	}
	if c.o.group != "" {
		c.cl.MarkCommitRecords(r)
	}
	if ok && rg.stop >= 0 && r.Offset+1 >= rg.stop {
		c.close(r.Topic, r.Partition)
	}
	return nil
}

// close marks a partition as having reached its bound and stops fetching it.
func (c *consumer) close(topic string, partition int32) {
	if !c.open[topic][partition] {
		return
	}
	delete(c.open[topic], partition)
	if len(c.open[topic]) == 0 {
		delete(c.open, topic)
	}
	c.cl.PauseFetchPartitions(map[string][]int32{topic: {partition}})
}
