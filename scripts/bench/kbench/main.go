// Command kbench is klog's side-by-side benchmark client: it measures a
// Kafka-protocol broker through a real TCP connection with franz-go and
// prints one JSON line per run. scripts/bench/run.sh drives it against klog
// and the kfake baseline and then calls its report mode.
//
// Modes:
//
//	produce  -records records of -size bytes to -partitions partitions
//	         (by default one, acks=all, idempotent, linger 5 ms, batch max
//	         1 MiB, no compression): MB/s, the broker's CPU seconds per GB
//	         and the latency of each produce to its acknowledgement.
//	consume  the same number of records from offset 0 without a group:
//	         MB/s and the broker's CPU seconds per GB.
//	e2e      -rate records/s of -size bytes for -duration with no linger
//	         (unless -linger is given), consumed in the same process:
//	         produce-to-consume latency p50/p99/p99.9/max, from the moment
//	         each record was handed to the producer and from the moment the
//	         schedule said it was due.
//	metadata -records Metadata requests for the topic, one after another:
//	         their latency p50/p99/p99.9.
//	startup  exec the broker command given after the flags, then time TCP
//	         accept, the first acknowledged acks=all produce (including topic
//	         auto-creation), idle RSS after -idle, and SIGTERM to exit.
//	report   read JSON lines (files given after the flags) and print a table
//	         of min/median/max per broker and the paired ratios of -a
//	         against each broker of -b (goals against the first); with
//	         -ratios X/Y,... the columns of those brokers and the paired
//	         ratio of each X against its Y instead.
//	devca    write a dev CA's files into -dir (the devca package's, as
//	         klog up --secure makes them): node-0's keystore for a TLS
//	         listener, the CA and truststore for the client.
//
// The measuring modes connect as -X key=value (repeatable) and
// -command-config FILE say, with klog's client properties (the kafkaconn
// package, as klog -X and --command-config): TLS, mTLS, SASL. Their line
// records security_protocol, sasl_mechanism and the TLS version and cipher
// suite the broker agreed to (tls).
//
// Examples:
//
//	kbench -mode produce -brokers 127.0.0.1:9092 -server-pid 1234 -label klog -pair 1
//	kbench -mode consume -brokers 127.0.0.1:9092 -server-pid 1234 -label klog -pair 1
//	kbench -mode e2e -brokers 127.0.0.1:9092 -rate 10000 -duration 15s -label klog
//	kbench -mode startup -brokers 127.0.0.1:9092 -- klog up --data-dir d --listen 127.0.0.1:9092
//	kbench -mode report -a klog -b kfake,kafka .bench/results-*.jsonl
//	kbench -mode devca -dir /tmp/ca
//	kbench -mode produce -brokers 127.0.0.1:9093 -X security.protocol=SSL -X ssl.ca.location=/tmp/ca/ca.pem
//	kbench -mode report -ratios klogtls/klog,kafkatls/kafka,klogtls/kafkatls .bench/results-*.jsonl
//
// The runs are loadgen's, as klog bench makes them. MB means 10^6 bytes of
// record values; keys, headers and protocol overhead are not counted.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

type config struct {
	mode         string
	label        string
	pair         int
	position     int
	pinned       bool
	commit       string
	brokers      []string
	topic        string
	rf           int
	partitions   int
	acks         int
	idempotent   bool
	compression  string
	produceRate  int
	partitionRun int
	records      int
	size         int
	linger       time.Duration
	batchMax     int
	buffered     int
	fetchMax     int
	fetchPart    int
	serverPID    int
	idle         time.Duration
	timeout      time.Duration
	a, b         string
	ratios       string
	goals        bool
	args         []string
	createWait   time.Duration
	rate         int
	duration     time.Duration
	brokerLog    string
	setupMS      float64
	grace        time.Duration
	// props (-X) and commandConfig (-command-config) are how to connect:
	// TLS, SASL; conn the franz-go options they make.
	props         properties
	commandConfig string
	conn          []kgo.Opt
	dir           string
}

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	os.Exit(run(os.Args[1:], os.Stdout, log))
}

