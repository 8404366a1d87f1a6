package main

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/scripts/internal/kwire"
	"github.com/klogdev/klog/store/log/record"
)

// errSetup means a case could not build its state on a broker; the case
// is reported as failed rather than compared.
var errSetup = errors.New("setup")

// side is one broker under comparison.
type side struct {
	name     string // "klog" or "kafka"
	addr     string
	suffix   string          // the run's unique suffix, the same on both sides
	versions map[int16]int16 // highest version both brokers serve, per key
	conn     *kwire.Conn
	sent     []string // "Key vN" of the requests of the current case

	// With -nodes 3: connections to the other nodes by address, the
	// command that kills and starts one node, and the cluster cases'
	// state on this side (cases_cluster.go).
	peers   map[string]*kwire.Conn
	nodeCmd []string
	cluster clusterState

	// With -authz: the SASL listener, and the connection logged in
	// there as alice (cases_authz.go).
	saslAddr string
	alice    *kwire.Conn
}

// connectBoth dials both brokers and keeps, per API key, the highest
// version both serve: every request is sent at that version unless its
// case pins another.
//
// Either address may be a bootstrap list: its first address is the side's
// own, where requests go unless a case names a node.
func connectBoth(klogAddr, kafkaAddr, suffix string) (*side, *side, error) {
	klogAddr, _, _ = strings.Cut(klogAddr, ",")
	kafkaAddr, _, _ = strings.Cut(kafkaAddr, ",")
	kv, err := kwire.Versions(klogAddr, "protodiff")
	if err != nil {
		return nil, nil, fmt.Errorf("klog at %s: %w", klogAddr, err)
	}
	fv, err := kwire.Versions(kafkaAddr, "protodiff")
	if err != nil {
		return nil, nil, fmt.Errorf("kafka at %s: %w", kafkaAddr, err)
	}
	both := map[int16]int16{}
	for k, v := range kv {
		if w, ok := fv[k]; ok {
			both[k] = min(v, w)
		}
	}
	k := &side{name: "klog", addr: klogAddr, suffix: suffix, versions: both}
	f := &side{name: "kafka", addr: kafkaAddr, suffix: suffix, versions: both}
	ke, fe := runBoth(k, f, (*side).warmCoordinators)
	if err := errors.Join(ke, fe); err != nil {
		k.close()
		f.close()
		return nil, nil, err
	}
	return k, f, nil
}

// warmCoordinators asks each side for a group and a transaction
// coordinator until both answer, as a client does before its first group
// or transactional request: it creates the internal topics
// __consumer_offsets and __transaction_state. 30 s at most.
func (s *side) warmCoordinators() error {
	deadline := time.Now().Add(30 * time.Second)
	for _, keyType := range []int8{0, 1} {
		for {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.CoordinatorType = keyType
			req.CoordinatorKeys = []string{s.topic("warm")}
			resp, err := s.do(req)
			if err == nil {
				cs := resp.(*kmsg.FindCoordinatorResponse).Coordinators
				if len(cs) == 1 {
					err = kerr.ErrorForCode(cs[0].ErrorCode)
				} else {
					err = fmt.Errorf("%d coordinators for one key", len(cs))
				}
			}
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("FindCoordinator (type %d) on %s: %w", keyType, s.name, err)
			}
			time.Sleep(100 * time.Millisecond) // a poll of the condition, bounded above
		}
	}
	return nil
}

func (s *side) close() {
	if s.conn != nil {
		_ = s.conn.Close()
		s.conn = nil
	}
	if s.alice != nil {
		_ = s.alice.Close()
		s.alice = nil
	}
	for addr, c := range s.peers {
		_ = c.Close()
		delete(s.peers, addr)
	}
}

// do sends req on the side's connection (dialled again after a broker
// closed it) and returns the response. A connection the broker closes is
// an answer too: the error says so, and is compared.
func (s *side) do(req kmsg.Request) (kmsg.Response, error) {
	if s.conn == nil {
		c, err := kwire.Dial(s.addr, "protodiff", s.versions)
		if err != nil {
			return nil, err
		}
		s.conn = c
	}
	resp, _, err := s.conn.Do(req, 15*time.Second)
	s.sent = append(s.sent, fmt.Sprintf("%s v%d", kmsg.NameForKey(req.Key()), req.GetVersion()))
	if err != nil {
		s.close()
		return nil, err
	}
	return resp, nil
}

// topic is a name unique to this run.
func (s *side) topic(base string) string { return "pd-" + base + "-" + s.suffix }

// createTopic creates a topic and waits until its partitions have leaders.
func (s *side) createTopic(name string, partitions int32, configs ...string) error {
	req := kmsg.NewPtrCreateTopicsRequest()
	req.TimeoutMillis = 10000
	t := kmsg.NewCreateTopicsRequestTopic()
	t.Topic, t.NumPartitions, t.ReplicationFactor = name, partitions, 1
	for i := 0; i+1 < len(configs); i += 2 {
		c := kmsg.NewCreateTopicsRequestTopicConfig()
		c.Name, c.Value = configs[i], kmsg.StringPtr(configs[i+1])
		t.Configs = append(t.Configs, c)
	}
	req.Topics = append(req.Topics, t)
	resp, err := s.do(req)
	if err != nil {
		return fmt.Errorf("%w: create topic %s on %s: %v", errSetup, name, s.name, err)
	}
	if err := kerr.ErrorForCode(resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode); err != nil {
		return fmt.Errorf("%w: create topic %s on %s: %v", errSetup, name, s.name, err)
	}
	return s.waitLeaders(name, partitions)
}

