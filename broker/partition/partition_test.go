package partition

import (
	"errors"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/log/record"
	"github.com/klogdev/klog/store/vfs"
)

// self is the replica id of the partitions under test.
const self = 1

func leaderAt(epoch int32) LeaderState {
	return LeaderState{Leader: self, Epoch: epoch, PartitionEpoch: epoch, Replicas: []int32{self, 2}, ISR: []int32{self}}
}

func followerAt(epoch int32) LeaderState {
	return LeaderState{Leader: 2, Epoch: epoch, PartitionEpoch: epoch, Replicas: []int32{self, 2}, ISR: []int32{2}}
}

// newPartition is a replica of t-0 over a fresh in-memory log, leading
// nothing yet.
func newPartition(t *testing.T) *Partition {
	t.Helper()
	l, err := log.Open(vfs.NewMem(), "/t-0", log.DefaultConfig(), log.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := l.Close(); err != nil {
			t.Error(err)
		}
	})
	return New("t", 0, [16]byte{1}, l, Options{ReplicaID: self})
}

// batchEpochs maps the base offset of every batch in the log to the leader
// epoch stamped on it, and returns the epochs in log order.
func batchEpochs(t *testing.T, p *Partition) (map[int64]int32, []int32) {
	t.Helper()
	raw, err := p.Read(nil, p.LogStartOffset(), 1<<30, ReadReplica, true)
	if err != nil {
		t.Fatal(err)
	}
	byOffset := make(map[int64]int32)
	var order []int32
	for _, b := range logtest.Split(raw) {
		byOffset[logtest.BaseOffset(b)] = logtest.LeaderEpoch(b)
		order = append(order, logtest.LeaderEpoch(b))
	}
	return byOffset, order
}

// TestLeaderStateChangeWaitsForAppend changes the leader state — to a
// follower, or to a new epoch — while an append has checked leadership but
// not yet written. The change must wait for the write, so the batch is
// stamped with the epoch the append checked, and the next append sees the
// new state. With the check and the epoch taken apart (as leader and epoch
// once were), the batch would carry an epoch this replica never led at.
func TestLeaderStateChangeWaitsForAppend(t *testing.T) {
	for _, tc := range []struct {
		name    string
		next    LeaderState
		nextErr error // of the append after the change
	}{
		{"to follower", followerAt(3), ErrNotLeader},
		{"to new epoch", leaderAt(3), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPartition(t)
			p.SetLeaderState(leaderAt(2))
			changed := make(chan struct{})
			p.beforeWrite = func() {
				p.beforeWrite = nil // only the first append
				go func() {
					p.SetLeaderState(tc.next)
					close(changed)
				}()
				// Let the change run as far as it can while the append
				// holds the state it checked.
				for range 1000 {
					runtime.Gosched()
				}
				select {
				case <-changed:
					t.Error("SetLeaderState returned while an append held the state it checked")
				default:
				}
			}
			res, err := p.Append(logtest.Batch(logtest.Values(1, 10)...))
			if err != nil {
				t.Fatalf("append under leader state epoch 2: %v", err)
			}
			<-changed
			if got := p.LeaderState(); got.Epoch != tc.next.Epoch || got.Leader != tc.next.Leader {
				t.Fatalf("leader state after the change: %+v, want %+v", got, tc.next)
			}
			byOffset, _ := batchEpochs(t, p)
			if got := byOffset[res.FirstOffset]; got != 2 {
				t.Fatalf("batch stamped with epoch %d, want 2 (the epoch the append checked)", got)
			}
			if got, want := p.log.LeaderEpochs(), []log.EpochEntry{{Epoch: 2, StartOffset: 0}}; !slices.Equal(got, want) {
				t.Fatalf("leader epochs %v, want %v", got, want)
			}

			res, err = p.Append(logtest.Batch(logtest.Values(1, 10)...))
			if !errors.Is(err, tc.nextErr) {
				t.Fatalf("append after the change: %v, want %v", err, tc.nextErr)
			}
			if err == nil {
				if byOffset, _ := batchEpochs(t, p); byOffset[res.FirstOffset] != tc.next.Epoch {
					t.Fatalf("batch after the change stamped %d, want %d", byOffset[res.FirstOffset], tc.next.Epoch)
				}
			}
		})
	}
}

