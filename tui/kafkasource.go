package tui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/inspect"
	"github.com/klogdev/klog/nodeapi"
)

// KafkaSource is the Source of a cluster read over the Kafka protocol
// (through package inspect) and, where it has one, a klog node's admin
// API. It works against any Kafka-compatible cluster; only the admin API
// screens need klog.
type KafkaSource struct {
	cl        *kgo.Client
	adm       *kadm.Client
	newClient inspect.ClientFunc
	admins    []*nodeapi.Client
	noAdmin   error
	nodes     nodes
}

// NewKafkaSource returns a Source reading through cl, with newClient for
// the short-lived clients that count lag (inspect.GroupOffsets) and ask
// each node alone, and the admin API of each node in admins. With no
// admins, noAdmin says why; the admin API screens show it. Close closes
// the clients it made.
func NewKafkaSource(cl *kgo.Client, newClient inspect.ClientFunc, admins []*nodeapi.Client, noAdmin error) *KafkaSource {
	return &KafkaSource{cl: cl, adm: kadm.NewClient(cl), newClient: newClient, admins: admins, noAdmin: noAdmin}
}

// noAdminErr is the error of an admin API method without admin API: it
// wraps ErrNoAdminAPI, with why when known.
func (s *KafkaSource) noAdminErr() error {
	if s.noAdmin != nil {
		return fmt.Errorf("%w: %v", ErrNoAdminAPI, s.noAdmin)
	}
	return ErrNoAdminAPI
}

// Nodes implements Source: the nodes that answer.
func (s *KafkaSource) Nodes(ctx context.Context) ([]NodeState, error) {
	if len(s.admins) == 0 {
		return nil, ErrNoAdminAPI
	}
	states, errs := eachAdmin(ctx, s.admins, func(ctx context.Context, c *nodeapi.Client) (NodeState, error) {
		cl, err := c.Cluster(ctx)
		if err != nil {
			return NodeState{}, err
		}
		st := NodeState{NodeID: cl.NodeID, Raft: cl.Raft}
		if tp, err := c.Throughput(ctx); err == nil {
			st.Throughput = tp
		}
		return st, nil
	})
	var out []NodeState
	for i, st := range states {
		if errs[i] == nil {
			out = append(out, st)
		}
	}
	return out, nil
}

// eachAdmin calls fn on every node's admin API at once, each call
// bounded by askTimeout (a stopped node would hold it longer), and
// returns what each returned, in the order of admins.
func eachAdmin[T any](ctx context.Context, admins []*nodeapi.Client, fn func(context.Context, *nodeapi.Client) (T, error)) ([]T, []error) {
	out, errs := make([]T, len(admins)), make([]error, len(admins))
	var wg sync.WaitGroup
	for i, c := range admins {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(ctx, askTimeout)
			defer cancel()
			out[i], errs[i] = fn(ctx, c)
		})
	}
	wg.Wait()
	return out, errs
}

// Topics implements Source.
func (s *KafkaSource) Topics(ctx context.Context) ([]inspect.TopicListing, error) {
	return inspect.ListTopics(ctx, s.adm, true)
}

// Topic implements Source.
func (s *KafkaSource) Topic(ctx context.Context, name string) (TopicDetail, error) {
	// kadm answers from the client's cached metadata while it is younger
	// than kgo.MetadataMinAge (5 s): a partition would keep the leader
	// it had before a failover.
	s.cl.PurgeTopicsFromClient(name)
	details, err := inspect.LookupTopics(ctx, s.adm, []string{name})
	if err != nil {
		return TopicDetail{}, err
	}
	d := details[name]
	// Offsets a leader cannot give (it is down, the partition fails
	// over) are missing from its partitions, with why; the others stand.
	offsets, offsetsErr := inspect.ListOffsets(ctx, s.adm, []string{name}, nil)
	td := TopicDetail{Name: name, Internal: d.IsInternal, ReplicationFactor: d.Partitions.NumReplicas()}
	for _, p := range d.Partitions.Sorted() {
		tp := TopicPartition{
			Partition:        p.Partition,
			Leader:           p.Leader,
			LeaderEpoch:      p.LeaderEpoch,
			Replicas:         p.Replicas,
			ISR:              p.ISR,
			OfflineReplicas:  p.OfflineReplicas,
			LogStartOffset:   -1,
			LastStableOffset: -1,
			HighWatermark:    -1,
		}
		if p.Err != nil {
			tp.Error = p.Err.Error()
		}
		if o, err := offsets.Lookup(name, p.Partition); err != nil && offsetsErr != nil {
			tp.Error = offsetsErr.Error()
		} else if err != nil {
			tp.Error = err.Error()
		} else {
			tp.LogStartOffset, tp.LastStableOffset, tp.HighWatermark = o.LogStart, o.LastStableOffset, o.HighWatermark
		}
		td.Partitions = append(td.Partitions, tp)
	}
	return td, nil
}

