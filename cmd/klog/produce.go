package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/inspect"
	"github.com/klogdev/klog/loadgen"
	"github.com/klogdev/klog/recordjson"
	"github.com/klogdev/klog/waits"
)

// defaultMaxMessageBytes is the broker default of max.message.bytes; input
// lines (and JSON lines) longer than the limit are rejected.
const defaultMaxMessageBytes = 1048588

// Producer buffering bounds: Produce blocks once either is reached, so any
// amount of input streams through bounded memory.
const (
	produceMaxBufferedRecords = 10000
	produceMaxBufferedBytes   = 64 << 20
)

// produceOptions are the flags of klog produce.
type produceOptions struct {
	topic       string
	format      string   // "" (lines), "json", or a franz-go record reader layout
	key         string   // -k
	keySet      bool     // -k given (an empty key is a key)
	keySep      string   // -K
	headers     []string // -H k=v, repeatable
	tombstone   bool     // -Z
	partition   int32    // -p; -1 lets the partitioner choose
	compression string   // -z
	acks        string   // --acks
	quiet       bool     // -q
	maxBytes    int      // --max-message-bytes
	txnID       string   // --txn-id: produce everything in one transaction
	txnTimeout  time.Duration
	timeout     time.Duration // --timeout: give up when records wait this long
	create      bool          // --create: create TOPIC if it does not exist
}

// defaultProduceTimeout is --timeout's default; the help says why.
const defaultProduceTimeout = 30 * time.Second

