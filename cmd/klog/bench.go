package main

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/klogdev/klog/loadgen"
	"github.com/klogdev/klog/supervisor"
)

// benchOptions are the flags of klog bench's commands.
type benchOptions struct {
	topic        string
	partitions   int
	rf           int
	size         int
	records      int
	duration     time.Duration
	rate         int
	acks         string
	idempotent   bool
	linger       time.Duration
	batchMax     int
	compression  string
	partitionRun int
	fetchMax     int
	fetchPart    int
	brokerPIDs   []int
}

func newBenchCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure a broker: produce, consume and end-to-end latency",
		Long: `Measure a broker with the franz-go client built into klog: records/s,
MB/s (10^6 bytes of record values), latency percentiles, and the CPU
seconds and memory of the broker's processes when it runs on this machine
(a klog up found from the brokers, or the processes given with
--broker-pid).

These are figures for comparing, not a test: scripts/bench/run.sh runs
klog beside its peers, interleaved, with medians of paired ratios.`,
	}
	cmd.AddCommand(newBenchProduceCmd(g), newBenchConsumeCmd(g), newBenchE2ECmd(g))
	return cmd
}

func (o *benchOptions) commonFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVarP(&o.topic, "topic", "t", "klog-bench", "topic to use; created when missing")
	f.IntSliceVar(&o.brokerPIDs, "broker-pid", nil, "broker processes to sample (default: the klog up serving the brokers, if any)")
}

func (o *benchOptions) produceFlags(cmd *cobra.Command, linger time.Duration) {
	f := cmd.Flags()
	f.IntVarP(&o.partitions, "partitions", "p", 1, "partitions of the topic, when it is created")
	f.IntVar(&o.rf, "replication-factor", 0, "replication factor of the topic, when it is created (0: the broker's default)")
	f.IntVarP(&o.size, "size", "s", 1024, "record value bytes (no key)")
	f.StringVar(&o.acks, "acks", "all", "required acks: all|1|0")
	// Off here so that the help shows no "(default true)": on with
	// --acks all unless --idempotent=false (benchConfig).
	f.BoolVar(&o.idempotent, "idempotent", false, "idempotent producer (default: on with --acks all; needs --acks all)")
	f.DurationVar(&o.linger, "linger", linger, "producer linger")
	f.IntVar(&o.batchMax, "batch-max", 1<<20, "producer max record-batch bytes")
	f.StringVarP(&o.compression, "compression", "z", "none", "compression: none|gzip|snappy|lz4|zstd")
	f.IntVar(&o.partitionRun, "partition-run", 0, "records in a row to each partition in turn (1: round robin; 0: the producer fills a batch to one partition, then the next)")
}

func newBenchProduceCmd(g *globals) *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "produce",
		Short: "Produce records as fast as the broker takes them, or at --rate",
		Args:  usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd, g, &o, "produce", loadgen.Produce)
		},
	}
	o.commonFlags(cmd)
	o.produceFlags(cmd, 5*time.Millisecond)
	f := cmd.Flags()
	f.IntVarP(&o.records, "records", "n", 1_000_000, "records to produce")
	f.DurationVarP(&o.duration, "duration", "d", 0, "produce for this long instead of --records")
	f.IntVar(&o.rate, "rate", 0, "records per second at most (0: as fast as it can)")
	return cmd
}

func newBenchConsumeCmd(g *globals) *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "consume",
		Short: "Consume a topic from its start, without a group",
		Long: `Consume a topic from the start of every partition, without a consumer
group: --records records, or by default every offset the topic holds when
the run starts (its transaction markers count, so give --records for a
topic written in transactions). Run klog bench produce first to fill it.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd, g, &o, "consume", loadgen.Consume)
		},
	}
	o.commonFlags(cmd)
	f := cmd.Flags()
	f.IntVarP(&o.records, "records", "n", 0, "records to consume (0: all the topic holds)")
	f.IntVar(&o.fetchMax, "fetch-max-bytes", 50<<20, "consumer fetch max bytes")
	f.IntVar(&o.fetchPart, "fetch-max-partition-bytes", 10<<20, "consumer fetch max bytes per partition")
	return cmd
}

func newBenchE2ECmd(g *globals) *cobra.Command {
	var o benchOptions
	cmd := &cobra.Command{
		Use:   "e2e",
		Short: "Produce at a fixed rate and consume in the same process: end-to-end latency",
		Long: `Produce --rate records a second for --duration and consume them in the