// Groups implements Source.
func (s *KafkaSource) Groups(ctx context.Context) ([]inspect.GroupListing, error) {
	return inspect.ListGroups(ctx, s.cl, s.adm)
}

// Users implements Source.
func (s *KafkaSource) Users(ctx context.Context) ([]inspect.User, error) {
	return inspect.ListUsers(ctx, s.adm)
}

// ACLs implements Source.
func (s *KafkaSource) ACLs(ctx context.Context) ([]inspect.ACL, error) {
	return inspect.ListACLs(ctx, s.adm, inspect.ACLSpec{})
}

// Quotas implements Source.
func (s *KafkaSource) Quotas(ctx context.Context) ([]inspect.ClientQuota, error) {
	return inspect.ListClientQuotas(ctx, s.adm, nil, false)
}

// Group implements Source.
func (s *KafkaSource) Group(ctx context.Context, name string) (inspect.GroupDescription, error) {
	infos, err := inspect.DescribeGroups(ctx, s.cl, s.adm, []string{name})
	if err != nil {
		return inspect.GroupDescription{}, err
	}
	d := inspect.GroupOffsets(ctx, s.adm, s.newClient, infos[name])
	// The members' principals, where the admin API tells them; without
	// it the column stays empty.
	if principals, _ := inspect.GroupPrincipals(ctx, s.admins, name); principals != nil {
		for i := range d.Members {
			d.Members[i].Principal = principals[d.Members[i].MemberID]
		}
	}
	return d, nil
}

// Transactions implements Source.
func (s *KafkaSource) Transactions(ctx context.Context) ([]inspect.Transaction, error) {
	ids, listErr := inspect.ListTransactionIDs(ctx, s.adm)
	if ids == nil {
		return nil, listErr
	}
	described, err := inspect.DescribeTransactions(ctx, s.adm, ids)
	if err != nil {
		return nil, err
	}
	// Who got each producer id, where the admin API tells it.
	principals, _ := inspect.TransactionPrincipals(ctx, s.admins)
	txns := []inspect.Transaction{}
	for _, t := range described {
		if errors.Is(t.Err, kerr.TransactionalIDNotFound) {
			continue // gone since the listing
		}
		t.Principal = principals[t.TransactionalID]
		txns = append(txns, t)
	}
	return txns, listErr
}

// Cleaner implements Source: every node's GET /v1/cleaner.
func (s *KafkaSource) Cleaner(ctx context.Context) ([]NodeCleaner, error) {
	return everyNode(ctx, s, func(ctx context.Context, c *nodeapi.Client) (nodeapi.Cleaner, error) { return c.Cleaner(ctx) },
		func(addr string, v nodeapi.Cleaner, err string) NodeCleaner {
			return NodeCleaner{Addr: addr, Cleaner: v, Error: err}
		})
}

// Telemetry implements Source: every node's GET /v1/telemetry.
func (s *KafkaSource) Telemetry(ctx context.Context) ([]NodeTelemetry, error) {
	return everyNode(ctx, s, func(ctx context.Context, c *nodeapi.Client) (nodeapi.Telemetry, error) { return c.Telemetry(ctx) },
		func(addr string, v nodeapi.Telemetry, err string) NodeTelemetry {
			return NodeTelemetry{Addr: addr, Telemetry: v, Error: err}
		})
}

// everyNode asks every node's admin API with ask (eachAdmin) and makes
// each node's answer with node, its error's text "" when it answered;
// ErrNoAdminAPI when no node did.
func everyNode[T, N any](ctx context.Context, s *KafkaSource, ask func(context.Context, *nodeapi.Client) (T, error), node func(addr string, v T, err string) N) ([]N, error) {
	if len(s.admins) == 0 {
		return nil, s.noAdminErr()
	}
	vals, errs := eachAdmin(ctx, s.admins, ask)
	out := make([]N, 0, len(s.admins))
	failed, first := 0, ""
	for i, c := range s.admins {
		text := ""
		if errs[i] != nil {
			text = errs[i].Error()
			if failed == 0 {
				first = text
			}
			failed++
		}
		out = append(out, node(c.Addr(), vals[i], text))
	}
	if failed == len(out) {
		return out, fmt.Errorf("%w: no node answered: %s", ErrNoAdminAPI, first)
	}
	return out, nil
}

