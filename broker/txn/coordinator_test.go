package txn

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/coordinator/coordinatortest"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/internal/testkit"
)

func initReq(id string, pid int64, epoch int16) *kmsg.InitProducerIDRequest {
	req := kmsg.NewPtrInitProducerIDRequest()
	req.Version = 4
	req.TransactionalID = &id
	req.TransactionTimeoutMillis = 60000
	req.ProducerID, req.ProducerEpoch = pid, epoch
	return req
}

func TestEpochExhaustionRotatesProducerID(t *testing.T) {
	e := newTestEnv(t, nil)
	m := newMeta("t1", 500, 60000, e.clock.Now())
	m.epoch = math.MaxInt16 - 1
	m.state = StateCompleteCommit
	e.store.Write(0, metaRecord(m))
	e.restart()
	ctx := testkit.Context(t)

	resp := e.c.InitProducerID(ctx, initReq("t1", 500, math.MaxInt16-1))
	if resp.ErrorCode != 0 || resp.ProducerID != 1000 || resp.ProducerEpoch != 0 {
		t.Fatalf("rotation = %s pid=%d epoch=%d", errName(resp.ErrorCode), resp.ProducerID, resp.ProducerEpoch)
	}
	// A retry with the old id and its exhausted epoch gets the new id.
	resp = e.c.InitProducerID(ctx, initReq("t1", 500, math.MaxInt16-1))
	if resp.ErrorCode != 0 || resp.ProducerID != 1000 || resp.ProducerEpoch != 0 {
		t.Fatalf("retry = %s pid=%d epoch=%d", errName(resp.ErrorCode), resp.ProducerID, resp.ProducerEpoch)
	}
	recs := e.store.Records(0)
	if got := recordString(recs[len(recs)-1]); got != "record t1: pid=1000 epoch=0 Empty timeout=60000 prev-pid=500" {
		t.Fatalf("last record = %s", got)
	}
}

func TestNotCoordinatorAndLoading(t *testing.T) {
	e := newTestEnv(t, nil)
	ctx := testkit.Context(t)
	e.c.UnloadPartition(0)
	if got := e.c.InitProducerID(ctx, initReq("t1", -1, -1)).ErrorCode; got != kerr.NotCoordinator.Code {
		t.Fatalf("unloaded: %s", errName(got))
	}
	if err := e.c.VerifyPartition(ctx, "t1", 1, 0, TopicPartition{"foo", 0}); Code(err) != kerr.NotCoordinator.Code {
		t.Fatalf("verify unloaded: %v", err)
	}

	// A replay that blocks: requests answer COORDINATOR_LOAD_IN_PROGRESS.
	blocked := &blockingStore{MemStore: e.store, started: make(chan struct{}), release: make(chan struct{})}
	cfg := e.cfg
	cfg.Store = blocked
	c := New(cfg)
	defer c.Close()
	loaded := make(chan error, 1)
	go func() { loaded <- c.LoadPartition(ctx, 0) }()
	<-blocked.started
	if got := c.InitProducerID(ctx, initReq("t1", -1, -1)).ErrorCode; got != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("loading: %s", errName(got))
	}
	if got := c.ListTransactions(ctx, kmsg.NewPtrListTransactionsRequest()).ErrorCode; got != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("list while loading: %s", errName(got))
	}
	close(blocked.release)
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}
	if got := c.InitProducerID(ctx, initReq("t1", -1, -1)).ErrorCode; got != 0 {
		t.Fatalf("loaded: %s", errName(got))
	}
	c.Close()
	if got := c.InitProducerID(ctx, initReq("t1", -1, -1)).ErrorCode; got != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("closed: %s", errName(got))
	}
}

type blockingStore struct {
	*coordinatortest.MemStore
	started, release chan struct{}
}

func (s *blockingStore) Replay(ctx context.Context, p int32, fn func(Record) error) error {
	close(s.started)
	<-s.release
	return s.MemStore.Replay(ctx, p, fn)
}