same process, and report the latency from handing each record to the
producer to consuming it, and from the moment the schedule said it was
due (which counts any time the producer fell behind).`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runBench(cmd, g, &o, "e2e", loadgen.E2E)
		},
	}
	o.commonFlags(cmd)
	o.produceFlags(cmd, 0)
	f := cmd.Flags()
	f.IntVar(&o.rate, "rate", 10_000, "records per second")
	f.DurationVarP(&o.duration, "duration", "d", 20*time.Second, "how long to produce")
	return cmd
}

// config turns the flags into a loadgen run.
func (o *benchOptions) config(cmd *cobra.Command, g *globals) (loadgen.Config, error) {
	c := loadgen.Config{
		Brokers: g.seeds(), Topic: o.topic, Partitions: o.partitions, ReplicationFactor: o.rf,
		Size: o.size, Records: o.records, Duration: o.duration, Rate: o.rate,
		Acks: -1, Idempotent: o.idempotent, Linger: o.linger, BatchMax: o.batchMax,
		Compression: o.compression, PartitionRun: o.partitionRun, FetchMaxBytes: o.fetchMax, FetchMaxPartitionBytes: o.fetchPart,
		BrokerPIDs: o.brokerPIDs, Logger: g.logger,
	}
	if o.duration > 0 && cmd.Flags().Lookup("records") != nil && !cmd.Flags().Changed("records") && cmd.Name() == "produce" {
		c.Records = 0 // bounded by time alone
	}
	if f := cmd.Flags().Lookup("acks"); f != nil {
		acks, err := loadgen.ParseAcks(o.acks)
		if err != nil {
			return c, usagef("--acks %q: want all, 1 or 0", o.acks)
		}
		// As Kafka's producer: idempotence needs acks=all, and is on
		// with it unless turned off.
		if acks != -1 && o.idempotent {
			return c, usagef("--idempotent needs --acks all")
		}
		c.Acks = acks
		c.Idempotent = acks == -1 && (o.idempotent || !cmd.Flags().Changed("idempotent"))
	}
	conn, err := g.clientOpts()
	if err != nil {
		return c, err
	}
	c.ClientOpts = conn
	if _, err := loadgen.Codec(c.Compression); err != nil {
		return c, usagef("-z %q: want none, gzip, snappy, lz4 or zstd", c.Compression)
	}
	for name, v := range map[string]int{"partitions": o.partitions, "size": o.size, "records": o.records, "rate": o.rate} {
		if v < 0 {
			return c, usagef("--%s %d: must not be negative", name, v)
		}
	}
	if len(c.BrokerPIDs) == 0 {
		c.BrokerPIDs = localBrokerPIDs(cmd, g)
	}
	return c, nil
}

// localBrokerPIDs are the processes of the klog up serving the seed
// brokers, when one runs on this machine: the node itself, or each node of
// a cluster. The cluster is found as klog down and klog status find it
// (pickCluster); one that does not serve the brokers measured is not
// sampled.
func localBrokerPIDs(cmd *cobra.Command, g *globals) []int {
	r, err := pickCluster(cmd.Context(), cmd, g, "")
	if err != nil || !r.Serves(g.seeds()) {
		return nil
	}
	if r.Socket == "" {
		return []int{r.PID}
	}
	resp, err := supervisor.Call(cmd.Context(), r.Socket, supervisor.Request{Op: "list", Node: -1})
	if err != nil {
		return nil
	}
	var pids []int
	for _, n := range resp.Nodes {
		if n.PID > 0 {
			pids = append(pids, n.PID)
		}
	}
	return pids
}

// benchReport is klog bench's JSON (version 1).
type benchReport struct {
	Version       int              `json:"version"`
	Mode          string           `json:"mode"`
	Config        benchConfigJSON  `json:"config"`
	Records       int64            `json:"records"`
	Errors        int64            `json:"errors"`
	Bytes         int64            `json:"bytes"`
	Batches       int64            `json:"batches,omitempty"`
	Requests      int64            `json:"produce_requests,omitempty"`
	ElapsedS      float64          `json:"elapsed_s"`
	RecordsPerSec float64          `json:"records_per_s"`
	MBps          float64          `json:"MBps"`
	LatencyMS     *benchPercentile `json:"latency_ms,omitempty"`
	ScheduleMS    *benchPercentile `json:"from_schedule_ms,omitempty"`
	AchievedRate  float64          `json:"achieved_rate,omitempty"`
	FirstRecordMS float64          `json:"first_record_ms,omitempty"`
	Throttles     *benchThrottles  `json:"throttles,omitempty"`
	Client        benchUsage       `json:"client"`
	Broker        *benchUsage      `json:"broker,omitempty"`
	BrokerPIDs    []int            `json:"broker_pids,omitempty"`
	Error         string           `json:"error,omitempty"`
}

type benchConfigJSON struct {
	Brokers     []string `json:"brokers"`
	Topic       string   `json:"topic"`
	Partitions  int      `json:"partitions,omitempty"`
	Size        int      `json:"size,omitempty"`
	Records     int      `json:"records,omitempty"`
	DurationS   float64  `json:"duration_s,omitempty"`
	Rate        int      `json:"rate,omitempty"`
	Acks        string   `json:"acks,omitempty"`
	Idempotent  bool     `json:"idempotent"`
	LingerMS    float64  `json:"linger_ms"`
	BatchMax    int      `json:"batch_max,omitempty"`
	Compression string   `json:"compression,omitempty"`
}

// benchThrottles is what the brokers' client quotas made the run wait.
type benchThrottles struct {
	Count   int64   `json:"count"`
	TotalMS float64 `json:"total_ms"`
	MaxMS   float64 `json:"max_ms"`
}

type benchPercentile struct {
	P50  float64 `json:"p50"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
}