// TestAppendRacingLeaderStateChanges hammers Append and AppendMarker from
// several goroutines while the leader state flips between leading (odd
// epochs) and following (even epochs). Every batch in the log must carry
// an epoch this replica led at, in non-decreasing order, and the log must
// hold exactly the successful appends. Run it with -race.
func TestAppendRacingLeaderStateChanges(t *testing.T) {
	p := newPartition(t)
	p.SetLeaderState(leaderAt(1))
	const (
		writers = 4
		appends = 300
	)
	led := map[int32]bool{1: true} // written by the changer until it stops
	stop := make(chan struct{})
	changed := make(chan struct{})
	go func() {
		defer close(changed)
		for e := int32(2); ; e++ {
			select {
			case <-stop:
				return
			default:
			}
			if e%2 == 1 {
				led[e] = true
				p.SetLeaderState(leaderAt(e))
			} else {
				p.SetLeaderState(followerAt(e))
			}
			runtime.Gosched()
		}
	}()

	results := make([][]int64, writers) // offsets of successful appends
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range appends {
				var offset int64
				var err error
				if w == 0 && i%10 == 0 {
					offset, err = p.AppendMarker(log.Marker{ProducerID: 7, ProducerEpoch: 0, Commit: true})
				} else {
					var res log.AppendResult
					res, err = p.Append(logtest.Batch(logtest.Values(1, 10)...))
					offset = res.FirstOffset
				}
				switch {
				case errors.Is(err, ErrNotLeader):
				case err != nil:
					errs <- err
					return
				default:
					results[w] = append(results[w], offset)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-changed
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	byOffset, order := batchEpochs(t, p)
	total := 0
	for _, offsets := range results {
		for _, offset := range offsets {
			total++
			epoch, ok := byOffset[offset]
			if !ok {
				t.Fatalf("successful append at %d is not in the log", offset)
			}
			if !led[epoch] {
				t.Fatalf("batch at %d stamped with epoch %d, which this replica never led at", offset, epoch)
			}
		}
	}
	if total != len(byOffset) {
		t.Fatalf("%d successful appends, %d batches in the log", total, len(byOffset))
	}
	if !slices.IsSorted(order) {
		t.Fatalf("batch epochs out of order: %v", order)
	}
	for _, e := range p.log.LeaderEpochs() {
		if !led[e.Epoch] {
			t.Fatalf("leader epoch cache holds %d, never led", e.Epoch)
		}
	}
	t.Logf("%d of %d appends succeeded", total, writers*appends)
}

func TestSetLeaderStateKeepsItsOwnCopy(t *testing.T) {
	p := newPartition(t)
	if p.IsLeader() || p.LeaderState().Leader != -1 {
		t.Fatalf("new partition leads: %+v", p.LeaderState())
	}
	st := leaderAt(4)
	p.SetLeaderState(st)
	st.ISR[0], st.Replicas[0] = 9, 9
	got := p.LeaderState()
	if !slices.Equal(got.ISR, []int32{self}) || !slices.Equal(got.Replicas, []int32{self, 2}) {
		t.Fatalf("leader state changed with the caller's slices: %+v", got)
	}
	if !p.IsLeader() || p.LeaderEpoch() != 4 {
		t.Fatalf("IsLeader %v, LeaderEpoch %d after leading at 4", p.IsLeader(), p.LeaderEpoch())
	}
}

func TestCheckLeader(t *testing.T) {
	p := newPartition(t)
	p.SetLeaderState(leaderAt(5))
	for _, tc := range []struct {
		epoch int32
		want  error
	}{
		{-1, nil},
		{5, nil},
		{4, ErrFencedLeaderEpoch},
		{6, ErrUnknownLeaderEpoch},
	} {
		if err := p.CheckLeader(tc.epoch); !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
			t.Errorf("CheckLeader(%d) = %v, want %v", tc.epoch, err, tc.want)
		}
	}
	p.SetLeaderState(followerAt(6))
	for _, epoch := range []int32{-1, 6} {
		if err := p.CheckLeader(epoch); !errors.Is(err, ErrNotLeader) {
			t.Errorf("CheckLeader(%d) as follower = %v, want ErrNotLeader", epoch, err)
		}
	}
}

func TestAppendRefusals(t *testing.T) {
	p := newPartition(t)
	batch := func() []byte { return logtest.Batch(logtest.Values(1, 10)...) }
	if _, err := p.Append(batch()); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("append before any leader state: %v", err)
	}
	p.SetLeaderState(leaderAt(1))
	if _, err := p.AppendWith(parsed(batch()), AppendOptions{MinInSyncReplicas: 2}); !errors.Is(err, ErrNotEnoughReplicas) {
		t.Fatalf("append needing 2 in-sync replicas of 1: %v", err)
	}
	if p.LogEndOffset() != 0 {
		t.Fatalf("refused append wrote: log end %d", p.LogEndOffset())
	}
	if _, err := p.AppendWith(parsed(batch()), AppendOptions{MinInSyncReplicas: 1}); err != nil {
		t.Fatalf("append needing 1 in-sync replica: %v", err)
	}
	st := leaderAt(1)
	st.ISR = []int32{self, 2}
	p.SetLeaderState(st)
	if _, err := p.AppendWith(parsed(batch()), AppendOptions{MinInSyncReplicas: 2}); err != nil {
		t.Fatalf("append needing 2 in-sync replicas of 2: %v", err)
	}
	// The high watermark waits for the follower in the ISR.
	if p.HighWatermark() != 1 {
		t.Fatalf("high watermark %d after two appends, the follower at none", p.HighWatermark())
	}
	if _, err := p.UpdateFollower(2, 2, 0, time.Now()); err != nil {
		t.Fatal(err)
	}
	if p.HighWatermark() != 2 {
		t.Fatalf("high watermark %d after two appends, both replicas at 2", p.HighWatermark())
	}
	p.SetLeaderState(followerAt(2))
	if _, err := p.AppendMarker(log.Marker{ProducerID: 1, Commit: true}); !errors.Is(err, ErrNotLeader) {
		t.Fatalf("marker as follower: %v", err)
	}
	p.SetLeaderState(leaderAt(3))
	p.Close()
	if _, err := p.Append(batch()); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
}

