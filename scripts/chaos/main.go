// Command chaos is klog's fault test with a checker: it runs klog up as a
// real process, faults it with signals while an idempotent acks=all
// producer writes numbered records, then reads every partition back and
// counts what was acknowledged, lost, duplicated and reordered
// (scripts/internal/ledger).
//
//	go run ./scripts/chaos -klog BIN [-scenario kill,pause,term,...] [-records N] [-failovers N] [-kafka]
//
// Without -scenario every scenario runs. Scenarios on one node, each on a
// fresh node and data directory:
//   - kill: SIGKILL the node three times while records are in flight, each
//     time restarting it on the same data directory and port (recovery);
//   - pause: SIGSTOP the node twice for -pause (a hung node; the
//     producer's requests wait or time out and are retried), then SIGCONT;
//   - term: SIGTERM and restart it twice (a clean restart);
//   - dup-kill-durable: kill 20 times under klog up --durable, the topic's
//     segments 4 KiB (dup.go; set up by oneNodeSetups).
//
// Scenarios on a local cluster, klog up -n 3 faulted with klog node, each
// in its own file and registered in clusterScenarios: see cluster.go.
//
// With -kafka (or KLOG_CHAOS_KAFKA=1) kafka-kill runs last: failover-kill's
// faults against Kafka 4.4's three nodes (kafka.go).
//
// One line per scenario, with the time from each fault to the first
// acknowledged produce after it on every partition (p50, max):
//
//	CHAOS kill PASS acked: 50191, lost: 0, duplicated: 0, reordered: 0, resumed p50 0.41s max 0.52s (3 faults) (3 faults with 4985/5000/4998 records in flight, ...)
//
// Exit 1 if any scenario lost, duplicated, reordered or moved an
// acknowledged record, or failed to run; 2 on a usage error.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/klogdev/klog/scripts/internal/klogproc"
)

func main() { os.Exit(run()) }

func run() int {
	bin := flag.String("klog", "", "the klog binary (required)")
	scenarios := flag.String("scenario", strings.Join(scenarioNames(), ","), "comma-separated scenarios: "+strings.Join(scenarioNames(), ", "))
	records := flag.Int("records", 200000, "records to have acknowledged in each scenario on one node")
	clusterRecords := flag.Int("cluster-records", 25000, "records to have acknowledged in each scenario on a cluster")
	partitions := flag.Int("partitions", 3, "partitions of the topic")
	pause := flag.Duration("pause", 2*time.Second, "how long the pause scenario keeps the node stopped")
	timeout := flag.Duration("timeout", 120*time.Second, "bound on each scenario")
	flag.IntVar(&failovers, "failovers", failovers, "faults of a leader in each failover-* scenario and kafka-kill")
	withKafka := flag.Bool("kafka", false, "also run kafka-kill against Kafka 4.4 (scripts/kafka/kafka.sh; also KLOG_CHAOS_KAFKA=1)")
	flag.StringVar(&kafkaScript, "kafka-script", kafkaScript, "the reference broker's script, for -kafka")
	flag.Parse()
	if *bin == "" || flag.NArg() > 0 || *records < 100 || *clusterRecords < 100 || *partitions < 1 || failovers < 1 {
		fmt.Fprintln(os.Stderr, "usage: chaos -klog BIN [-scenario NAME,...] [-records N>=100] [-cluster-records N>=100] [-partitions N] [-pause D] [-timeout D] [-failovers N] [-kafka]")
		return 2
	}
	names := strings.Split(*scenarios, ",")
	if kafkaWanted(*withKafka) && !slices.Contains(names, "kafka-kill") {
		names = append(names, "kafka-kill")
	}
	for _, name := range names {
		if _, ok := faults[name]; !ok && clusterScenarios[name] == nil && oneNodeSetups[name] == nil && name != "kafka-kill" {
			fmt.Fprintf(os.Stderr, "chaos: unknown scenario %q (%s)\n", name, strings.Join(scenarioNames(), ", "))
			return 2
		}
	}
	failed := false
	for _, name := range names {
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		var line string
		var err error
		if name == "kafka-kill" {
			line, err = runKafkaKill(ctx, *clusterRecords, int32(*partitions))
		} else if f, ok := faults[name]; ok || oneNodeSetups[name] != nil {
			s := scenario{name: name, bin: *bin, fault: f, records: *records, partitions: int32(*partitions), pause: *pause}
			if setup := oneNodeSetups[name]; setup != nil {
				setup(&s)
			}
			line, err = s.run(ctx)
		} else {
			line, err = runCluster(ctx, name, *bin, clusterScenarios[name], *clusterRecords, int32(*partitions))
		}
		cancel()
		if err != nil {
			fmt.Printf("CHAOS %s FAIL %v\n", name, err)
			failed = true
			continue
		}
		fmt.Println(line)
		if strings.Contains(line, " FAIL ") {
			failed = true
		}
	}
	if failed {
		return 1
	}
	return 0
}

// fault is what a scenario does to the node, once; it returns when the
// node serves again.
type fault func(ctx context.Context, n *klogproc.Node, s *scenario) error

var faults = map[string]fault{
	"kill": func(ctx context.Context, n *klogproc.Node, _ *scenario) error {
		return n.Restart(ctx, true, n.Opts)
	},
	"pause": func(ctx context.Context, n *klogproc.Node, s *scenario) error {
		if err := n.Pause(); err != nil {
			return err
		}
		// The pause is the fault itself: the node is hung for this long.
		t := time.NewTimer(s.pause)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		return n.Resume()
	},
	"term": func(ctx context.Context, n *klogproc.Node, _ *scenario) error {
		return n.Restart(ctx, false, n.Opts)
	},
}

// clusterScenarios are the scenarios on a local cluster (klog up -n 3),
// each in its own file and registered here with one line.
var clusterScenarios = map[string]clusterScenario{
	"leader-kill":      leaderKill,                                        // cluster.go, test 1 of issue 11
	"min-isr":          notEnoughReplicas,                                 // cluster.go, test 3
	"rolling-restart":  rollingRestart,                                    // cluster.go, test 5
	"controller-kill":  controllerKill,                                    // cluster.go, test 6
	"coord-failover":   coordFailover,                                     // coordinator.go, test 7
	"isolated-leader":  isolatedLeader,                                    // isolation.go, test 2
	"truncation":       truncation,                                        // isolation.go, test 4
	"dup-kill":         dupKill,                                           // dup.go, issue 26
	"leader-tail-cut":  leaderTailCut,                                     // tailcut.go, issue 26
	"failover-kill":    failoverScenario(failoverFaults["failover-kill"]), // failover.go
	"failover-stop":    failoverScenario(failoverFaults["failover-stop"]),
	"failover-isolate": failoverScenario(failoverFaults["failover-isolate"]),
}

// scenarioNames is every scenario: those on one node, then those on a
// cluster in name order.
func scenarioNames() []string {
	names := []string{"kill", "pause", "term"}
	for name := range oneNodeSetups {
		names = append(names, name)
	}
	sort.Strings(names[3:])
	var cluster []string
	for name := range clusterScenarios {
		cluster = append(cluster, name)
	}
	sort.Strings(cluster)
	return append(names, cluster...)
}

// faultsPerScenario is how many times each scenario faults the node.
var faultsPerScenario = map[string]int{"kill": 3, "pause": 2, "term": 2, "dup-kill-durable": dupKills}
