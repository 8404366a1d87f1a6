package main

import (
	"strings"
	"testing"

	"github.com/klogdev/klog/internal/fakekafka"
)

// What klog's commands meet on a real Kafka cluster and not on klog's own
// broker, played by internal/fakekafka.

// TestProduceMissingTopicOnKafka: on a Kafka cluster that auto-creates
// topics, klog produce does not ask it to create a missing one; --create
// creates it with CreateTopics and waits until the topic is there.
func TestProduceMissingTopicOnKafka(t *testing.T) {
	c, addr := fakekafka.Start(t)
	fakekafka.AutoCreateAsync(t, c, 1)
	r := klogRun(t, addr, "x\n", "produce", "later")
	if r.code != 1 || !strings.Contains(r.stderr, `topic "later": topic does not exist`) {
		t.Fatalf("produce: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := klogRun(t, addr, "", "consume", "later", "-e"); r.code != 1 {
		t.Fatalf("the topic was created: consume exit %d, stdout %q", r.code, r.stdout)
	}
	r = klogRun(t, addr, "x\n", "produce", "later", "--create", "-p", "0")
	if r.code != 0 || !strings.Contains(r.stderr, "later[0]@0") {
		t.Fatalf("produce --create: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := mustRun(t, addr, "", "consume", "later", "-e"); r.stdout != "x\n" {
		t.Errorf("the created topic holds %q", r.stdout)
	}
}

// TestGroupCommandsWaitForCoordinator: on a fresh Kafka cluster the first
// lookups of a group coordinator answer COORDINATOR_NOT_AVAILABLE while
// __consumer_offsets is created; klog consume -g, group describe and group
// delete wait for it.
func TestGroupCommandsWaitForCoordinator(t *testing.T) {
	c, addr := fakekafka.Start(t)
	createTopic(t, addr, "events", 1)
	mustRun(t, addr, "a\nb\n", "produce", "events", "-q")

	fakekafka.CoordinatorsNotYet(c, 3)
	if r := mustRun(t, addr, "", "consume", "events", "-g", "g1", "-e"); r.stdout != "a\nb\n" {
		t.Errorf("consume -g printed %q", r.stdout)
	}

	fakekafka.CoordinatorsNotYet(c, 3)
	r := klogRun(t, addr, "", "group", "describe", "nope")
	if r.code != 1 || !strings.Contains(r.stderr, "group does not exist") {
		t.Errorf("describe a missing group: exit %d, stderr %q", r.code, r.stderr)
	}

	fakekafka.CoordinatorsNotYet(c, 3)
	r = klogRun(t, addr, "", "group", "delete", "g1", "--yes")
	if r.code != 0 || !strings.Contains(r.stdout, "DELETED") {
		t.Errorf("group delete: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

// TestTxnDescribeWaitsForCoordinator: the same for __transaction_state:
// describing an unknown transactional id says it does not exist.
func TestTxnDescribeWaitsForCoordinator(t *testing.T) {
	c, addr := fakekafka.Start(t)
	fakekafka.CoordinatorsNotYet(c, 3)
	r := klogRun(t, addr, "", "txn", "describe", "nope")
	if r.code != 1 || !strings.Contains(r.stderr, "TRANSACTIONAL_ID_NOT_FOUND") {
		t.Errorf("describe a missing id: exit %d, stderr %q", r.code, r.stderr)
	}
}