// leaderAdmin finds the node holding topic/partition's leader replica
// through the admin API, else the first node with a replica.
func (s *KafkaSource) leaderAdmin(ctx context.Context, topic string, partition int32) (*nodeapi.Client, nodeapi.Partition, error) {
	if len(s.admins) == 0 {
		return nil, nodeapi.Partition{}, s.noAdminErr()
	}
	var (
		first    *nodeapi.Client
		firstP   nodeapi.Partition
		firstErr error
	)
	parts, errs := eachAdmin(ctx, s.admins, func(ctx context.Context, c *nodeapi.Client) (nodeapi.Partition, error) {
		return c.Partition(ctx, topic, partition)
	})
	for i, c := range s.admins {
		p, err := parts[i], errs[i]
		switch {
		case err == nil && p.Role == "leader":
			return c, p, nil
		case err == nil && first == nil:
			first, firstP = c, p
		case err != nil && !nodeapi.IsNotFound(err) && firstErr == nil:
			firstErr = err
		}
	}
	switch {
	case first != nil:
		return first, firstP, nil
	case firstErr != nil:
		return nil, nodeapi.Partition{}, firstErr
	}
	return nil, nodeapi.Partition{}, fmt.Errorf("no node has a replica of %s/%d", topic, partition)
}

// Partition implements Source.
func (s *KafkaSource) Partition(ctx context.Context, topic string, partition int32) (PartitionDetail, error) {
	td, err := s.Topic(ctx, topic)
	if err != nil {
		return PartitionDetail{}, err
	}
	i := slices.IndexFunc(td.Partitions, func(p TopicPartition) bool { return p.Partition == partition })
	if i < 0 {
		return PartitionDetail{}, fmt.Errorf("topic %s has no partition %d", topic, partition)
	}
	d := PartitionDetail{Topic: topic, Kafka: td.Partitions[i]}
	// The events are read meanwhile: a node that does not answer holds
	// each read for askTimeout.
	type events struct {
		evs []nodeapi.Event
		err error
	}
	evc := make(chan events, 1)
	go func() {
		evs, err := s.Events(ctx)
		evc <- events{evs, err}
	}()
	if _, p, err := s.leaderAdmin(ctx, topic, partition); err != nil {
		d.AdminErr = err.Error()
		return d, nil
	} else if p.Role == "leader" {
		d.Leader = &p
	} else {
		d.AdminErr = "no node answered as its leader"
	}
	if ev := <-evc; ev.err == nil {
		evs := ev.evs
		for _, e := range evs {
			switch e.Kind {
			case nodeapi.EventISRShrink, nodeapi.EventISRExpand, nodeapi.EventLeaderChange:
				if e.Topic == topic && e.Partition == partition && (e.Kind != nodeapi.EventLeaderChange || e.Detail["role"] == "leader") {
					d.Timeline = append(d.Timeline, e)
				}
			}
		}
	}
	return d, nil
}

// Tail implements Source.
func (s *KafkaSource) Tail(ctx context.Context, topic string, n int) ([]inspect.TailRecord, error) {
	return inspect.Tail(ctx, s.adm, s.newClient, topic, n)
}

// Configs implements Source.
func (s *KafkaSource) Configs(ctx context.Context, topic string, broker int32) ([]inspect.ConfigDescription, error) {
	return inspect.Configs(ctx, s.adm, topic, broker)
}

