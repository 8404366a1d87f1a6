package txn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klogdev/klog/broker/coordinator/coordinatortest"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/internal/testkit"
)

// newFakeClock is the clock coordinator tests start from.
func newFakeClock() *testkit.Clock {
	return testkit.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
}

var errInjected = errors.New("injected failure")

// fakeMarkers records marker writes; it can hold them or fail them.
type fakeMarkers struct {
	mu       sync.Mutex
	held     chan struct{}            // non-nil: writes wait until it is closed
	fail     int                      // the next fail writes fail
	fenced   map[TopicPartition]bool  // partitions refusing every marker as fenced
	down     map[TopicPartition]error // partitions whose leader is unavailable: markers fail with the error
	calls    []string
	attempts int
}

func (f *fakeMarkers) WriteMarkers(ctx context.Context, pid int64, epoch int16, commit bool, coordinatorEpoch int32, txnVersion int16, tps []TopicPartition) map[TopicPartition]error {
	all := func(err error) map[TopicPartition]error {
		out := make(map[TopicPartition]error, len(tps))
		for _, tp := range tps {
			out[tp] = err
		}
		return out
	}
	f.mu.Lock()
	f.attempts++
	if f.fail > 0 {
		f.fail--
		f.mu.Unlock()
		return all(errInjected)
	}
	var failed map[TopicPartition]error
	for _, tp := range tps {
		if f.fenced[tp] {
			if failed == nil {
				failed = make(map[TopicPartition]error)
			}
			failed[tp] = fmt.Errorf("%s-%d: %w", tp.Topic, tp.Partition, ErrMarkerFenced)
		}
		if err := f.down[tp]; err != nil {
			if failed == nil {
				failed = make(map[TopicPartition]error)
			}
			failed[tp] = err
		}
	}
	held := f.held
	f.mu.Unlock()
	if held != nil {
		select {
		case <-held:
		case <-ctx.Done():
			return all(ctx.Err())
		}
	}
	kind := "abort"
	if commit {
		kind = "commit"
	}
	var parts []string
	for _, tp := range tps {
		parts = append(parts, fmt.Sprintf("%s-%d", tp.Topic, tp.Partition))
	}
	if txnVersion != 0 {
		kind += fmt.Sprintf(" tv=%d", txnVersion)
	}
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf("marker %s pid=%d epoch=%d coordinator-epoch=%d %s", kind, pid, epoch, coordinatorEpoch, strings.Join(parts, ",")))
	f.mu.Unlock()
	return failed
}

func (f *fakeMarkers) hold() {
	f.mu.Lock()
	if f.held == nil {
		f.held = make(chan struct{})
	}
	f.mu.Unlock()
}

func (f *fakeMarkers) release() {
	f.mu.Lock()
	if f.held != nil {
		close(f.held)
		f.held = nil
	}
	f.mu.Unlock()
}

func (f *fakeMarkers) takeCalls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.calls
	f.calls = nil
	return out
}

// testEnv is a coordinator over fakes, leading every partition.
type testEnv struct {
	t       *testing.T
	c       *Coordinator
	cfg     Config
	store   *coordinatortest.MemStore
	markers *fakeMarkers
	clock   *testkit.Clock
	nextPID int64
	pidMu   sync.Mutex
	epoch   int32 // coordinator epoch of the loaded partitions
}

func newTestEnv(t *testing.T, mod func(*Config)) *testEnv {
	t.Helper()
	e := &testEnv{t: t, store: coordinatortest.NewMemStore(), markers: &fakeMarkers{}, clock: newFakeClock(), nextPID: 1000}
	e.cfg = Config{
		Logger:     testkit.Logger(t, slog.LevelDebug),
		Store:      e.store,
		Markers:    e.markers,
		Partitions: 1,
		Now:        e.clock.Now,
		ProducerIDs: func(context.Context) (int64, error) {
			e.pidMu.Lock()
			defer e.pidMu.Unlock()
			e.nextPID++
			return e.nextPID - 1, nil
		},
		Topics: func() map[string]TopicInfo {
			return map[string]TopicInfo{"foo": {Name: "foo", Partitions: 3}, "bar": {Name: "bar", Partitions: 1}}
		},
		GroupPartition: func(group string) TopicPartition {
			return TopicPartition{Topic: "__consumer_offsets", Partition: metadata.CoordinatorPartition(group, 50)}
		},
	}
	if mod != nil {
		mod(&e.cfg)
	}
	e.start()
	t.Cleanup(func() { e.c.Close() })
	return e
}

// start starts a coordinator and loads partition 0.
func (e *testEnv) start() {
	e.t.Helper()
	e.c = New(e.cfg)
	e.c.backoff = time.Millisecond
	if err := e.c.LoadPartitionEpoch(context.Background(), 0, e.epoch); err != nil {
		e.t.Fatal(err)
	}
}

// restart closes the coordinator and loads the partition in a new one at
// the next coordinator epoch, as a new leader would.
func (e *testEnv) restart() {
	e.c.Close()
	e.epoch++
	e.start()
}
