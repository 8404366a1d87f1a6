//go:build linux

package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestUpNodesKillFencesAtOnce: klog node kill of a partition's leader in
// klog up -n 3 fences that node on the supervisor's notice, not on its
// session's expiry: with broker.session.timeout.ms at 60 s, another node
// leads the partition and an acks=all produce is acknowledged within 20 s
// (milliseconds on an idle machine), which the session alone could not
// give.
func TestUpNodesKillFencesAtOnce(t *testing.T) {
	stateDir := t.TempDir()
	p := startCluster(t, stateDir, "3", "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0",
		"-X", "broker.session.timeout.ms=60000")
	addrs := strings.Split(p.brokers, ",")
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.DefaultProduceTopic("f"),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.MetadataMinAge(100*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if resp, err := adm.CreateTopic(ctx, 1, 3, nil, "f"); err != nil || resp.Err != nil {
		t.Fatalf("create f: %v, %v", err, resp.Err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Value: []byte("before")}).FirstErr(); err != nil {
		t.Fatalf("produce before the kill: %v", err)
	}
	leader := partitionLeader(ctx, t, adm, "f")

	nodes(t, addrs[(leader+1)%3], stateDir, "kill", strconv.Itoa(int(leader)))
	// kgo retries a record in flight until it is acknowledged, whatever
	// its context: the bound is a timer.
	acked := make(chan error, 1)
	go func() { acked <- cl.ProduceSync(ctx, &kgo.Record{Value: []byte("after")}).FirstErr() }()
	select {
	case err := <-acked:
		if err != nil {
			t.Fatalf("acks=all produce after leader %d was killed: %v", leader, err)
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("acks=all produce not acknowledged 20 s after leader %d was killed, with a 60 s session", leader)
	}
	if now := partitionLeader(ctx, t, adm, "f"); now == leader {
		t.Fatalf("f-0 still led by the killed node %d", leader)
	}
}

// partitionLeader returns the leader of partition 0 of topic.
func partitionLeader(ctx context.Context, t *testing.T, adm *kadm.Client, topic string) int32 {
	t.Helper()
	td, err := adm.ListTopics(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	p, ok := td[topic].Partitions[0]
	if !ok || p.Leader < 0 {
		t.Fatalf("%s-0: %s", topic, fmt.Sprint(td[topic]))
	}
	return p.Leader
}