type benchUsage struct {
	CPUS     float64 `json:"cpu_s"`
	CPUPerGB float64 `json:"cpu_s_per_gb,omitempty"`
	RSSMB    float64 `json:"rss_mb,omitempty"`
	HWMMB    float64 `json:"peak_rss_mb,omitempty"`
	// EarlyRSSMB is the RSS a tenth into a run of 10 s or more.
	EarlyRSSMB float64 `json:"rss_early_mb,omitempty"`
}

func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func percentileJSON(p *loadgen.Percentiles) *benchPercentile {
	if p == nil {
		return nil
	}
	return &benchPercentile{P50: millis(p.P50), P99: millis(p.P99), P999: millis(p.P999), Max: millis(p.Max)}
}

func runBench(cmd *cobra.Command, g *globals, o *benchOptions, mode string, run func(context.Context, loadgen.Config) (*loadgen.Result, error)) error {
	c, err := o.config(cmd, g)
	if err != nil {
		return err
	}
	p := newProgress(cmd.OutOrStdout(), cmd.ErrOrStderr())
	if p != nil {
		c.Progress = func(n int64) { p.show("%s: %s", mode, plural(n, "record")) }
	}
	res, err := run(cmd.Context(), c)
	p.clear()
	if res == nil {
		return err
	}
	rep := benchReport{
		Version: 1, Mode: mode, Records: res.Records, Errors: res.Errors, Bytes: res.Bytes, Batches: res.Batches, Requests: res.Requests,
		ElapsedS: res.Elapsed.Seconds(), RecordsPerSec: res.RecordsPerSec, MBps: res.MBps,
		LatencyMS: percentileJSON(res.Latency), ScheduleMS: percentileJSON(res.FromSchedule),
		AchievedRate: res.AchievedRate, FirstRecordMS: millis(res.FirstRecord),
		Client:     benchUsage{CPUS: res.Client.CPUS, CPUPerGB: res.Client.CPUPerGB},
		BrokerPIDs: c.BrokerPIDs,
		Config: benchConfigJSON{
			Brokers: c.Brokers, Topic: c.Topic, Records: c.Records, DurationS: c.Duration.Seconds(), Rate: c.Rate,
			Idempotent: c.Idempotent, LingerMS: millis(c.Linger),
		},
	}
	if mode != "consume" {
		rep.Config.Partitions, rep.Config.Size, rep.Config.Acks = c.Partitions, c.Size, o.acks
		rep.Config.BatchMax, rep.Config.Compression = c.BatchMax, c.Compression
	}
	if th := res.Throttles; th.Count > 0 {
		rep.Throttles = &benchThrottles{Count: th.Count, TotalMS: millis(th.Total), MaxMS: millis(th.Max)}
	}
	if b := res.Broker; b != nil {
		rep.Broker = &benchUsage{CPUS: b.CPUS, CPUPerGB: b.CPUPerGB, RSSMB: b.RSSMB, HWMMB: b.HWMMB, EarlyRSSMB: b.RSSEarlyMB}
	}
	if err != nil {
		rep.Error = err.Error()
	}
	if werr := writeOutput(g, cmd.OutOrStdout(), rep, func(t *table) { benchText(t, &rep) }); werr != nil {
		return werr
	}
	return err
}