func run(argv []string, stdout io.Writer, log *slog.Logger) int {
	c, brokers, err := parseFlags(argv)
	if err != nil {
		return 2
	}

	if c.mode == "report" {
		if err := runReport(c, stdout); err != nil {
			log.Error("report", "err", err)
			return 1
		}
		return 0
	}

	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	m := map[string]any{
		"tool": "kbench", "mode": c.mode, "label": c.label, "pair": c.pair, "position": c.position,
		"pinned": c.pinned, "brokers": brokers, "topic": c.topic, "replication_factor": c.rf,
	}
	if c.commit != "" {
		m["commit"] = c.commit
	}
	var seen *tlsSeen
	if c.mode != "devca" {
		seen, err = connect(&c, m, log)
	}
	switch {
	case err != nil:
	case c.mode == "devca":
		err = runDevCA(c, m)
	default:
		err = runMode(ctx, c, m, log)
	}
	seen.note(m)
	if err != nil {
		m["error"] = err.Error()
	}
	if werr := emit(stdout, m); werr != nil {
		log.Error("write result", "err", werr)
		return 1
	}
	if err != nil {
		log.Error(c.mode, "label", c.label, "err", err)
		return 1
	}
	return 0
}

// emit writes m as one JSON line, adding the host facts every line carries.
func emit(w io.Writer, m map[string]any) error {
	m["ts"] = time.Now().UTC().Format(time.RFC3339)
	m["go"] = runtime.Version()
	m["ncpu"] = runtime.NumCPU()
	m["gomaxprocs"] = runtime.GOMAXPROCS(0)
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("encode result: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// round3 rounds to three decimals, enough for every figure we print.
func round3(v float64) float64 {
	if v < 0 {
		return -round3(-v)
	}
	return float64(int64(v*1000+0.5)) / 1000
}

func ms(d time.Duration) float64 { return round3(float64(d) / float64(time.Millisecond)) }

// runMode makes the measuring run of c.mode.
func runMode(ctx context.Context, c config, m map[string]any, log *slog.Logger) error {
	switch c.mode {
	case "produce":
		return runProduce(ctx, c, m, log)
	case "consume":
		return runConsume(ctx, c, m)
	case "e2e":
		return runE2E(ctx, c, m, log)
	case "metadata":
		return runMetadata(ctx, c, m, log)
	case "startup":
		return runStartup(ctx, c, m, log)
	}
	return fmt.Errorf("%w: %q", errUnknownMode, c.mode)
}

// parseFlags reads the command line into a config; brokers is -brokers
// as given.
func parseFlags(argv []string) (c config, brokers string, err error) {
	fs := flag.NewFlagSet("kbench", flag.ContinueOnError)
	fs.StringVar(&c.mode, "mode", "produce", "produce | consume | e2e | metadata | startup | report | devca")
	fs.StringVar(&c.label, "label", "", "broker label copied into the JSON line (klog, kfake)")
	fs.IntVar(&c.pair, "pair", 0, "pair number copied into the JSON line")
	fs.IntVar(&c.position, "position", 0, "position of this run inside its pair (1 or 2)")
	fs.BoolVar(&c.pinned, "pinned", false, "copied into the JSON line: broker and client pinned to separate CPUs")
	fs.StringVar(&c.commit, "commit", "", "klog commit under test, copied into the JSON line")
	fs.StringVar(&brokers, "brokers", "127.0.0.1:9092", "bootstrap address(es), comma separated")
	fs.StringVar(&c.topic, "topic", "bench", "topic to produce to and consume from")
	fs.IntVar(&c.rf, "replication-factor", 1, "produce, e2e: the topic's replication factor")
	fs.IntVar(&c.partitions, "partitions", 1, "produce, e2e: the topic's partitions, when the run creates it")
	fs.IntVar(&c.acks, "acks", -1, "produce, e2e: -1 (all), 0 or 1")
	fs.BoolVar(&c.idempotent, "idempotent", true, "produce, e2e: idempotent producer (needs -acks -1)")
	fs.StringVar(&c.compression, "compression", "none", "produce, e2e: none, gzip, snappy, lz4 or zstd")
	fs.IntVar(&c.partitionRun, "partition-run", 0, "produce: records in a row to each partition in turn (1: round robin; 0: the producer's sticky batches)")
	fs.IntVar(&c.produceRate, "produce-rate", 0, "produce: records per second at most (0: as fast as it can)")
	fs.IntVar(&c.records, "records", 1_000_000, "records to produce / consume (consume 0: all the topic holds); metadata: requests")
	fs.IntVar(&c.size, "size", 1024, "record value size in bytes (no key)")
	fs.DurationVar(&c.linger, "linger", 5*time.Millisecond, "producer linger")
	fs.IntVar(&c.batchMax, "batch-max", 1<<20, "producer max record-batch bytes")
	fs.IntVar(&c.buffered, "max-buffered", 50_000, "producer max buffered records")
	fs.IntVar(&c.fetchMax, "fetch-max-bytes", 50<<20, "consumer fetch max bytes")
	fs.IntVar(&c.fetchPart, "fetch-max-partition-bytes", 10<<20, "consumer fetch max partition bytes")
	fs.IntVar(&c.serverPID, "server-pid", 0, "broker PID, to report its CPU seconds and RSS")
	fs.DurationVar(&c.idle, "idle", time.Second, "startup: idle time before sampling RSS")
	fs.DurationVar(&c.timeout, "timeout", 5*time.Minute, "overall deadline of one run")
	fs.DurationVar(&c.createWait, "create-wait", 10*time.Second, "produce: how long to wait for the topic to have a leader")
	fs.StringVar(&c.brokerLog, "broker-log", "", "startup: file for the broker's stdout and stderr (default: discarded)")
	fs.IntVar(&c.rate, "rate", 10_000, "e2e: records per second")
	fs.DurationVar(&c.duration, "duration", 15*time.Second, "e2e: how long to produce")
	fs.StringVar(&c.a, "a", "klog", "report: label of the broker under test")
	fs.StringVar(&c.b, "b", "kfake", "report: labels of the peers, comma separated; the goals are judged against the first")
	fs.StringVar(&c.ratios, "ratios", "", "report: X/Y,...: the columns of those brokers and the paired ratio of each X against its Y, instead of -a against -b (no goals)")
	fs.BoolVar(&c.goals, "goals", true, "report: judge the performance study's goals against the first peer (-goals=false for runs they do not apply to)")
	fs.Float64Var(&c.setupMS, "setup-ms", 0, "startup: copied into the JSON line as setup_ms: the time of a setup step run before exec (Kafka's format), not part of the startup figures")
	fs.DurationVar(&c.grace, "shutdown-grace", 10*time.Second, "startup: how long the broker may take to exit after SIGTERM")
	fs.Var(&c.props, "X", "client property key=value, as klog's -X (security.protocol, ssl.truststore.location, sasl.mechanism, sasl.jaas.config...); repeatable")
	fs.StringVar(&c.commandConfig, "command-config", "", "client config file (Java properties), as klog's --command-config")
	fs.StringVar(&c.dir, "dir", "", "devca: the directory to write the dev CA's files into")
	if err := fs.Parse(argv); err != nil {
		return c, "", err
	}
	c.brokers = strings.Split(brokers, ",")
	if c.mode == "e2e" {
		lingerSet := false
		fs.Visit(func(f *flag.Flag) { lingerSet = lingerSet || f.Name == "linger" })
		if !lingerSet {
			c.linger = 0 // one record per batch: the latency case
		}
	}
	c.args = fs.Args()
	return c, brokers, nil
}
