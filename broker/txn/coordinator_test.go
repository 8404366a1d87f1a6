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
	e.store.parts[0] = append(e.store.parts[0], metaRecord(m))
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
	recs := e.store.records(0)
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
	blocked := &blockingStore{memStore: e.store, started: make(chan struct{}), release: make(chan struct{})}
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
	*memStore
	started, release chan struct{}
}

func (s *blockingStore) Replay(ctx context.Context, p int32, fn func(Record) error) error {
	close(s.started)
	<-s.release
	return s.memStore.Replay(ctx, p, fn)
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
			e.c.tick(ctx)
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