func benchText(t *table, r *benchReport) {
	c := r.Config
	what := fmt.Sprintf("%s %s", r.Mode, c.Topic)
	if r.Mode != "consume" {
		extra := []string{fmt.Sprintf("%d B records", c.Size), plural(c.Partitions, "partition"), "acks=" + c.Acks}
		if c.Idempotent {
			extra = append(extra, "idempotent")
		}
		extra = append(extra, fmt.Sprintf("linger %gms", c.LingerMS))
		if c.Compression != "none" && c.Compression != "" {
			extra = append(extra, c.Compression)
		}
		if c.Rate > 0 {
			extra = append(extra, fmt.Sprintf("%d/s", c.Rate))
		}
		what += " (" + strings.Join(extra, ", ") + ")"
	}
	t.row("%s\n", what)
	t.row("records\t%d\n", r.Records)
	if r.Errors > 0 {
		t.row("failed\t%d\n", r.Errors)
	}
	t.row("elapsed\t%.3f s\n", r.ElapsedS)
	if r.Mode == "e2e" {
		t.row("achieved rate\t%.0f records/s\n", r.AchievedRate)
	} else {
		t.row("throughput\t%.0f records/s\t%.1f MB/s\n", r.RecordsPerSec, r.MBps)
	}
	if r.Batches > 0 {
		t.row("batches\t%d\t%.1f records each\n", r.Batches, float64(r.Records)/float64(r.Batches))
	}
	if r.Requests > 0 {
		t.row("produce requests\t%d\t%.2f batches each\n", r.Requests, float64(r.Batches)/float64(r.Requests))
	}
	if r.Mode == "consume" {
		t.row("first record\t%.3f ms\n", r.FirstRecordMS)
	}
	if th := r.Throttles; th != nil {
		t.row("throttled\t%d times\t%.0f ms in all\tmax %.0f ms\n", th.Count, th.TotalMS, th.MaxMS)
	}
	lat := func(name string, p *benchPercentile) {
		if p != nil {
			t.row("%s\tp50 %.3f ms\tp99 %.3f ms\tp99.9 %.3f ms\tmax %.3f ms\n", name, p.P50, p.P99, p.P999, p.Max)
		}
	}
	switch r.Mode {
	case "produce":
		lat("produce latency", r.LatencyMS)
	case "e2e":
		lat("e2e latency", r.LatencyMS)
		lat("from schedule", r.ScheduleMS)
	}
	usage := func(name string, u *benchUsage) {
		line := fmt.Sprintf("%s\t%.2f CPU s", name, u.CPUS)
		if u.CPUPerGB > 0 {
			line += fmt.Sprintf("\t%.3f CPU s/GB", u.CPUPerGB)
		}
		if u.RSSMB > 0 {
			line += fmt.Sprintf("\tRSS %.1f MB (peak %.1f MB", u.RSSMB, u.HWMMB)
			if u.EarlyRSSMB > 0 {
				line += fmt.Sprintf(", a tenth in %.1f MB", u.EarlyRSSMB)
			}
			line += ")"
		}
		t.row("%s\n", line)
	}
	if r.Broker != nil {
		usage(fmt.Sprintf("broker (%s)", plural(len(r.BrokerPIDs), "process")), r.Broker)
	}
	usage("client", &r.Client)
	if r.Error != "" {
		t.row("error\t%s\n", r.Error)
	}
}