// TestNewHighWatermark: a replica opened on a log starts from the
// checkpointed high watermark, kept within the log, not from its log end:
// records past the high watermark may never have been committed, and a
// replica elected leader must not serve them as committed.
func TestNewHighWatermark(t *testing.T) {
	l, err := log.Open(vfs.NewMem(), "/t-0", log.DefaultConfig(), log.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if _, err := l.Append(logtest.Batch(logtest.Values(10, 8)...), 0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ checkpoint, want int64 }{{4, 4}, {0, 0}, {10, 10}, {25, 10}, {-3, 0}} {
		p := New("t", 0, [16]byte{1}, l, Options{ReplicaID: self, HighWatermark: c.checkpoint})
		if got := p.HighWatermark(); got != c.want {
			t.Errorf("checkpoint %d: high watermark %d, want %d (log end %d)", c.checkpoint, got, c.want, l.EndOffset())
		}
		if c.checkpoint == 4 {
			// A follower keeps it until its leader says more.
			p.SetLeaderState(followerAt(1))
			if got := p.HighWatermark(); got != 4 {
				t.Errorf("as follower: high watermark %d, want 4", got)
			}
		}
	}
}

// parsed is the view AppendWith takes of batches.
func parsed(batches []byte) *record.Batches {
	bs := record.ParseBatches(batches)
	return &bs
}
