package coordinator_test

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klogdev/klog/broker/coordinator"
	"github.com/klogdev/klog/broker/coordinator/coordinatortest"
	"github.com/klogdev/klog/internal/testkit"
)

// counters is a toy coordinator on the runtime: each key counts the
// increments written for it, and forgets itself at zero.
type counters struct {
	rt    *coordinator.Runtime[*counter]
	store *coordinatortest.MemStore
}

// counter is one key's state, owned by its actor.
type counter struct {
	a       *coordinator.Actor[*counter]
	store   coordinator.Store
	n       int
	stopped chan struct{}
}

func (c *counter) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *counter) Tick()                       {}
func (c *counter) Reapable() bool              { return c.n == 0 }
func (c *counter) Stop()                       { close(c.stopped) }

func newCounters(t *testing.T, store *coordinatortest.MemStore) *counters {
	c := &counters{store: store}
	c.rt = coordinator.New(coordinator.Config[*counter]{
		Logger:         testkit.Logger(t, slog.LevelDebug),
		Topic:          "__counters",
		PartitionCount: func() int32 { return 1 },
		Queue:          4,
	})
	t.Cleanup(c.rt.Close)
	return c
}

func (c *counters) newCounter(a *coordinator.Actor[*counter]) *counter {
	return &counter{a: a, store: c.store, stopped: make(chan struct{})}
}

// load replays partition p: each record adds its value to its key.
func (c *counters) load(ctx context.Context, p int32) error {
	l, err := c.rt.Begin(p, 0)
	if err != nil || l == nil {
		return err
	}
	counts := make(map[string]int)
	if err := c.store.Replay(ctx, p, func(r coordinator.Record) error {
		n, err := strconv.Atoi(string(r.Value))
		counts[string(r.Key)] += n
		return err
	}); err != nil {
		l.Fail()
		return err
	}
	return l.Serve(func() {
		for key, n := range counts {
			c.rt.StartLocked(key, p, 0, func(a *coordinator.Actor[*counter]) *counter {
				s := c.newCounter(a)
				s.n = n
				return s
			})
		}
	})
}

// add writes an increment of key and returns the new count.
func (c *counters) add(ctx context.Context, key string, delta int) (int, error) {
	var n int
	var werr error
	_, err := c.rt.Run(ctx, key, c.newCounter, func(s *counter) {
		r := coordinator.Record{Key: []byte(key), Value: []byte(strconv.Itoa(delta))}
		if werr = s.store.Append(s.a.Context(), s.a.Partition(), []coordinator.Record{r}); werr == nil {
			s.n += delta
			n = s.n
		}
	})
	return n, errors.Join(err, werr)
}

func TestRuntimeToyCoordinator(t *testing.T) {
	ctx := testkit.Context(t)
	store := coordinatortest.NewMemStore()
	store.Write(0, coordinator.Record{Key: []byte("a"), Value: []byte("2")})
	store.Gate = make(chan struct{})
	c := newCounters(t, store)

	if _, err := c.add(ctx, "a", 1); coordinator.Code(err) != kerr.NotCoordinator.Code {
		t.Fatalf("before load: %v, want NOT_COORDINATOR", err)
	}
	loaded := make(chan error, 1)
	go func() { loaded <- c.load(ctx, 0) }()
	testkit.WaitFor(t, "the load to begin", func() (bool, string) {
		_, err := c.add(ctx, "a", 1)
		return coordinator.Code(err) == kerr.CoordinatorLoadInProgress.Code, "err " + errString(err)
	})
	close(store.Gate)
	if err := <-loaded; err != nil {
		t.Fatalf("load: %v", err)
	}

	// The replayed key's actor has its count; a new key gets an actor.
	if n, err := c.add(ctx, "a", 1); err != nil || n != 3 {
		t.Fatalf("add to a: %d, %v; want 3", n, err)
	}
	if n, err := c.add(ctx, "b", 5); err != nil || n != 5 {
		t.Fatalf("add to b: %d, %v; want 5", n, err)
	}
	// A key back at zero is reaped.
	if _, err := c.add(ctx, "b", -5); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "b to be reaped", func() (bool, string) {
		n := len(c.rt.Actors())
		return n == 1, strconv.Itoa(n) + " actors"
	})

	// Unload stops the actors of the partition; the next request is told
	// to look for the coordinator again.
	a := c.rt.Actors()[0]
	stopped := a.State().stopped
	c.rt.Unload(0)
	select {
	case <-stopped:
	default:
		t.Fatal("unload returned before a's actor stopped")
	}
	if _, err := c.add(ctx, "a", 1); !errors.Is(err, coordinator.ErrNotCoordinator) {
		t.Fatalf("after unload: %v, want ErrNotCoordinator", err)
	}

	// Loaded again, the log holds every write; Close stops everything.
	if err := c.load(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if n, err := c.add(ctx, "a", 0); err != nil || n != 3 {
		t.Fatalf("a after reload: %d, %v; want 3", n, err)
	}
	c.rt.Close()
	if _, err := c.add(ctx, "a", 1); coordinator.Code(err) != kerr.CoordinatorNotAvailable.Code {
		t.Fatalf("after close: %v, want COORDINATOR_NOT_AVAILABLE", err)
	}
	if err := c.load(ctx, 0); !errors.Is(err, coordinator.ErrClosed) {
		t.Fatalf("load after close: %v, want ErrClosed", err)
	}
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}
