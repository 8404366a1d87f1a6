// Package inspect reads the state of a running cluster over the Kafka
// protocol — groups and their lag, transactions and producers, topics and
// their offsets — and returns it as plain values. It owns what those values
// mean: how a group's members and protocol are found whichever protocol it
// runs, how lag is counted, when an open transaction is hanging.
//
// Every function takes the franz-go clients it talks through (*kgo.Client,
// *kadm.Client) and never creates a client of its own except through a
// ClientFunc it is given; it only reads, never changes the cluster, but for
// AbortTransaction (klog txn abort and the TUI's abort key) and the users'
// SCRAM credentials (SetUserPassword, DeleteUser: klog user). Per-item
// failures (one group, one partition) are carried in the returned values, so
// a caller can show what could be read beside what could not; a returned
// error means nothing useful could be read.
//
// The klog command line and the TUI both call it. It must never import
// broker/ or store/: it sees a cluster only as a Kafka client does, so it
// works against any Kafka-compatible cluster.
//
// The structs carry JSON tags so that callers can print them as they are;
// the tags are part of klog's JSON output, so a tag changes only with the
// version of the output that carries it.
package inspect

import (
	"github.com/twmb/franz-go/pkg/kgo"
)

// ClientFunc returns a new client of the cluster inspected, configured with
// the extra options. The caller of a ClientFunc closes the client.
type ClientFunc func(opts ...kgo.Opt) (*kgo.Client, error)

// TopicPartitions is some partitions of one topic, sorted.
type TopicPartitions struct {
	Topic      string  `json:"topic"`
	Partitions []int32 `json:"partitions"`
}