// waitLeaders waits, for 15 s at most, until every partition of the topic
// has a leader in Metadata that answers ListOffsets without error: until
// the topic takes writes.
func (s *side) waitLeaders(name string, partitions int32) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		err := s.leadersServe(name, partitions)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w: topic %s on %s not served after 15s: %v", errSetup, name, s.name, err)
		}
		time.Sleep(50 * time.Millisecond) // a poll of the condition, bounded above
	}
}

func (s *side) leadersServe(name string, partitions int32) error {
	req := kmsg.NewPtrMetadataRequest()
	mt := kmsg.NewMetadataRequestTopic()
	mt.Topic = kmsg.StringPtr(name)
	req.Topics = append(req.Topics, mt)
	resp, err := s.do(req)
	if err != nil {
		return err
	}
	m := resp.(*kmsg.MetadataResponse)
	if len(m.Topics) != 1 || len(m.Topics[0].Partitions) != int(partitions) {
		return fmt.Errorf("metadata lists %d topics", len(m.Topics))
	}
	if err := kerr.ErrorForCode(m.Topics[0].ErrorCode); err != nil {
		return err
	}
	// ListOffsets of each partition at its leader: the bootstrap node
	// when there is one node.
	for _, p := range m.Topics[0].Partitions {
		if err := kerr.ErrorForCode(p.ErrorCode); err != nil || p.Leader < 0 {
			return fmt.Errorf("partition %d: leader %d, %v", p.Partition, p.Leader, err)
		}
		addr, ok := brokerAddr(m, p.Leader)
		if !ok {
			return fmt.Errorf("partition %d: leader %d not among the brokers", p.Partition, p.Leader)
		}
		lresp, err := s.doAt(addr, listOffsetsReq(name, -1, -1, p.Partition))
		if err != nil {
			return err
		}
		for _, t := range lresp.(*kmsg.ListOffsetsResponse).Topics {
			for _, p := range t.Partitions {
				if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
					return fmt.Errorf("partition %d: %w", p.Partition, err)
				}
			}
		}
	}
	return nil
}

// brokerAddr is the host:port Metadata lists for node id.
func brokerAddr(m *kmsg.MetadataResponse, id int32) (string, bool) {
	for _, b := range m.Brokers {
		if b.NodeID == id {
			return net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))), true
		}
	}
	return "", false
}

// doAt is do on the node at addr: the side's own connection for its
// bootstrap node, else one kept per address.
func (s *side) doAt(addr string, req kmsg.Request) (kmsg.Response, error) {
	if addr == s.addr {
		return s.do(req)
	}
	c := s.peers[addr]
	if c == nil {
		var err error
		if c, err = kwire.Dial(addr, "protodiff", s.versions); err != nil {
			return nil, err
		}
		if s.peers == nil {
			s.peers = map[string]*kwire.Conn{}
		}
		s.peers[addr] = c
	}
	resp, _, err := c.Do(req, 15*time.Second)
	s.sent = append(s.sent, fmt.Sprintf("%s v%d", kmsg.NameForKey(req.Key()), req.GetVersion()))
	if err != nil {
		_ = c.Close()
		delete(s.peers, addr)
		return nil, err
	}
	return resp, nil
}

// batch is one record batch of n records with values "v0", "v1", ...
func batch(n int, ts int64, pid int64, epoch int16, seq int32, txn bool) []byte {
	bb := record.NewBuilder(ts)
	bb.ProducerID, bb.ProducerEpoch, bb.BaseSequence, bb.Transactional = pid, epoch, seq, txn
	for i := range n {
		bb.Append(record.Record{OffsetDelta: int32(i), Value: fmt.Appendf(nil, "v%d", i)})
	}
	b, err := bb.Build()
	if err != nil {
		panic(err) // an uncompressed batch of a few records always builds
	}
	return b
}

// plainBatch is a batch without producer of n records stamped now.
func plainBatch(n int) []byte { return batch(n, time.Now().UnixMilli(), -1, -1, -1, false) }

// produceReq is a produce of one batch to one partition (v12, acks all),
// transactional if txnID is set.
func produceReq(topic string, partition int32, txnID *string, b []byte) *kmsg.ProduceRequest {
	req := kwire.ProduceRequest(topic, partition, -1, b)
	req.TransactionID = txnID
	return req
}

// produce writes a batch and fails on any error code but a retriable one
// (a new partition's leader not yet serving), retried for 15 s.
func (s *side) produce(topic string, partition int32, b []byte) error {
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := s.do(produceReq(topic, partition, nil, b))
		if err != nil {
			return fmt.Errorf("%w: produce to %s on %s: %v", errSetup, topic, s.name, err)
		}
		err = kerr.ErrorForCode(resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode)
		if err == nil {
			return nil
		}
		if !kerr.IsRetriable(err) || time.Now().After(deadline) {
			return fmt.Errorf("%w: produce to %s on %s: %v", errSetup, topic, s.name, err)
		}
		time.Sleep(50 * time.Millisecond) // a bounded retry of a retriable error
	}
}

