package main

import (
	"context"
	"log/slog"

	"github.com/klogdev/klog/loadgen"
)

// load is the loadgen run the flags describe.
func (c config) load() loadgen.Config {
	lc := loadgen.Config{
		Brokers: c.brokers, Topic: c.topic, Partitions: c.partitions, ReplicationFactor: c.rf,
		Size: c.size, Records: c.records, Acks: c.acks, Idempotent: c.idempotent,
		Linger: c.linger, BatchMax: c.batchMax, MaxBuffered: c.buffered, Compression: c.compression,
		FetchMaxBytes: c.fetchMax, FetchMaxPartitionBytes: c.fetchPart, CreateWait: c.createWait,
		PartitionRun: c.partitionRun, ClientOpts: c.conn,
	}
	if c.serverPID > 0 {
		lc.BrokerPIDs = []int{c.serverPID}
	}
	return lc
}

func runProduce(ctx context.Context, c config, m map[string]any, log *slog.Logger) error {
	lc := c.load()
	lc.Logger = log
	lc.Rate = c.produceRate
	m["records"] = c.records
	m["size"] = c.size
	m["partitions"] = c.partitions
	m["acks"] = acksName(c.acks)
	m["idempotent"] = c.idempotent
	m["linger_ms"] = ms(c.linger)
	m["batch_max"] = c.batchMax
	m["max_buffered"] = c.buffered
	m["compression"] = c.compression
	m["partition_run"] = c.partitionRun
	r, err := loadgen.Produce(ctx, lc)
	if r != nil {
		m["topic_created"] = r.TopicCreated
		m["elapsed_s"] = round3(r.Elapsed.Seconds())
		m["acked"] = r.Records
		m["errors"] = r.Errors
		addRates(m, r)
		addUsage(m, r)
		addPercentiles(m, "produce", r.Latency)
	}
	return err
}

func runConsume(ctx context.Context, c config, m map[string]any) error {
	m["records"] = c.records
	m["fetch_max_bytes"] = c.fetchMax
	m["fetch_max_partition_bytes"] = c.fetchPart
	r, err := loadgen.Consume(ctx, c.load())
	if r != nil {
		m["consumed"] = r.Records
		m["elapsed_s"] = round3(r.Elapsed.Seconds())
		m["first_record_ms"] = ms(r.FirstRecord)
		addRates(m, r)
		addUsage(m, r)
	}
	return err
}

func runE2E(ctx context.Context, c config, m map[string]any, log *slog.Logger) error {
	lc := c.load()
	lc.Logger = log
	lc.Rate, lc.Duration = c.rate, c.duration
	m["rate"] = c.rate
	m["duration_s"] = round3(c.duration.Seconds())
	m["size"] = c.size
	m["partitions"] = c.partitions
	m["acks"] = acksName(c.acks)
	m["linger_ms"] = ms(c.linger)
	r, err := loadgen.E2E(ctx, lc)
	if r != nil {
		m["topic_created"] = r.TopicCreated
		m["records"] = r.Records
		m["achieved_rate"] = round3(r.AchievedRate)
		addUsage(m, r)
		addPercentiles(m, "e2e", r.Latency)
		addPercentiles(m, "e2e_from_schedule", r.FromSchedule)
	}
	return err
}

func runMetadata(ctx context.Context, c config, m map[string]any, log *slog.Logger) error {
	lc := c.load()
	lc.Logger = log
	m["requests"] = c.records
	m["partitions"] = c.partitions
	r, err := loadgen.Metadata(ctx, lc)
	if r != nil {
		m["topic_created"] = r.TopicCreated
		m["requests_per_s"] = round3(r.RecordsPerSec)
		addUsage(m, r)
		addPercentiles(m, "metadata", r.Latency)
	}
	return err
}

func acksName(acks int) string {
	if acks == -1 {
		return "all"
	}
	return map[int]string{0: "0", 1: "1"}[acks]
}

func addRates(m map[string]any, r *loadgen.Result) {
	m["records_per_s"] = round3(r.RecordsPerSec)
	m["MBps"] = round3(r.MBps)
}

// addUsage records the client's and the broker's usage over the run.
func addUsage(m map[string]any, r *loadgen.Result) {
	wall := r.Elapsed.Seconds()
	m["wall_s"] = round3(wall)
	m["client_cpu_s"] = round3(r.Client.CPUS)
	m["steal_s"] = round3(r.StealS)
	m["loadavg_before"] = r.LoadBefore
	if wall > 0 {
		m["client_cores"] = round3(r.Client.CPUS / wall)
	}
	if r.Bytes > 0 {
		m["client_cpu_s_per_gb"] = round3(r.Client.CPUPerGB)
	}
	b := r.Broker
	if b == nil {
		return
	}
	m["server_cpu_s"] = round3(b.CPUS)
	m["server_cpu_sys_s"] = round3(b.SysS)
	if wall > 0 {
		m["server_cores"] = round3(b.CPUS / wall)
	}
	m["server_rss_mb"] = round3(b.RSSMB)
	m["server_hwm_mb"] = round3(b.HWMMB)
	if b.RSSEarlyMB > 0 {
		m["server_rss_early_mb"] = round3(b.RSSEarlyMB)
	}
	if r.Bytes > 0 {
		m["server_cpu_s_per_gb"] = round3(b.CPUPerGB)
	}
}

// addPercentiles adds prefix_p50_ms, _p99_ms, _p999_ms and _max_ms.
func addPercentiles(m map[string]any, prefix string, p *loadgen.Percentiles) {
	if p == nil {
		return
	}
	m[prefix+"_p50_ms"] = ms(p.P50)
	m[prefix+"_p99_ms"] = ms(p.P99)
	m[prefix+"_p999_ms"] = ms(p.P999)
	m[prefix+"_max_ms"] = ms(p.Max)
}