func newProduceCmd(g *globals) *cobra.Command {
	o := produceOptions{partition: -1}
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Produce records read from stdin",
		Long: `Produce records read from stdin to TOPIC, by default one record per line.

Where each record landed (topic[partition]@offset) is reported on stderr
unless -q is given. The exit status is 1 if any record failed.

TOPIC must exist: klog produce does not create it (nor asks the cluster to
auto-create it), so a misspelt name is an error. --create creates a missing
TOPIC with the cluster's default partitions and replication factor.

When records wait longer than 2s for a partition, stderr says what they
wait for and why, e.g.
  klog: waiting 2.1s for orders/0 (1 record): no leader
  klog: waiting 4.0s for orders/1 (3 records): NOT_ENOUGH_REPLICAS (min.insync.replicas 2, in sync 1: 0)
  klog: waiting 8.0s for orders/2 (1 record): leader 1 at 127.0.0.1:9093 unreachable: connection refused
again as the wait goes on, and "klog: orders/0 delivered again after 7.3s"
when it ends. --timeout bounds the wait: once records have waited that long
on a partition without any being delivered, klog stops reading its input
and exits 1 naming the records not delivered. The default, 30s, is shorter
than Kafka's delivery.timeout.ms (120s): a local cluster that cannot take a
record for that long is down, and a script should hear so rather than hang.

Input formats (-f):
  (none)   one record per line; -k sets a fixed key, -K SEP splits "key SEP value"
  json     klog's lossless JSON lines (docs/records-json.md); a "partition"
           field is honoured unless -p is given
  LAYOUT   a franz-go record reader layout, e.g. '%k %v\n'

With --txn-id every record goes into one transaction of that transactional
id, committed at the end of the input. Bad input, a failed record, records
waiting past --timeout or an interrupt (SIGINT) abort the transaction
instead, so read_committed consumers
see all of the records or none; the exit status is then 1, as it is when the
commit fails. See docs/txn.md.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.topic = args[0]
			o.keySet = cmd.Flags().Changed("key")
			return runProduce(cmd.Context(), g, o, cmd.InOrStdin(), cmd.ErrOrStderr())
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.format, "format", "f", "", "input format: json, or a franz-go record reader layout (default: one record per line)")
	f.StringVarP(&o.key, "key", "k", "", "fixed key for every record")
	f.StringVarP(&o.keySep, "key-separator", "K", "", "split each line into key SEP value at the first SEP")
	f.StringArrayVarP(&o.headers, "header", "H", nil, "header k=v added to every record (repeatable)")
	f.BoolVarP(&o.tombstone, "tombstone", "Z", false, "produce an empty value as a tombstone (null value)")
	f.Int32VarP(&o.partition, "partition", "p", -1, "produce to this partition")
	f.StringVarP(&o.compression, "compression", "z", "none", "compression: none|gzip|snappy|lz4|zstd")
	f.StringVar(&o.acks, "acks", "all", "required acks: all|1|0 (1 and 0 disable idempotence)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "do not report where records landed")
	f.IntVar(&o.maxBytes, "max-message-bytes", defaultMaxMessageBytes, "largest record (and input line) accepted")
	f.StringVar(&o.txnID, "txn-id", "", "produce all records in one transaction with this transactional id")
	f.DurationVar(&o.txnTimeout, "txn-timeout", time.Minute, "transaction timeout with --txn-id: the broker aborts a transaction open longer")
	f.DurationVar(&o.timeout, "timeout", defaultProduceTimeout, "give up when records wait this long for a partition without any being delivered; exit 1 naming them (0: wait forever)")
	f.BoolVar(&o.create, "create", false, "create TOPIC if it does not exist (default partitions and replication factor)")
	return cmd
}

// recordSource yields the records read from stdin; next returns io.EOF at the
// end of input.
type recordSource interface {
	next() (*kgo.Record, error)
}

// producerOpts validates the options and turns them into client options.
func (o *produceOptions) producerOpts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	codec, err := loadgen.Codec(o.compression)
	if err != nil {
		return nil, usagef("-z %q: want none, gzip, snappy, lz4 or zstd", o.compression)
	}
	opts = append(opts, kgo.ProducerBatchCompression(codec))
	acks, err := loadgen.ParseAcks(o.acks)
	switch {
	case err != nil:
		return nil, usagef("--acks %q: want all, 1 or 0", o.acks)
	case acks == -1:
		opts = append(opts, kgo.RequiredAcks(kgo.AllISRAcks()))
	case acks == 1:
		opts = append(opts, kgo.RequiredAcks(kgo.LeaderAck()), kgo.DisableIdempotentWrite())
	default:
		opts = append(opts, kgo.RequiredAcks(kgo.NoAck()), kgo.DisableIdempotentWrite())
	}
	if o.maxBytes <= 0 {
		return nil, usagef("--max-message-bytes %d: must be positive", o.maxBytes)
	}
	if o.partition < -1 {
		return nil, usagef("-p %d: must not be negative", o.partition)
	}
	if o.timeout < 0 {
		return nil, usagef("--timeout %v: must not be negative", o.timeout)
	}
	if o.keySep != "" && o.keySet {
		return nil, usagef("-k and -K are mutually exclusive")
	}
	if o.format != "" && o.keySep != "" {
		return nil, usagef("-K only applies to line input, not -f")
	}
	if o.txnID != "" {
		if o.acks != "all" && o.acks != "-1" {
			return nil, usagef("--txn-id needs --acks all (transactions are idempotent)")
		}
		if o.txnTimeout <= 0 {
			return nil, usagef("--txn-timeout %v: must be positive", o.txnTimeout)
		}
		opts = append(opts, kgo.TransactionalID(o.txnID), kgo.TransactionTimeout(o.txnTimeout))
	}
	opts = append(opts,
		kgo.RecordPartitioner(explicitPartitioner{inner: kgo.StickyKeyPartitioner(nil)}),
		kgo.ProducerBatchMaxBytes(int32(max(512, min(o.maxBytes, 1<<30)))),
		kgo.MaxBufferedRecords(produceMaxBufferedRecords),
		kgo.MaxBufferedBytes(produceMaxBufferedBytes),
		kgo.UnknownTopicRetries(1),
	)
	return opts, nil
}

// parseHeaders parses repeated -H k=v flags.
func parseHeaders(flags []string) ([]kgo.RecordHeader, error) {
	var hs []kgo.RecordHeader
	for _, h := range flags {
		k, v, ok := strings.Cut(h, "=")
		if !ok {
			return nil, usagef("-H %q: want key=value", h)
		}
		hs = append(hs, kgo.RecordHeader{Key: k, Value: []byte(v)})
	}
	return hs, nil
}

// errGaveUp ends a klog produce whose records waited past --timeout.
var errGaveUp = errors.New("records waited past --timeout")

// runProduce reads records from in and produces them to o.topic; landing
// reports, waits and per-record errors go to diag.
func runProduce(ctx context.Context, g *globals, o produceOptions, in io.Reader, diag io.Writer) error {
	opts, err := o.producerOpts()
	if err != nil {
		return err
	}
	headers, err := parseHeaders(o.headers)
	if err != nil {
		return err
	}
	src, err := o.source(in)
	if err != nil {
		return err
	}

	runCtx, giveUp := context.WithCancelCause(ctx)
	defer giveUp(nil)
	rep := &produceReport{w: diag, quiet: o.quiet}
	acks, _ := loadgen.ParseAcks(o.acks)
	wt := waits.New(diag, waits.Options{AcksAll: acks == -1, GiveUp: o.timeout, OnGiveUp: func() {
		rep.giveUp()
		giveUp(errGaveUp)
	}})
	cl, err := g.newClient(append(opts, wt.Opts()...)...)
	if err != nil {
		return err
	}
	defer cl.Close()
	numPartitions, err := o.lookupTopic(ctx, g, cl)
	if err != nil {
		return err
	}
	defer wt.Start(runCtx, cl)()

	prepare := func(r *kgo.Record) error {
		r.Topic = o.topic
		r.Offset = 0
		if o.partition >= 0 {
			r.Partition = o.partition
		}
		r.Headers = append(r.Headers, headers...)
		if r.Partition >= numPartitions {
			return fmt.Errorf("partition %d: %w (topic %q has %d)", r.Partition, inspect.ErrPartitionNotFound, o.topic, numPartitions)
		}
		return nil
	}
	if o.txnID != "" {
		return runProduceTxn(runCtx, cl, o.txnID, src, prepare, rep)
	}
	n, err := produceInput(runCtx, cl, src, prepare, rep)
	if errors.Is(context.Cause(runCtx), errGaveUp) && ctx.Err() == nil {
		cl.Close() // fails the records still waiting, which rep collects
		return rep.undelivered(n, o.timeout, wt, o.topic)
	}
	if err != nil {
		return err
	}
	return rep.result(n)
}

// lookupTopic returns the number of partitions of o.topic, creating the
// topic first with --create. It is bounded by --timeout.
func (o *produceOptions) lookupTopic(ctx context.Context, g *globals, cl *kgo.Client) (int32, error) {
	if o.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.timeout)
		defer cancel()
	}
	details, err := inspect.LookupTopics(ctx, kadm.NewClient(cl), []string{o.topic})
	switch {
	case errors.Is(err, inspect.ErrTopicNotFound) && o.create:
		details, err = createMissingTopic(ctx, g, cl, o.topic)
	case errors.Is(err, inspect.ErrTopicNotFound):
		return 0, fmt.Errorf("%w; create it with klog topic create %s, or pass --create", err, o.topic)
	}
	if err != nil {
		return 0, err
	}
	numPartitions := int32(len(details[o.topic].Partitions))
	if o.partition >= numPartitions {
		return 0, fmt.Errorf("topic %q has %d partitions, -p %d: %w", o.topic, numPartitions, o.partition, inspect.ErrPartitionNotFound)
	}
	return numPartitions, nil
}

// produceInput produces every record of src, then flushes; it returns
// how many records it read. A read blocked on a terminal does not hold up
// the end of ctx.
func produceInput(ctx context.Context, cl *kgo.Client, src recordSource, prepare func(*kgo.Record) error, rep *produceReport) (int64, error) {
	readCtx, stopReading := context.WithCancel(ctx)
	defer stopReading()
	items := make(chan inputItem, inputReadAhead)
	go readInput(readCtx, src, items)
	var n int64
	for it := range items {
		if errors.Is(it.err, io.EOF) {
			break
		}
		n++
		if it.err != nil {
			// Input that cannot be parsed stops the run: later lines
			// may be misaligned, and the user should fix the input.
			_ = cl.Flush(ctx)
			return n, fmt.Errorf("input record %d: %w", n, it.err)
		}
		if err := prepare(it.r); err != nil {
			rep.fail(n, err)
			continue
		}
		idx := n
		rep.sent()
		cl.Produce(ctx, it.r, func(r *kgo.Record, err error) { rep.done(idx, r, err) })
	}
	if err := cl.Flush(ctx); err != nil {
		return n, fmt.Errorf("flush: %w", err)
	}
	return n, nil
}

// source returns the record source for the configured input format.
func (o *produceOptions) source(in io.Reader) (recordSource, error) {
	switch o.format {
	case "":
		return &lineSource{
			scan:      newLineScanner(in, o.maxBytes),
			max:       o.maxBytes,
			key:       o.key,
			keySet:    o.keySet,
			keySep:    []byte(o.keySep),
			tombstone: o.tombstone,
		}, nil
	case formatJSON:
		return &jsonSource{scan: newLineScanner(in, o.maxBytes), max: o.maxBytes}, nil
	default:
		rr, err := kgo.NewRecordReader(in, o.format)
		if err != nil {
			return nil, usagef("-f %q: %v", o.format, err)
		}
		return &layoutSource{rr: rr, key: o.key, keySet: o.keySet, tombstone: o.tombstone}, nil
	}
}

// newLineScanner returns a scanner of lines no longer than max bytes.
func newLineScanner(in io.Reader, max int) *bufio.Scanner {
	s := bufio.NewScanner(in)
	s.Buffer(make([]byte, 0, min(64<<10, max+1)), max+1)
	return s
}

// scanLine returns the next line without its newline, or io.EOF.
func scanLine(s *bufio.Scanner, max int) ([]byte, error) {
	if s.Scan() {
		return s.Bytes(), nil
	}
	err := s.Err()
	switch {
	case err == nil:
		return nil, io.EOF
	case errors.Is(err, bufio.ErrTooLong):
		return nil, fmt.Errorf("%w: longer than %d bytes (--max-message-bytes)", ErrLineTooLong, max)
	default:
		return nil, fmt.Errorf("read stdin: %w", err)
	}
}

// lineSource makes one record per input line.
type lineSource struct {
	scan      *bufio.Scanner
	max       int
	key       string
	keySet    bool
	keySep    []byte
	tombstone bool
}

func (s *lineSource) next() (*kgo.Record, error) {
	line, err := scanLine(s.scan, s.max)
	if err != nil {
		return nil, err
	}
	r := &kgo.Record{Partition: -1}
	value := line
	if len(s.keySep) > 0 {
		if k, v, ok := bytes.Cut(line, s.keySep); ok {
			r.Key = append([]byte{}, k...)
			value = v
		}
	} else if s.keySet {
		r.Key = []byte(s.key)
	}
	if len(value) > 0 || !s.tombstone {
		r.Value = append([]byte{}, value...) // non-nil even when empty
	}
	return r, nil
}

// jsonSource reads klog's JSON lines; blank lines are skipped.
type jsonSource struct {
	scan *bufio.Scanner
	max  int
}

func (s *jsonSource) next() (*kgo.Record, error) {
	for {
		line, err := scanLine(s.scan, s.max)
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		return recordjson.Parse(line)
	}
}

// layoutSource reads records with a franz-go record reader layout.
type layoutSource struct {
	rr        *kgo.RecordReader
	key       string
	keySet    bool
	tombstone bool
}

func (s *layoutSource) next() (*kgo.Record, error) {
	r, err := s.rr.ReadRecord()
	if err != nil {
		return nil, err
	}
	if r.Key == nil && s.keySet {
		r.Key = []byte(s.key)
	}
	if len(r.Value) == 0 {
		if s.tombstone {
			r.Value = nil
		} else if r.Value == nil {
			r.Value = []byte{}
		}
	}
	r.Partition = -1
	return r, nil
}

// produceReport collects the outcome of produced records. Its methods are
// called from the client's promise goroutines.
type produceReport struct {
	w     io.Writer
	quiet bool

	mu struct {
		sync.Mutex
		failed   int64
		firstErr error
		buf      []byte
		inFlight int64 // records sent whose promise has not run
		// gaveUp is set once records waited past --timeout: the
		// records that fail from then on are collected in
		// undelivered, by partition, instead of reported one by one.
		gaveUp      bool
		undelivered map[int32][]int64
	}
	settled sync.Cond // signalled when inFlight drops to 0
}

// sent counts a record handed to the client.
func (p *produceReport) sent() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.inFlight++
}

func (p *produceReport) done(idx int64, r *kgo.Record, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.inFlight--; p.mu.inFlight == 0 && p.settled.L != nil {
		p.settled.Broadcast()
	}
	switch {
	case err != nil && p.mu.gaveUp:
		p.mu.failed++
		p.mu.undelivered[r.Partition] = append(p.mu.undelivered[r.Partition], idx)
	case err != nil:
		p.failLocked(idx, err)
	case !p.quiet:
		p.mu.buf = fmt.Appendf(p.mu.buf[:0], "%s[%d]@%d\n", r.Topic, r.Partition, r.Offset)
		_, _ = p.w.Write(p.mu.buf)
	}
}

func (p *produceReport) fail(idx int64, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.failLocked(idx, err)
}

func (p *produceReport) failLocked(idx int64, err error) {
	p.mu.failed++
	err = fmt.Errorf("record %d: %w", idx, err)
	if p.mu.firstErr == nil {
		p.mu.firstErr = err
	}
	fmt.Fprintf(p.w, "klog: %v\n", err)
}

// result returns nil if every one of n records was produced.
func (p *produceReport) result(n int64) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.resultLocked(n)
}

func (p *produceReport) resultLocked(n int64) error {
	if p.mu.failed == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d records failed, first: %w (%w)", p.mu.failed, n, p.mu.firstErr, ErrItemsFailed)
}

// giveUp makes the records that fail from now on undelivered ones.
func (p *produceReport) giveUp() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.gaveUp = true
	p.mu.undelivered = make(map[int32][]int64)
}

// settleWait bounds the wait for the promises of a closed client.
const settleWait = 5 * time.Second

// undelivered waits for the promises of the records still in flight (the
// client is closed) and returns the error naming the records not
// delivered within timeout, by partition, with why they waited.
func (p *produceReport) undelivered(n int64, timeout time.Duration, wt *waits.Watcher, topic string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.settled.L = &p.mu.Mutex
	stop := time.AfterFunc(settleWait, func() {
		p.mu.Lock()
		p.mu.inFlight = 0
		p.settled.Broadcast()
		p.mu.Unlock()
	})
	defer stop.Stop()
	for p.mu.inFlight > 0 {
		p.settled.Wait()
	}
	var count int
	var parts []string
	for _, part := range slices.Sorted(maps.Keys(p.mu.undelivered)) {
		idx := p.mu.undelivered[part]
		count += len(idx)
		name := topic
		if part >= 0 {
			name = fmt.Sprintf("%s/%d", topic, part)
		}
		desc := name + " " + indexRanges(idx, 3)
		if why := wt.Reason(topic, part); why != "" {
			desc += " (" + why + ")"
		}
		parts = append(parts, desc)
	}
	if count == 0 { // the records waited for were delivered as klog gave up
		return p.resultLocked(n)
	}
	if len(parts) > 4 {
		parts = append(parts[:4], fmt.Sprintf("and %d more partitions", len(parts)-4))
	}
	return fmt.Errorf("%s of %d not delivered within --timeout %v: %s (%w)",
		plural(count, "record"), n, timeout, strings.Join(parts, "; "), ErrItemsFailed)
}

// indexRanges shows sorted input record numbers as ranges, at most max of
// them: "records 1-3, 7 and 2 more".
func indexRanges(idx []int64, max int) string {
	idx = slices.Clone(idx)
	slices.Sort(idx)
	var rs []string
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && idx[j+1] == idx[j]+1 {
			j++
		}
		if i == j {
			rs = append(rs, strconv.FormatInt(idx[i], 10))
		} else {
			rs = append(rs, fmt.Sprintf("%d-%d", idx[i], idx[j]))
		}
		i = j + 1
	}
	word := "records "
	if len(idx) == 1 {
		word = "record "
	}
	if len(rs) > max {
		return word + strings.Join(rs[:max], ", ") + fmt.Sprintf(" and %d more", len(rs)-max)
	}
	return word + strings.Join(rs, ", ")
}

// explicitPartitioner sends a record with a non-negative Partition to that
// partition and partitions the others with the inner partitioner.
type explicitPartitioner struct {
	inner kgo.Partitioner
}

func (p explicitPartitioner) ForTopic(topic string) kgo.TopicPartitioner {
	return &explicitTopicPartitioner{inner: p.inner.ForTopic(topic)}
}

type explicitTopicPartitioner struct {
	inner kgo.TopicPartitioner
}

func (p *explicitTopicPartitioner) RequiresConsistency(r *kgo.Record) bool {
	return r.Partition >= 0 || p.inner.RequiresConsistency(r)
}

func (p *explicitTopicPartitioner) Partition(r *kgo.Record, n int) int {
	if r.Partition >= 0 {
		return int(r.Partition)
	}
	return p.inner.Partition(r, n)
}

func (p *explicitTopicPartitioner) OnNewBatch() {
	if nb, ok := p.inner.(kgo.TopicPartitionerOnNewBatch); ok {
		nb.OnNewBatch()
	}
}

// createWait bounds the wait for a topic klog produce --create created to
// appear in the metadata: Kafka creates it asynchronously.
const createWait = 10 * time.Second

// createMissingTopic creates topic with the cluster's default partitions and
// replication factor, and returns its details once it exists. A topic
// created meanwhile by someone else is as good.
func createMissingTopic(ctx context.Context, g *globals, cl *kgo.Client, topic string) (kadm.TopicDetails, error) {
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, -1, -1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return nil, fmt.Errorf("create topic %s: %w", topic, err)
	}
	return inspect.WaitTopic(ctx, g.newClient, topic, createWait)
}