// TxnPartitions implements Source.
func (s *KafkaSource) TxnPartitions(ctx context.Context, producerID int64, parts []inspect.TopicPartitions) ([]TxnPartition, error) {
	set := make(kadm.TopicsSet)
	var topics []string
	for _, tp := range parts {
		set.Add(tp.Topic, tp.Partitions...)
		topics = append(topics, tp.Topic)
	}
	if len(set) == 0 {
		return []TxnPartition{}, nil
	}
	producers, err := inspect.DescribeProducers(ctx, s.adm, set)
	if err != nil {
		return nil, err
	}
	offs, err := inspect.ListOffsets(ctx, s.adm, topics, nil)
	if err != nil {
		return nil, err
	}
	out := make([]TxnPartition, 0, len(producers))
	for _, pp := range producers {
		tp := TxnPartition{Topic: pp.Topic, Partition: pp.Partition, StartOffset: -1, LastStableOffset: -1, HighWatermark: -1, LastSequence: -1, Error: pp.Error}
		for _, p := range pp.Producers {
			if p.ProducerID == producerID {
				tp.StartOffset, tp.LastSequence = p.CurrentTxnStartOffset, p.LastSequence
			}
		}
		if o, err := offs.Lookup(pp.Topic, pp.Partition); err == nil {
			tp.LastStableOffset, tp.HighWatermark = o.LastStableOffset, o.HighWatermark
		} else if tp.Error == "" {
			tp.Error = err.Error()
		}
		out = append(out, tp)
	}
	return out, nil
}

// Hanging implements Source.
func (s *KafkaSource) Hanging(ctx context.Context, maxAge time.Duration) ([]inspect.HangingTransaction, error) {
	h, err := inspect.HangingTransactions(ctx, s.adm, nil, maxAge, time.Now())
	if err != nil {
		return nil, err
	}
	return h.Transactions, nil
}

// AbortTransaction implements Source.
func (s *KafkaSource) AbortTransaction(ctx context.Context, t inspect.HangingTransaction) error {
	return inspect.AbortTransaction(ctx, s.adm, t.Topic, t.Partition, inspect.Producer{
		ProducerID: t.ProducerID, ProducerEpoch: t.ProducerEpoch, CoordinatorEpoch: t.CoordinatorEpoch, CurrentTxnStartOffset: t.StartOffset,
	})
}

// Segments implements Source.
func (s *KafkaSource) Segments(ctx context.Context, topic string, partition int32) (PartitionSegments, error) {
	c, p, err := s.leaderAdmin(ctx, topic, partition)
	if err != nil {
		return PartitionSegments{}, err
	}
	segs, err := c.Segments(ctx, topic, partition)
	if err != nil {
		return PartitionSegments{}, err
	}
	return PartitionSegments{Node: segs.NodeID, Partition: p, Segments: segs}, nil
}

// Batch implements Source.
func (s *KafkaSource) Batch(ctx context.Context, topic string, partition int32, offset int64) (nodeapi.Batch, error) {
	c, _, err := s.leaderAdmin(ctx, topic, partition)
	if err != nil {
		return nodeapi.Batch{}, err
	}
	return c.Batch(ctx, topic, partition, offset)
}

// Index implements Source.
func (s *KafkaSource) Index(ctx context.Context, topic string, partition int32, base int64, kind string) (nodeapi.Index, error) {
	c, _, err := s.leaderAdmin(ctx, topic, partition)
	if err != nil {
		return nodeapi.Index{}, err
	}
	return c.Index(ctx, topic, partition, base, kind, 0, 0)
}

// maxEvents is how many of each node's latest events the events screen
// reads.
const maxEvents = 200

// Events implements Source. A node that does not answer is left out,
// unless none does.
func (s *KafkaSource) Events(ctx context.Context) ([]nodeapi.Event, error) {
	if len(s.admins) == 0 {
		return nil, s.noAdminErr()
	}
	heads, errs := eachAdmin(ctx, s.admins, func(ctx context.Context, c *nodeapi.Client) (nodeapi.Events, error) {
		head, err := c.Events(ctx, nodeapi.EventsQuery{Limit: 1})
		if err == nil && head.LastSeq > maxEvents {
			return c.Events(ctx, nodeapi.EventsQuery{Since: head.LastSeq - maxEvents, Run: head.Run, Limit: maxEvents})
		} else if err == nil {
			return c.Events(ctx, nodeapi.EventsQuery{Limit: maxEvents})
		}
		return head, err
	})
	var (
		out      []nodeapi.Event
		firstErr error
		answered int
	)
	for i, head := range heads {
		if errs[i] != nil {
			firstErr = cmp.Or(firstErr, errs[i])
			continue
		}
		answered++
		out = append(out, head.Events...)
	}
	if answered == 0 {
		return nil, fmt.Errorf("%w: no node answered: %v", ErrNoAdminAPI, firstErr)
	}
	nodeapi.SortEvents(out)
	return out, nil
}
