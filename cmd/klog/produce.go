package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/inspect"
	"github.com/klogdev/klog/loadgen"
	"github.com/klogdev/klog/recordjson"
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
}

func newProduceCmd(g *globals) *cobra.Command {
	o := produceOptions{partition: -1}
	cmd := &cobra.Command{
		Use:   "produce TOPIC",
		Short: "Produce records read from stdin",
		Long: `Produce records read from stdin to TOPIC, by default one record per line.

Where each record landed (topic[partition]@offset) is reported on stderr
unless -q is given. The exit status is 1 if any record failed.

Input formats (-f):
  (none)   one record per line; -k sets a fixed key, -K SEP splits "key SEP value"
  json     klog's lossless JSON lines (docs/records-json.md); a "partition"
           field is honoured unless -p is given
  LAYOUT   a franz-go record reader layout, e.g. '%k %v\n'

With --txn-id every record goes into one transaction of that transactional
id, committed at the end of the input. Bad input, a failed record or an
interrupt (SIGINT) abort the transaction instead, so read_committed consumers
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

// runProduce reads records from in and produces them to o.topic; landing
// reports and per-record errors go to diag.
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

	cl, err := g.newClient(opts...)
	if err != nil {
		return err
	}
	defer cl.Close()
	details, err := inspect.LookupTopics(ctx, kadm.NewClient(cl), []string{o.topic})
	if errors.Is(err, inspect.ErrTopicNotFound) {
		// Like Kafka's own producers, ask the broker to create the topic;
		// it does so when auto.create.topics.enable is true.
		details, err = autoCreateTopic(ctx, g, cl, o.topic)
	}
	if err != nil {
		return err
	}
	numPartitions := int32(len(details[o.topic].Partitions))
	if o.partition >= numPartitions {
		return fmt.Errorf("topic %q has %d partitions, -p %d: %w", o.topic, numPartitions, o.partition, inspect.ErrPartitionNotFound)
	}

	rep := &produceReport{w: diag, quiet: o.quiet}
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
		return runProduceTxn(ctx, cl, o.txnID, src, prepare, rep)
	}
	var n int64
	for {
		r, err := src.next()
		if errors.Is(err, io.EOF) {
			break
		}
		n++
		if err != nil {
			// Input that cannot be parsed stops the run: later lines
			// may be misaligned, and the user should fix the input.
			_ = cl.Flush(ctx)
			return fmt.Errorf("input record %d: %w", n, err)
		}
		if err := prepare(r); err != nil {
			rep.fail(n, err)
			continue
		}
		idx := n
		cl.Produce(ctx, r, func(r *kgo.Record, err error) { rep.done(idx, r, err) })
	}
	if err := cl.Flush(ctx); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	return rep.result(n)
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
	}
}

func (p *produceReport) done(idx int64, r *kgo.Record, err error) {
	if err != nil {
		p.fail(idx, err)
		return
	}
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.buf = fmt.Appendf(p.mu.buf[:0], "%s[%d]@%d\n", r.Topic, r.Partition, r.Offset)
	_, _ = p.w.Write(p.mu.buf)
}

func (p *produceReport) fail(idx int64, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
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
	if p.mu.failed == 0 {
		return nil
	}
	return fmt.Errorf("%d of %d records failed, first: %w (%w)", p.mu.failed, n, p.mu.firstErr, ErrItemsFailed)
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

// autoCreateWait bounds the wait for a topic the cluster auto-creates.
const autoCreateWait = 10 * time.Second

// autoCreateTopic asks the cluster to auto-create topic through a Metadata
// request that allows it, and returns the topic's details once it exists.
//
// klog creates the topic before it answers. Kafka creates it
// asynchronously and answers UNKNOWN_TOPIC_OR_PARTITION meanwhile, as it
// does when auto.create.topics.enable is false: so the broker's config
// tells which, and an auto-creating cluster is waited for (as Kafka's own
// producer waits for metadata) up to autoCreateWait.
func autoCreateTopic(ctx context.Context, g *globals, cl *kgo.Client, topic string) (kadm.TopicDetails, error) {
	req := kmsg.NewPtrMetadataRequest()
	rt := kmsg.NewMetadataRequestTopic()
	rt.Topic = kmsg.StringPtr(topic)
	req.Topics = append(req.Topics, rt)
	req.AllowAutoTopicCreation = true
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	if len(resp.Topics) != 1 {
		return nil, fmt.Errorf("topic %q: %w", topic, inspect.ErrTopicNotFound)
	}
	adm := kadm.NewClient(cl)
	err = kerr.ErrorForCode(resp.Topics[0].ErrorCode)
	switch {
	case err == nil:
		return inspect.LookupTopics(ctx, adm, []string{topic})
	case !errors.Is(err, kerr.UnknownTopicOrPartition) && !errors.Is(err, kerr.LeaderNotAvailable):
		return nil, fmt.Errorf("topic %q: %w", topic, err)
	}
	if len(resp.Brokers) > 0 {
		if on, cerr := inspect.AutoCreatesTopics(ctx, adm, resp.Brokers[0].NodeID); cerr == nil && !on {
			return nil, fmt.Errorf("topic %q: %w (and the cluster does not auto-create topics)", topic, inspect.ErrTopicNotFound)
		}
	}
	details, err := inspect.WaitTopic(ctx, g.newClient, topic, autoCreateWait)
	if errors.Is(err, inspect.ErrTopicNotFound) {
		return nil, fmt.Errorf("%w (and the cluster did not auto-create it within %v)", err, autoCreateWait)
	}
	return details, err
}
