package main

// kafka-kill, opt-in (-kafka or KLOG_CHAOS_KAFKA=1): failover-kill's
// faults against Apache Kafka 4.4 in KRaft combined mode, three nodes
// (scripts/kafka/kafka.sh start --nodes 3, its own defaults), with the
// same producer, ledger and CHAOS line, so that klog's figures have
// Kafka's beside them. It fetches Kafka's jars on its first run and
// starts JVMs: minutes, not part of the default run.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/scripts/internal/klogproc"
)

// kafkaScript runs the reference broker (scripts/kafka/kafka.sh).
var kafkaScript = "scripts/kafka/kafka.sh"

// kafkaCluster is a running kafka.sh start --nodes 3.
type kafkaCluster struct {
	dir     string
	brokers []string
}

func kafkaSh(ctx context.Context, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, "bash", append([]string{kafkaScript}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("kafka.sh %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out), nil
}

func startKafka(ctx context.Context) (*kafkaCluster, error) {
	out, err := kafkaSh(ctx, "start", "--nodes", strconv.Itoa(clusterNodes))
	if err != nil {
		return nil, err
	}
	k := &kafkaCluster{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "KAFKA_RUN_DIR="); ok {
			k.dir = v
		}
		if v, ok := strings.CutPrefix(sc.Text(), "BROKERS="); ok {
			k.brokers = strings.Split(v, ",")
		}
	}
	if k.dir == "" || len(k.brokers) != clusterNodes {
		return nil, fmt.Errorf("kafka.sh start said %q", out)
	}
	return k, nil
}

func (k *kafkaCluster) node(ctx context.Context, op string, id int32) error {
	_, err := kafkaSh(ctx, "node", "--dir", k.dir, op, strconv.Itoa(int(id)))
	return err
}

func (k *kafkaCluster) stop() {
	kafkaSh(context.Background(), "stop", k.dir)
}

// partitions returns each partition of topic t as the cluster's metadata
// has it (asked of any live node).
func (k *kafkaCluster) partitions(ctx context.Context, adm *kadm.Client) (map[int32]kadm.PartitionDetail, error) {
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		return nil, err
	}
	d := td[topic]
	if d.Err != nil {
		return nil, d.Err
	}
	return d.Partitions, nil
}

// waitKafka waits until ok holds of the topic's partitions.
func (k *kafkaCluster) waitKafka(ctx context.Context, adm *kadm.Client, what string, ok func(map[int32]kadm.PartitionDetail) bool) (map[int32]kadm.PartitionDetail, error) {
	var last map[int32]kadm.PartitionDetail
	err := klogproc.WaitFor(ctx, func() (bool, error) {
		ps, err := k.partitions(ctx, adm)
		if err != nil {
			return false, nil
		}
		last = ps
		return ok(ps), nil
	})
	if err != nil {
		return nil, fmt.Errorf("wait until Kafka shows %s (last %+v): %w", what, last, err)
	}
	return last, nil
}

func fullISR(ps map[int32]kadm.PartitionDetail) bool {
	for _, p := range ps {
		if p.Leader < 0 || len(p.ISR) != len(p.Replicas) {
			return false
		}
	}
	return len(ps) > 0
}

// runKafkaKill is the kafka-kill scenario; it returns its CHAOS line.
func runKafkaKill(ctx context.Context, records int, partitions int32) (string, error) {
	start := time.Now()
	k, err := startKafka(ctx)
	if err != nil {
		return "", err
	}
	defer k.stop()
	if err := createReplicated(ctx, k.brokers, topic, partitions); err != nil {
		return "", err
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(k.brokers...))
	if err != nil {
		return "", err
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	if _, err := k.waitKafka(ctx, adm, "every ISR full", fullISR); err != nil {
		return "", err
	}
	r := &clusterRun{clientOpts: failoverClient}
	detail, reads, err := r.drive(ctx, k.brokers, records, partitions, func(ctx context.Context, r *clusterRun) (string, error) {
		return kafkaKills(ctx, k, adm, r)
	})
	if err != nil {
		return "", err
	}
	p := r.p
	rep := r.led.Check(reads)
	verdict := "PASS"
	if !rep.OK() || p.failed.Load() > 0 {
		verdict = "FAIL"
	}
	return fmt.Sprintf("CHAOS kafka-kill %s %s, %s (Kafka 4.4, 3 nodes; %s; %s records in flight at the faults, %d records read, %d produce errors%s, %.1fs)",
		verdict, rep, p.resume.summary(), detail, strings.Join(r.inFlight, "/"), rep.Read, p.failed.Load(), p.firstError(), time.Since(start).Seconds()), nil
}

// kafkaKills kills the leader of partition 0 -failovers times, as
// failover-kill does, each time starting it again and waiting for every
// ISR to be full.
func kafkaKills(ctx context.Context, k *kafkaCluster, adm *kadm.Client, r *clusterRun) (string, error) {
	var elected []time.Duration
	for i := range failovers {
		ps, err := k.waitKafka(ctx, adm, "partition 0 led", func(ps map[int32]kadm.PartitionDetail) bool { return ps[0].Leader >= 0 })
		if err != nil {
			return "", err
		}
		old, epoch := ps[0].Leader, ps[0].LeaderEpoch
		r.fault()
		t := time.Now()
		if err := k.node(ctx, "kill", old); err != nil {
			return "", err
		}
		r.p.resume.took()
		if _, err := k.waitKafka(ctx, adm, "partition 0 led by another node", func(ps map[int32]kadm.PartitionDetail) bool {
			return ps[0].Leader >= 0 && ps[0].Leader != old && ps[0].LeaderEpoch > epoch && !slices.Contains(ps[0].ISR, old)
		}); err != nil {
			return "", fmt.Errorf("kill %d of node %d: %w", i+1, old, err)
		}
		elected = append(elected, time.Since(t))
		if err := r.waitResumed(ctx); err != nil {
			return "", fmt.Errorf("kill %d of node %d: %w", i+1, old, err)
		}
		if err := k.node(ctx, "start", old); err != nil {
			return "", err
		}
		if _, err := k.waitKafka(ctx, adm, "every ISR full", fullISR); err != nil {
			return "", err
		}
		if err := r.produceMore(ctx); err != nil {
			return "", err
		}
	}
	p50, top := percentiles(elected)
	return fmt.Sprintf("%d kills of partition 0's leader: a new leader in the metadata after p50 %.2fs max %.2fs", failovers, p50.Seconds(), top.Seconds()), nil
}

// kafkaWanted reports whether the opt-in Kafka scenario runs: -kafka, or
// KLOG_CHAOS_KAFKA=1.
func kafkaWanted(flagSet bool) bool {
	return flagSet || os.Getenv("KLOG_CHAOS_KAFKA") == "1"
}
