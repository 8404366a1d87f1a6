// Package loadgen drives a Kafka-protocol broker with franz-go, the way a
// producer or consumer application would, and measures it: records and
// bytes per second, the latency of each produce from the call to its
// acknowledgement, the latency from producing a record to consuming it,
// and, when the broker's processes run on this machine, their CPU seconds
// and resident memory over the run.
//
// klog bench and scripts/bench's kbench are its two front ends: the first
// prints tables for people, the second JSON lines for run.sh's reports.
//
// MB means 10^6 bytes of record values; keys, headers and protocol
// overhead are not counted.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/internal/procfs"
)

// ErrConfig means a Config does not describe a run that can be made.
var ErrConfig = errors.New("bad load configuration")

// Config is one run.
type Config struct {
	Brokers []string
	// ClientOpts are added to every client of the run: how to connect
	// to a secured cluster (kafkaconn's options).
	ClientOpts []kgo.Opt
	Topic      string
	// Partitions and ReplicationFactor are the topic's when the run
	// creates it (an existing topic is used as it is); 0 is 1 partition
	// and the broker's default replication factor.
	Partitions        int
	ReplicationFactor int
	// Size is each record value's size in bytes (no key).
	Size int
	// Records is how many records a produce or consume run moves; for a
	// produce run Duration, when above 0, bounds it by time instead. A
	// consume run with Records 0 reads up to the end offsets found when
	// it starts.
	Records  int
	Duration time.Duration
	// Rate is records per second: a produce run's limit (0: as fast as
	// it can), an e2e run's schedule (required).
	Rate int
	// Acks is -1 (all in-sync replicas), 0 or 1; Idempotent needs -1.
	Acks       int
	Idempotent bool
	Linger     time.Duration
	// BatchMax is the producer's max record-batch bytes, MaxBuffered its
	// max buffered records; 0 is 1 MiB and 50,000.
	BatchMax    int
	MaxBuffered int
	// Compression is none, gzip, snappy, lz4 or zstd.
	Compression string
	// PartitionRun, when above 0, sends that many records in a row to
	// each partition of the Partitions in turn (1: round robin, 100: a
	// batch of 100 records to each); 0 leaves it to the producer, which
	// fills one partition's batch before the next (sticky).
	PartitionRun int
	// FetchMaxBytes and FetchMaxPartitionBytes are the consumer's; 0 is
	// 50 MiB and 10 MiB.
	FetchMaxBytes          int
	FetchMaxPartitionBytes int
	// CreateWait bounds waiting for the topic to have leaders and for the
	// warm-up record; 0 is 10 s.
	CreateWait time.Duration
	// BrokerPIDs are the broker processes to sample, empty for none.
	BrokerPIDs []int
	// Progress, when set, is called about once a second with the records
	// moved so far.
	Progress func(records int64)
	Logger   *slog.Logger
}

