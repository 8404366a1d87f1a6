package broker

// Items named more than once in one request.
//
// No request may make the node work, or answer, more for an item it names
// twice: a 1 MiB DescribeConfigs repeating one topic used to answer 77 MB.
// Each handler follows one of Kafka's two rules.
//
//   - Reject, where Kafka rejects: an item named more than once is answered
//     once, with INVALID_REQUEST, and nothing is done for it. CreateTopics,
//     CreatePartitions, DeleteTopics, AlterConfigs and
//     IncrementalAlterConfigs (ControllerApis), ListOffsets
//     (ReplicaManager.fetchOffset with ListOffsetsRequest.duplicatePartitions).
//   - Set, for the reads where Kafka has no such rule: each distinct item is
//     answered once, as if named once, as Kafka's Metadata treats its topics
//     (KafkaApis.handleTopicMetadataRequest: topics.toSet). Metadata,
//     DescribeConfigs, FindCoordinator, OffsetFetch, DescribeGroups,
//     DeleteGroups, OffsetDelete, DescribeProducers, DescribeTransactions,
//     ConsumerGroupDescribe, OffsetForLeaderEpoch. Kafka answers every
//     repetition of these; klog does not, so that the answer is bounded by
//     what exists. DescribeTopicPartitions and DescribeLogDirs take sets in
//     Kafka too, and so does AlterReplicaLogDirs (a map of partitions to
//     directories, the last named winning) but when refused.
//
// What is left is the answer for distinct items that do not exist (topics,
// partitions, groups, ids no one has used): Kafka answers each, and so does
// klog. That answer repeats the item's name and adds a fixed number of
// bytes (an error code, -1 offsets, an empty state, at most a short
// message), so the response is at most a small constant times the request:
// for 4-character names, 2.8x for Metadata v8 and 6.4x for
// DescribeTransactions (BenchmarkAmplification), and below 10x for every
// API for names of 3 characters or more (there are few shorter names). The
// request is bounded by socket.request.max.bytes and the
// queued.max.request.bytes pool, and decoding it already costs the same
// order of memory (kmsg builds a Go value per item), so klog keeps Kafka's
// answers rather than cap the item count, which Kafka does not.
//
// Produce, OffsetCommit, TxnOffsetCommit, AddPartitionsToTxn, LeaveGroup
// and ElectLeaders answer every item, repeated or not: their answer for an
// item is no larger than a few times the item itself, and the work for it
// is the work its bytes ask for.

// occurrence is how an item's key appears in one request, as seen in
// request order.
type occurrence uint8

const (
	// once: the key appears once; serve the item.
	once occurrence = iota
	// firstOfMany: the first appearance of a key that appears more than
	// once; answer it once (with INVALID_REQUEST, or served, by the rule of
	// the API).
	firstOfMany
	// repeated: a later appearance of a key already answered; skip it.
	repeated
)

// occurrences counts the keys of one request's items (add each first), then
// classifies their appearances in request order with next.
type occurrences[K comparable] map[K]int

func (o occurrences[K]) add(k K) { o[k]++ }

// next classifies the next appearance of k, which must have been added.
func (o occurrences[K]) next(k K) occurrence {
	switch n := o[k]; {
	case n == 1:
		return once
	case n > 1:
		o[k] = -1
		return firstOfMany
	default:
		return repeated
	}
}

// distinct returns items with only the first appearance of each key, in
// request order. It returns items itself, nil or not, when no key repeats.
// What it allocates grows with the distinct keys, not with the items: a
// request of a million copies of one name costs one entry.
func distinct[T any, K comparable](items []T, key func(T) K) []T {
	seen := make(map[K]struct{})
	var out []T
	for i, it := range items {
		k := key(it)
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			if out != nil {
				out = append(out, it)
			}
			continue
		}
		if out == nil {
			out = append(make([]T, 0, i), items[:i]...)
		}
	}
	if out == nil {
		return items
	}
	return out
}

// identity is the key of items that are their own key.
func identity[T comparable](v T) T { return v }

// mergeTopics folds the topics of a request that names topics with lists
// of partitions (OffsetFetch, OffsetDelete, DescribeProducers) into one
// entry per topic key, in order of first appearance, each partition (by
// partKey) once: the set of (topic, partition) the request asks about.
func mergeTopics[T, P any, K, PK comparable](topics []T, key func(*T) K, partitions func(*T) *[]P, partKey func(P) PK) []T {
	if len(topics) == 0 {
		return topics // nil (often "all topics") and empty stay apart
	}
	index := make(map[K]int, len(topics))
	var out []T
	for i := range topics {
		k := key(&topics[i])
		j, ok := index[k]
		if !ok {
			j = len(out)
			index[k] = j
			out = append(out, topics[i])
			*partitions(&out[j]) = nil
		}
		*partitions(&out[j]) = append(*partitions(&out[j]), *partitions(&topics[i])...)
	}
	for j := range out {
		p := partitions(&out[j])
		*p = distinct(*p, partKey)
	}
	return out
}
