package group

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/coordinator/coordinatortest"
	"github.com/klogdev/klog/internal/testkit"
)

// newFakeClock is the clock coordinator tests start from.
func newFakeClock() *testkit.Clock {
	return testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

// memStore is an in-memory Store and TxnStore. Transactional appends are
// checked against the highest epoch seen of their producer, as a
// partition's producer state would.
type memStore struct {
	*coordinatortest.MemStore
	mu     sync.Mutex
	epochs map[int64]int16 // highest epoch of each transactional producer
}

func newMemStore() *memStore {
	return &memStore{MemStore: coordinatortest.NewMemStore(), epochs: make(map[int64]int16)}
}

func (s *memStore) AppendTransactional(ctx context.Context, p int32, producerID int64, producerEpoch int16, records []Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.Failure(); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if e, ok := s.epochs[producerID]; ok && producerEpoch < e {
		return fmt.Errorf("producer %d epoch %d < %d: %w", producerID, producerEpoch, e, kerr.ProducerFenced)
	}
	s.epochs[producerID] = producerEpoch
	for _, r := range records {
		s.Write(p, Record{Key: r.Key, Value: r.Value, ProducerID: producerID, Transactional: true})
	}
	return nil
}

// marker appends a COMMIT or ABORT marker of producerID, as the broker
// does before it calls CompleteTransaction.
func (s *memStore) marker(p int32, producerID int64, commit bool) {
	s.Write(p, Record{ProducerID: producerID, Control: true, Commit: commit})
}

// bumpEpoch fences every epoch of producerID below epoch.
func (s *memStore) bumpEpoch(producerID int64, epoch int16) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.epochs[producerID] = epoch
}

var errInjected = errors.New("injected append failure")

// newTestCoordinator returns a coordinator over a memStore with a fake
// clock, leading every partition of a one-partition offsets topic.
func newTestCoordinator(t *testing.T, mod func(*Config)) (*Coordinator, *memStore, *testkit.Clock) {
	t.Helper()
	store := newMemStore()
	clock := newFakeClock()
	cfg := Config{
		Logger:                store.logger(t),
		Store:                 store,
		Partitions:            1,
		Now:                   clock.Now,
		InitialRebalanceDelay: 0,
	}
	if mod != nil {
		mod(&cfg)
	}
	c := New(cfg)
	t.Cleanup(c.Close)
	if err := c.LoadPartition(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	return c, store, clock
}

func (s *memStore) logger(t *testing.T) *slog.Logger { return testkit.Logger(t, slog.LevelDebug) }

// joinRange joins one member, of the range protocol subscribed to topics,
// to the classic group group (JoinGroup v3: no member id needed first),
// failing the test unless it joins.
func joinRange(ctx context.Context, t *testing.T, c *Coordinator, group string, topics ...string) *kmsg.JoinGroupResponse {
	t.Helper()
	md := kmsg.ConsumerMemberMetadata{Topics: topics}
	jreq := kmsg.NewPtrJoinGroupRequest()
	jreq.Version = 3
	jreq.Group, jreq.ProtocolType, jreq.SessionTimeoutMillis, jreq.RebalanceTimeoutMillis = group, "consumer", 10000, 10000
	jreq.Protocols = []kmsg.JoinGroupRequestProtocol{{Name: "range", Metadata: md.AppendTo(nil)}}
	jresp := c.JoinGroup(ctx, jreq)
	if jresp.ErrorCode != 0 {
		t.Fatalf("join: %s", errName(jresp.ErrorCode))
	}
	return jresp
}