// initProducer gets a producer id and epoch, transactional if txnID is set.
func (s *side) initProducer(txnID *string) (int64, int16, error) {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.TransactionalID, req.TransactionTimeoutMillis = txnID, 60000
	req.ProducerID, req.ProducerEpoch = -1, -1
	// CONCURRENT_TRANSACTIONS and COORDINATOR_LOAD_IN_PROGRESS are retriable
	// while the coordinator starts or completes a transaction: retry them for 15 s.
	deadline := time.Now().Add(15 * time.Second)
	for {
		resp, err := s.do(req)
		if err != nil {
			return 0, 0, fmt.Errorf("%w: InitProducerID on %s: %v", errSetup, s.name, err)
		}
		r := resp.(*kmsg.InitProducerIDResponse)
		err = kerr.ErrorForCode(r.ErrorCode)
		if err == nil {
			return r.ProducerID, r.ProducerEpoch, nil
		}
		// kerr does not count CONCURRENT_TRANSACTIONS as retriable.
		if !kerr.IsRetriable(err) && !errors.Is(err, kerr.ConcurrentTransactions) || time.Now().After(deadline) {
			return 0, 0, fmt.Errorf("%w: InitProducerID on %s: %v", errSetup, s.name, err)
		}
		time.Sleep(100 * time.Millisecond) // a bounded retry of a retriable error
	}
}

// addPartition adds partition 0 of topic to the transaction (v3: the
// client's version; v4+ is the brokers' batched form).
func (s *side) addPartition(txnID string, pid int64, epoch int16, topic string) (kmsg.Response, error) {
	req := kmsg.NewPtrAddPartitionsToTxnRequest()
	req.SetVersion(3)
	req.TransactionalID, req.ProducerID, req.ProducerEpoch = txnID, pid, epoch
	t := kmsg.NewAddPartitionsToTxnRequestTopic()
	t.Topic, t.Partitions = topic, []int32{0}
	req.Topics = append(req.Topics, t)
	return s.do(req)
}

// join runs a classic consumer group join for one member until it is the
// leader of a generation and has synced: the member id and generation.
func (s *side) join(group string) (string, int32, error) {
	member := ""
	for range 3 { // unknown member, then MEMBER_ID_REQUIRED, then the join
		req := joinReq(group, member)
		resp, err := s.do(req)
		if err != nil {
			return "", 0, fmt.Errorf("%w: JoinGroup on %s: %v", errSetup, s.name, err)
		}
		r := resp.(*kmsg.JoinGroupResponse)
		member = r.MemberID
		if r.ErrorCode == kerr.MemberIDRequired.Code {
			continue
		}
		if err := kerr.ErrorForCode(r.ErrorCode); err != nil {
			return "", 0, fmt.Errorf("%w: JoinGroup on %s: %v", errSetup, s.name, err)
		}
		sreq := syncReq(group, member, r.Generation, true)
		sresp, err := s.do(sreq)
		if err != nil {
			return "", 0, fmt.Errorf("%w: SyncGroup on %s: %v", errSetup, s.name, err)
		}
		if err := kerr.ErrorForCode(sresp.(*kmsg.SyncGroupResponse).ErrorCode); err != nil {
			return "", 0, fmt.Errorf("%w: SyncGroup on %s: %v", errSetup, s.name, err)
		}
		return member, r.Generation, nil
	}
	return "", 0, fmt.Errorf("%w: JoinGroup on %s: no member id after 3 tries", errSetup, s.name)
}

func joinReq(group, member string) *kmsg.JoinGroupRequest {
	req := kmsg.NewPtrJoinGroupRequest()
	req.Group, req.MemberID = group, member
	req.SessionTimeoutMillis, req.RebalanceTimeoutMillis = 10000, 10000
	req.ProtocolType = "consumer"
	p := kmsg.NewJoinGroupRequestProtocol()
	p.Name, p.Metadata = "range", []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	req.Protocols = append(req.Protocols, p)
	return req
}

func syncReq(group, member string, generation int32, assign bool) *kmsg.SyncGroupRequest {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.MemberID, req.Generation = group, member, generation
	req.ProtocolType, req.Protocol = kmsg.StringPtr("consumer"), kmsg.StringPtr("range")
	if assign {
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = member, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
		req.GroupAssignment = append(req.GroupAssignment, a)
	}
	return req
}

// runBoth runs f on both sides at once and waits for both.
func runBoth[T any](a, b *side, f func(*side) T) (T, T) {
	var ra, rb T
	var wg sync.WaitGroup
	wg.Go(func() { ra = f(a) })
	wg.Go(func() { rb = f(b) })
	wg.Wait()
	return ra, rb
}

// sentVersions is the "Key vN" list of a side's requests in this case.
func (s *side) sentVersions() string { return strings.Join(s.sent, ",") }