// TestConcurrentProducers runs many producers on a few partitions at once,
// with readers and ticks alongside; run with -race. Every commit has its
// markers written exactly once.
func TestConcurrentProducers(t *testing.T) {
	e := newTestEnv(t, func(cfg *Config) { cfg.Partitions = 4 })
	for p := int32(1); p < 4; p++ {
		if err := e.c.LoadPartition(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	ctx := testkit.Context(t)
	const producers, rounds = 8, 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	commits := 0
	for i := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id := fmt.Sprintf("p%d", i)
			ir := e.c.InitProducerID(ctx, initReq(id, -1, -1))
			if ir.ErrorCode != 0 {
				t.Errorf("init %s: %s", id, errName(ir.ErrorCode))
				return
			}
			for r := 0; r < rounds; r++ {
				add := kmsg.NewPtrAddPartitionsToTxnRequest()
				add.Version = 3
				add.TransactionalID, add.ProducerID, add.ProducerEpoch = id, ir.ProducerID, ir.ProducerEpoch
				add.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "foo", Partitions: []int32{int32(r % 3)}}}
				for {
					code := e.c.AddPartitionsToTxn(ctx, add).Topics[0].Partitions[0].ErrorCode
					if code == 0 {
						break
					}
					if code != kerr.ConcurrentTransactions.Code {
						t.Errorf("add %s: %s", id, errName(code))
						return
					}
					runtimeYield()
				}
				end := kmsg.NewPtrEndTxnRequest()
				end.Version = 4
				end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = id, ir.ProducerID, ir.ProducerEpoch, true
				if code := e.c.EndTxn(ctx, end).ErrorCode; code != 0 {
					t.Errorf("end %s: %s", id, errName(code))
					return
				}
				mu.Lock()
				commits++
				mu.Unlock()
			}
		}()
	}
	// Readers alongside.
	stop := make(chan struct{})
	var rwg sync.WaitGroup
	rwg.Add(1)
	go func() {
		defer rwg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			e.c.Snapshot()
			e.c.ListTransactions(ctx, kmsg.NewPtrListTransactionsRequest())
			e.c.Tick(ctx)
		}
	}()
	wg.Wait()
	close(stop)
	rwg.Wait()
	testkit.WaitFor(t, "all transactions complete", func() (bool, string) {
		for _, s := range e.c.Snapshot() {
			if s.State != "CompleteCommit" || s.MarkersPending {
				return false, ""
			}
		}
		return true, ""
	})
	if got := len(e.markers.takeCalls()); got != commits || commits != producers*rounds {
		t.Fatalf("markers written %d times for %d commits", got, commits)
	}
}

func runtimeYield() { time.Sleep(100 * time.Microsecond) }

// beginTxn initializes id and adds partitions of foo to a transaction.
func beginTxn(ctx context.Context, t *testing.T, c *Coordinator, id string, partitions ...int32) (int64, int16) {
	t.Helper()
	ir := c.InitProducerID(ctx, initReq(id, -1, -1))
	if ir.ErrorCode != 0 {
		t.Fatalf("init %s: %s", id, errName(ir.ErrorCode))
	}
	add := kmsg.NewPtrAddPartitionsToTxnRequest()
	add.Version = 3
	add.TransactionalID, add.ProducerID, add.ProducerEpoch = id, ir.ProducerID, ir.ProducerEpoch
	add.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "foo", Partitions: partitions}}
	for _, p := range c.AddPartitionsToTxn(ctx, add).Topics[0].Partitions {
		if p.ErrorCode != 0 {
			t.Fatalf("add %s: %s", id, errName(p.ErrorCode))
		}
	}
	return ir.ProducerID, ir.ProducerEpoch
}

// TestFencedMarkerIsNotRetriedForever: a partition that refuses a marker
// as fenced is given up (Kafka's coordinator stops sending on
// TRANSACTION_COORDINATOR_FENCED), the other partitions get theirs and the
// transaction completes, so its id is not CONCURRENT_TRANSACTIONS for
// good.
func TestFencedMarkerIsNotRetriedForever(t *testing.T) {
	e := newTestEnv(t, nil)
	ctx := testkit.Context(t)
	e.markers.fenced = map[TopicPartition]bool{{"foo", 1}: true}
	pid, epoch := beginTxn(ctx, t, e.c, "t1", 0, 1)
	end := kmsg.NewPtrEndTxnRequest()
	end.Version = 4
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = "t1", pid, epoch, true
	if code := e.c.EndTxn(ctx, end).ErrorCode; code != 0 {
		t.Fatalf("end: %s", errName(code))
	}
	testkit.WaitFor(t, "the transaction to complete", func() (bool, string) {
		s, err := e.c.describe("t1")
		if err != nil {
			return false, err.Error()
		}
		return s.State == StateCompleteCommit.String() && !s.MarkersPending, s.State
	})
	e.markers.mu.Lock()
	attempts := e.markers.attempts
	e.markers.mu.Unlock()
	if attempts != 1 {
		t.Fatalf("markers written in %d attempts, want 1: the fenced partition is not retried", attempts)
	}
	if got := e.c.InitProducerID(ctx, initReq("t1", pid, epoch)).ErrorCode; got != 0 {
		t.Fatalf("init after the fenced marker: %s", errName(got))
	}
}