func (c *Config) defaults() error {
	if len(c.Brokers) == 0 {
		return fmt.Errorf("%w: no brokers", ErrConfig)
	}
	if c.Topic == "" {
		return fmt.Errorf("%w: no topic", ErrConfig)
	}
	if c.Acks != -1 && c.Acks != 0 && c.Acks != 1 {
		return fmt.Errorf("%w: acks %d: want -1 (all), 0 or 1", ErrConfig, c.Acks)
	}
	if c.Idempotent && c.Acks != -1 {
		return fmt.Errorf("%w: an idempotent producer needs acks=all", ErrConfig)
	}
	if c.Size < 0 || c.Records < 0 || c.Rate < 0 || c.Partitions < 0 || c.PartitionRun < 0 {
		return fmt.Errorf("%w: negative size, records, rate, partitions or partition run", ErrConfig)
	}
	if _, err := Codec(c.Compression); err != nil {
		return err
	}
	if c.Partitions == 0 {
		c.Partitions = 1
	}
	if c.ReplicationFactor == 0 {
		c.ReplicationFactor = -1
	}
	if c.BatchMax == 0 {
		c.BatchMax = 1 << 20
	}
	if c.MaxBuffered == 0 {
		c.MaxBuffered = 50_000
	}
	if c.FetchMaxBytes == 0 {
		c.FetchMaxBytes = 50 << 20
	}
	if c.FetchMaxPartitionBytes == 0 {
		c.FetchMaxPartitionBytes = 10 << 20
	}
	if c.CreateWait == 0 {
		c.CreateWait = 10 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return nil
}

// Codec is the producer compression codec named none (or ""), gzip,
// snappy, lz4 or zstd.
func Codec(name string) (kgo.CompressionCodec, error) {
	switch name {
	case "", "none":
		return kgo.NoCompression(), nil
	case "gzip":
		return kgo.GzipCompression(), nil
	case "snappy":
		return kgo.SnappyCompression(), nil
	case "lz4":
		return kgo.Lz4Compression(), nil
	case "zstd":
		return kgo.ZstdCompression(), nil
	}
	return kgo.CompressionCodec{}, fmt.Errorf("%w: compression %q: want none, gzip, snappy, lz4 or zstd", ErrConfig, name)
}

// ParseAcks reads acks as a producer's acks setting spells it: all (or
// -1), 1 or 0.
func ParseAcks(s string) (int, error) {
	switch s {
	case "all", "-1":
		return -1, nil
	case "1":
		return 1, nil
	case "0":
		return 0, nil
	}
	return 0, fmt.Errorf("%w: acks %q: want all, 1 or 0", ErrConfig, s)
}

// Result is what a run measured.
type Result struct {
	Records int64 // records acknowledged (produce) or consumed
	Errors  int64 // records whose produce failed
	Bytes   int64 // of record values
	// Batches is, for a produce run, the record batches the producer
	// wrote (acknowledged or not): Records/Batches is how full the
	// linger and the broker's answers let them get.
	Batches int64
	// Requests is, for a produce run, the Produce requests written.
	Requests int64
	// Throttles is what the brokers' client quotas made the run wait.
	Throttles Throttles
	Elapsed   time.Duration
	// RecordsPerSec and MBps are over Elapsed.
	RecordsPerSec float64
	MBps          float64
	// Latency is, for a produce run, from each Produce call to its
	// acknowledgement; for an e2e run, from handing each record to the
	// producer to consuming it. FromSchedule (e2e only) is from when the
	// schedule said a record was due, so a producer that fell behind the
	// rate cannot hide a slow broker.
	Latency      *Percentiles
	FromSchedule *Percentiles
	// AchievedRate is the e2e run's produce rate.
	AchievedRate float64
	// FirstRecord is how long a consume run waited for its first record.
	FirstRecord time.Duration
	// TopicCreated reports whether the run created the topic (or found
	// it) through the admin API, rather than by auto-creation.
	TopicCreated bool
	Client       Usage
	// Broker is the broker processes' usage, nil when none was sampled.
	Broker *Usage
	// StealS is the machine's steal time during the run; LoadBefore the
	// one-minute load average before it.
	StealS     float64
	LoadBefore float64
}

// Usage is what processes used over a run.
type Usage struct {
	CPUS     float64 // CPU seconds, user and system
	SysS     float64 // of which system
	CPUPerGB float64 // CPU seconds per GB of record values moved
	RSSMB    float64 // resident memory at the end, all processes together
	HWMMB    float64 // peak resident memory, all processes together
	// RSSEarlyMB is the resident memory a tenth into the run, sampled
	// each second (0 for a run shorter than 10 s): against RSSMB it
	// shows whether a sustained run grows.
	RSSEarlyMB float64
}

// Percentiles of a latency distribution.
type Percentiles struct {
	P50, P99, P999, Max time.Duration
}

// window measures the client's and the brokers' usage over a run.
type window struct {
	// early is the brokers' RSS sampled each second, for RSSEarlyMB.
	early struct {
		sync.Mutex
		samples []float64
	}
	stopSampling func()
	pids         []int
	start        time.Time
	client0      float64
	broker0      []procfs.Sample
	brokerErr    error
	steal0       float64
	loadBefore   float64
}

func startWindow(pids []int) *window {
	w := &window{pids: pids, loadBefore: procfs.Loadavg1(), steal0: procfs.StealSeconds()}
	for _, pid := range pids {
		s, err := procfs.Read(pid)
		if err != nil && w.brokerErr == nil {
			w.brokerErr = err
		}
		w.broker0 = append(w.broker0, s)
	}
	w.client0 = selfCPU()
	w.start = time.Now()
	w.stopSampling = w.sampleRSS()
	return w
}

// sampleRSS samples the brokers' resident memory each second until the
// returned stop; at most an hour of samples is kept.
func (w *window) sampleRSS() (stop func()) {
	if len(w.pids) == 0 {
		return func() {}
	}
	return everySecond(func() {
		var mb float64
		for _, pid := range w.pids {
			if s, err := procfs.Read(pid); err == nil {
				mb += float64(s.RSSKB) / 1024
			}
		}
		w.early.Lock()
		if len(w.early.samples) < 3600 {
			w.early.samples = append(w.early.samples, mb)
		}
		w.early.Unlock()
	})
}

// everySecond calls f once a second, from its own goroutine, until the
// returned stop, which returns once f has run for the last time.
func everySecond(f func()) (stop func()) {
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				f()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// stop ends the window and fills r's usage; valueBytes is the record
// payload moved, for CPU seconds per GB.
func (w *window) stop(r *Result, valueBytes int64) error {
	r.Elapsed = time.Since(w.start)
	w.stopSampling()
	r.Client.CPUS = selfCPU() - w.client0
	r.StealS = procfs.StealSeconds() - w.steal0
	r.LoadBefore = w.loadBefore
	gb := float64(valueBytes) / 1e9
	if gb > 0 {
		r.Client.CPUPerGB = r.Client.CPUS / gb
	}
	if len(w.pids) == 0 {
		return nil
	}
	if w.brokerErr != nil {
		return w.brokerErr
	}
	u := &Usage{}
	for i, pid := range w.pids {
		s, err := procfs.Read(pid)
		if err != nil {
			return err
		}
		u.CPUS += s.CPU() - w.broker0[i].CPU()
		u.SysS += s.SysS - w.broker0[i].SysS
		u.RSSMB += float64(s.RSSKB) / 1024
		u.HWMMB += float64(s.HWMKB) / 1024
	}
	if gb > 0 {
		u.CPUPerGB = u.CPUS / gb
	}
	if n := len(w.early.samples); n >= 10 {
		u.RSSEarlyMB = w.early.samples[n/10]
	}
	r.Broker = u
	return nil
}

func selfCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

func (r *Result) rates() {
	if s := r.Elapsed.Seconds(); s > 0 {
		r.RecordsPerSec = float64(r.Records) / s
		r.MBps = float64(r.Bytes) / s / 1e6
	}
}

// createTopic creates the topic and waits until every partition has a
// leader. A broker that cannot create topics through the admin API still
// gets its topic auto-created by the warm-up record, so a refusal is
// logged and not fatal.
func createTopic(ctx context.Context, c *Config) bool {
	cl, err := c.newClient()
	if err != nil {
		c.Logger.Warn("create topic: client", "err", err)
		return false
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(ctx, c.CreateWait)
	defer cancel()
	resp, err := adm.CreateTopic(ctx, int32(c.Partitions), int16(c.ReplicationFactor), nil, c.Topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		c.Logger.Warn("create topic failed; relying on auto-creation", "topic", c.Topic, "err", err)
		return false
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		md, err := adm.Metadata(ctx, c.Topic)
		if err == nil {
			if t, ok := md.Topics[c.Topic]; ok && t.Err == nil && len(t.Partitions) > 0 {
				ready := true
				for _, p := range t.Partitions {
					ready = ready && p.Err == nil && p.Leader >= 0
				}
				if ready {
					return true
				}
			}
		}
		select {
		case <-ctx.Done():
			c.Logger.Warn("topic has no leader yet; relying on the warm-up record", "topic", c.Topic)
			return false
		case <-tick.C:
		}
	}
}

// ProducerOptions are the client options of the producer a run of c
// uses, for a caller that sends records of its own the same way.
func ProducerOptions(c Config) ([]kgo.Opt, error) {
	if err := c.defaults(); err != nil {
		return nil, err
	}
	return producerOpts(&c), nil
}

// producerOpts is the producer a run uses: the configured acks,
// idempotence, linger, batch size, buffer and codec, to the topic,
// spreading records over its partitions. A failed record is an error,
// never a silent retry.
func producerOpts(c *Config) []kgo.Opt {
	acks := kgo.AllISRAcks()
	switch c.Acks {
	case 0:
		acks = kgo.NoAck()
	case 1:
		acks = kgo.LeaderAck()
	}
	cc, _ := Codec(c.Compression) // checked by defaults
	opts := []kgo.Opt{
		kgo.SeedBrokers(c.Brokers...),
		kgo.DefaultProduceTopic(c.Topic),
		kgo.RequiredAcks(acks),
		kgo.ProducerLinger(c.Linger),
		kgo.ProducerBatchMaxBytes(int32(c.BatchMax)),
		kgo.ProducerBatchCompression(cc),
		kgo.MaxBufferedRecords(c.MaxBuffered),
		kgo.RecordRetries(0),
		kgo.AllowAutoTopicCreation(),
	}
	if !c.Idempotent {
		opts = append(opts, kgo.DisableIdempotentWrite())
	}
	if c.PartitionRun > 0 {
		opts = append(opts, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	}
	return append(opts, c.ClientOpts...)
}

// newClient is a client of the run's brokers with opts and the
// connection's options.
func (c *Config) newClient(opts ...kgo.Opt) (*kgo.Client, error) {
	return kgo.NewClient(slices.Concat([]kgo.Opt{kgo.SeedBrokers(c.Brokers...)}, opts, c.ClientOpts)...)
}

// warmUp produces one record (with c.PartitionRun, one to each
// partition), retrying a retriable error for up to c.CreateWait: on a
// cluster, a new topic's leader may not know the topic yet when another
// node's Metadata already names it (UNKNOWN_TOPIC_ID). Connection,
// metadata, producer id and each partition's first write are then done
// before timing starts.
func warmUp(ctx context.Context, cl *kgo.Client, c *Config) error {
	deadline := time.Now().Add(c.CreateWait)
	recs := []*kgo.Record{{Value: []byte("warm")}}
	if c.PartitionRun > 0 {
		for p := 1; p < c.Partitions; p++ {
			recs = append(recs, &kgo.Record{Value: []byte("warm"), Partition: int32(p)})
		}
	}
	for {
		err := cl.ProduceSync(ctx, recs...).FirstErr()
		if err == nil {
			return nil
		}
		if !kerr.IsRetriable(err) || time.Now().After(deadline) {
			return fmt.Errorf("warm-up produce: %w", err)
		}
		t := time.NewTimer(50 * time.Millisecond) // a bounded retry of a retriable error
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("warm-up produce: %w", err)
		case <-t.C:
		}
	}
}

// fetchErr is the first error of fetches, nil when none.
func fetchErr(fetches kgo.Fetches) error {
	var ferr error
	fetches.EachError(func(t string, p int32, err error) {
		if ferr == nil {
			ferr = fmt.Errorf("fetch %s[%d]: %w", t, p, err)
		}
	})
	return ferr
}

// progress calls c.Progress about once a second with what count reads,
// until the returned stop is called.
func progress(c *Config, count func() int64) (stop func()) {
	if c.Progress == nil {
		return func() {}
	}
	return everySecond(func() { c.Progress(count()) })
}