// TestClientMarker: what a client's WriteTxnMarkers may do to the
// transactions of this coordinator.
func TestClientMarker(t *testing.T) {
	e := newTestEnv(t, nil)
	ctx := testkit.Context(t)
	pid, epoch := beginTxn(ctx, t, e.c, "t1", 0)
	written := 0
	write := func() { written++ }
	for _, tc := range []struct {
		name             string
		pid              int64
		epoch            int16
		commit           bool
		coordinatorEpoch int32
		want             int16
		wantWritten      int
	}{
		{"future coordinator epoch", pid, epoch, false, math.MaxInt32, kerr.ClusterAuthorizationFailed.Code, 0},
		{"commit behind the coordinator", pid, epoch, true, 0, kerr.InvalidTxnState.Code, 0},
		{"other producer epoch", pid, epoch + 1, false, 0, kerr.InvalidProducerEpoch.Code, 0},
		{"unknown producer, future epoch", 4242, 0, false, 1, kerr.ClusterAuthorizationFailed.Code, 0},
		{"unknown producer", 4242, 0, false, 0, 0, 1},
	} {
		written = 0
		err := e.c.ClientMarker(ctx, tc.pid, tc.epoch, tc.commit, tc.coordinatorEpoch, 0, write)
		if Code(err) != tc.want || written != tc.wantWritten {
			t.Errorf("%s: %v, written %d; want %s, written %d", tc.name, err, written, errName(tc.want), tc.wantWritten)
		}
	}
	// An abort of the Ongoing transaction is the coordinator's, with the
	// epoch bumped: the producer is fenced and only the coordinator's
	// markers are written.
	written = 0
	if err := e.c.ClientMarker(ctx, pid, epoch, false, 0, 0, write); err != nil || written != 0 {
		t.Fatalf("abort: %v, written %d", err, written)
	}
	testkit.WaitFor(t, "the abort to complete", func() (bool, string) {
		s, err := e.c.describe("t1")
		if err != nil {
			return false, err.Error()
		}
		return s.State == StateCompleteAbort.String() && !s.MarkersPending, s.State
	})
	if got, want := e.markers.takeCalls(), []string{fmt.Sprintf("marker abort pid=%d epoch=%d coordinator-epoch=0 foo-0", pid, epoch+1)}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("markers %q, want %q", got, want)
	}
	end := kmsg.NewPtrEndTxnRequest()
	end.Version = 4
	end.TransactionalID, end.ProducerID, end.ProducerEpoch, end.Commit = "t1", pid, epoch, true
	if code := e.c.EndTxn(ctx, end).ErrorCode; code != kerr.ProducerFenced.Code {
		t.Fatalf("commit after the abort: %s, want PRODUCER_FENCED", errName(code))
	}
	// With no transaction in flight the marker is written as sent, on the
	// id's actor.
	if err := e.c.ClientMarker(ctx, pid, epoch+1, false, 0, 0, write); err != nil || written != 1 {
		t.Fatalf("marker with no transaction in flight: %v, written %d", err, written)
	}
}

// TestIDsFollowTheLivePartitionCount: with PartitionCount set, transactional
// ids hash over the topic's count as it is now. An id whose actor was
// loaded from a partition it no longer hashes to answers NOT_COORDINATOR,
// even when its new partition is loaded, until the node unloads the old
// one.
func TestIDsFollowTheLivePartitionCount(t *testing.T) {
	var count atomic.Int32
	count.Store(1)
	e := newTestEnv(t, func(cfg *Config) { cfg.PartitionCount = count.Load })
	ctx := testkit.Context(t)
	const moved = "t1" // partition 1 of 2
	if p := metadata.CoordinatorPartition(moved, 2); p != 1 {
		t.Fatalf("%s hashes to %d of 2", moved, p)
	}
	if got := e.c.InitProducerID(ctx, initReq(moved, -1, -1)).ErrorCode; got != 0 {
		t.Fatalf("init over one partition: %s", errName(got))
	}
	count.Store(2)
	if err := e.c.LoadPartition(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if got := e.c.InitProducerID(ctx, initReq(moved, -1, -1)).ErrorCode; got != kerr.NotCoordinator.Code {
		t.Errorf("init through the actor of partition 0: %s, want NOT_COORDINATOR", errName(got))
	}
	e.c.UnloadPartition(0)
	if got := e.c.InitProducerID(ctx, initReq(moved, -1, -1)).ErrorCode; got != 0 {
		t.Errorf("init once partition 0 is unloaded: %s", errName(got))
	}
}

// TestDescribeUnknownLeavesZeros: an id the coordinator does not know is
// answered TRANSACTIONAL_ID_NOT_FOUND with the other fields zero, as Kafka
// 4.4 answers (not -1, which klog answered before).
func TestDescribeUnknownLeavesZeros(t *testing.T) {
	e := newTestEnv(t, nil)
	req := kmsg.NewPtrDescribeTransactionsRequest()
	req.TransactionalIDs = []string{"nobody"}
	st := e.c.DescribeTransactions(testkit.Context(t), req).TransactionStates[0]
	if st.ErrorCode != kerr.TransactionalIDNotFound.Code || st.ProducerID != 0 || st.ProducerEpoch != 0 || st.StartTimestamp != 0 {
		t.Fatalf("unknown id described as %+v", st)
	}
}
