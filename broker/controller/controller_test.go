package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/internal/testkit"
)

func testConfig(t testing.TB, dir string) Config {
	return Config{
		NodeID:  1,
		DataDir: dir,
		Logger:  testkit.Logger(t, slog.LevelInfo),
		Self:    metadata.Broker{Host: "127.0.0.1", Port: 9092},
	}
}

// start opens a controller, waits until it is ready and closes it when the
// test ends.
func start(t testing.TB, cfg Config) *Controller {
	t.Helper()
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// startWith starts an in-memory controller with the given broker configs.
func startWith(t testing.TB, configs map[string]string) *Controller {
	t.Helper()
	b, err := config.ParseBroker(configs)
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, "")
	cfg.Broker = b
	return start(t, cfg)
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestReadyImage(t *testing.T) {
	for _, mode := range []string{"memory", "disk"} {
		t.Run(mode, func(t *testing.T) {
			dir := ""
			if mode == "disk" {
				dir = t.TempDir()
			}
			begin := time.Now()
			c := start(t, testConfig(t, dir))
			t.Logf("%s: New+WaitReady took %v", mode, time.Since(begin))
			img := c.Image()
			if img.ClusterID == "" || len(img.ClusterID) != 22 {
				t.Errorf("cluster id %q", img.ClusterID)
			}
			if img.Controller != 1 {
				t.Errorf("controller %d", img.Controller)
			}
			b := img.Brokers[1]
			if b.Incarnation == (metadata.UUID{}) {
				t.Errorf("self registration %+v without an incarnation", b)
			}
			b.Incarnation = metadata.UUID{}
			if !b.Equal(metadata.Broker{ID: 1, Host: "127.0.0.1", Port: 9092}) {
				t.Errorf("self registration %+v", b)
			}
		})
	}
}

func TestTopicLifecycle(t *testing.T) {
	c := start(t, testConfig(t, ""))
	ctx := ctxT(t)
	changed := c.Changed()
	top, err := c.CreateTopic(ctx, TopicSpec{Name: "orders", Partitions: 3, ReplicationFactor: 1, Configs: map[string]string{"cleanup.policy": "compact"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-changed:
	default:
		t.Error("Changed not closed after create")
	}
	if top.ID == ([16]byte{}) || len(top.Partitions) != 3 || top.Configs["cleanup.policy"] != "compact" {
		t.Errorf("created %+v", top)
	}
	for i, p := range top.Partitions {
		if p.Index != int32(i) || p.Leader != 1 || len(p.Replicas) != 1 || len(p.ISR) != 1 {
			t.Errorf("partition %+v", p)
		}
	}
	if got, ok := c.Image().TopicByID(top.ID); !ok || got.Name != "orders" {
		t.Error("topic not found by id")
	}

	// Defaults come from the broker config.
	def, err := c.CreateTopic(ctx, TopicSpec{Name: "defaults", Partitions: -1, ReplicationFactor: -1}, false)
	if err != nil || len(def.Partitions) != 1 {
		t.Fatalf("defaults: %v %+v", err, def)
	}

	// Validate-only writes nothing.
	if _, err := c.CreateTopic(ctx, TopicSpec{Name: "dry", Partitions: 2, ReplicationFactor: 1}, true); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Image().Topic("dry"); ok {
		t.Error("validate-only created the topic")
	}

	if err := c.CreatePartitions(ctx, "orders", 5, nil, false); err != nil {
		t.Fatal(err)
	}
	if n := len(c.Image().Topics["orders"].Partitions); n != 5 {
		t.Errorf("%d partitions after CreatePartitions", n)
	}

	v := "1000"
	if err := c.AlterTopicConfigs(ctx, "orders", map[string]*string{"retention.ms": &v, "cleanup.policy": nil}, true, false); err != nil {
		t.Fatal(err)
	}
	if cfg := c.Image().Topics["orders"].Configs; len(cfg) != 1 || cfg["retention.ms"] != "1000" {
		t.Errorf("configs after incremental alter %v", cfg)
	}
	seg := "1048576"
	if err := c.AlterTopicConfigs(ctx, "orders", map[string]*string{"segment.bytes": &seg, "flush.ms": nil}, false, false); err != nil {
		t.Fatal(err)
	}
	if cfg := c.Image().Topics["orders"].Configs; len(cfg) != 1 || cfg["segment.bytes"] != "1048576" {
		t.Errorf("configs after replacing alter %v", cfg)
	}

	if err := c.DeleteTopic(ctx, "orders"); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Image().Topic("orders"); ok {
		t.Error("deleted topic still there")
	}
	if _, ok := c.Image().TopicByID(top.ID); ok {
		t.Error("deleted topic id still there")
	}
}

func TestErrors(t *testing.T) {
	c := startWith(t, map[string]string{"delete.topic.enable": "false"})
	ctx := ctxT(t)
	if _, err := c.CreateTopic(ctx, TopicSpec{Name: "a.b", Partitions: 1, ReplicationFactor: 1}, false); err != nil {
		t.Fatal(err)
	}
	bad := "nope"
	for _, tc := range []struct {
		name string
		err  error
		fn   func() error
	}{
		{"exists", ErrTopicExists, func() error {
			_, err := c.CreateTopic(ctx, TopicSpec{Name: "a.b", Partitions: 1, ReplicationFactor: 1}, false)
			return err
		}},
		{"collision", ErrTopicCollision, func() error {
			_, err := c.CreateTopic(ctx, TopicSpec{Name: "a_b", Partitions: 1, ReplicationFactor: 1}, false)
			return err
		}},
		{"collision is invalid topic", ErrInvalidTopic, func() error {
			_, err := c.CreateTopic(ctx, TopicSpec{Name: "a_b", Partitions: 1, ReplicationFactor: 1}, false)
			return err
		}},
		{"bad name", ErrInvalidTopic, func() error {
			_, err := c.CreateTopic(ctx, TopicSpec{Name: "a b", Partitions: 1, ReplicationFactor: 1}, false)
			return err
		}},
		{"long name", ErrInvalidTopic, func() error {
			_, err := c.CreateTopic(ctx, TopicSpec{Name: strings.Repeat("x", 250), Partitions: 1, ReplicationFactor: 1}, false)
			return err
		}},
		{"zero partitions", ErrInvalidPartitions, func() error {
			_, err := c.CreateTopic(ctx, TopicSpec{Name: "z", Partitions: 0, ReplicationFactor: 1}, false)
			return err
		}},
		{"huge partitions", ErrInvalidPartitions, func() error {
			_, err := c.CreateTopic(ctx, TopicSpec{Name: "z", Partitions: 1 << 30, ReplicationFactor: 1}, false)
			return err
		}},
		{"rf too large", ErrInvalidReplicationFactor, func() error {
			_, err := c.CreateTopic(ctx, TopicSpec{Name: "z", Partitions: 1, ReplicationFactor: 3}, false)
			return err
		}},
		{"rf zero", ErrInvalidReplicationFactor, func() error {
			_, err := c.CreateTopic(ctx, TopicSpec{Name: "z", Partitions: 1, ReplicationFactor: 0}, false)
			return err
		}},
		{"assignment with counts", ErrInvalidRequest, func() error {
			_, err := c.CreateTopic(ctx, TopicSpec{Name: "z", Partitions: 1, ReplicationFactor: -1, Assignment: []PartitionReplicas{{0, []int32{1}}}}, false)
			return err
		}},
		{"assignment gap", ErrInvalidReplicaAssignment, func() error {
			_, err := c.CreateTopic(ctx, TopicSpec{Name: "z", Partitions: -1, ReplicationFactor: -1, Assignment: []PartitionReplicas{{0, []int32{1}}, {2, []int32{1}}}}, false)
			return err
		}},
		{"assignment unknown broker", ErrInvalidReplicaAssignment, func() error {
			_, err := c.CreateTopic(ctx, TopicSpec{Name: "z", Partitions: -1, ReplicationFactor: -1, Assignment: []PartitionReplicas{{0, []int32{7}}}}, false)
			return err
		}},
		{"bad config value", ErrInvalidConfig, func() error {
			_, err := c.CreateTopic(ctx, TopicSpec{Name: "z", Partitions: 1, ReplicationFactor: 1, Configs: map[string]string{"cleanup.policy": "shred"}}, false)
			return err
		}},
		{"unknown config", config.ErrUnknownConfig, func() error {
			_, err := c.CreateTopic(ctx, TopicSpec{Name: "z", Partitions: 1, ReplicationFactor: 1, Configs: map[string]string{"log.retention.ms": "1"}}, false)
			return err
		}},
		{"delete disabled", ErrTopicDeletionDisabled, func() error { return c.DeleteTopic(ctx, "a.b") }},
		{"partitions unknown topic", ErrUnknownTopic, func() error { return c.CreatePartitions(ctx, "nope", 3, nil, false) }},
		{"partitions same", ErrInvalidPartitions, func() error { return c.CreatePartitions(ctx, "a.b", 1, nil, false) }},
		{"partitions fewer", ErrInvalidPartitions, func() error { return c.CreatePartitions(ctx, "a.b", 0, nil, false) }},
		{"alter unknown topic", ErrUnknownTopic, func() error { return c.AlterTopicConfigs(ctx, "nope", nil, true, false) }},
		{"alter bad value", ErrInvalidConfig, func() error {
			return c.AlterTopicConfigs(ctx, "a.b", map[string]*string{"retention.ms": &bad}, true, false)
		}},
		{"alter delete unknown", ErrInvalidConfig, func() error {
			return c.AlterTopicConfigs(ctx, "a.b", map[string]*string{"bogus": nil}, true, false)
		}},
		{"pid block zero", ErrInvalidRequest, func() error { _, err := c.AllocateProducerIDs(ctx, 0); return err }},
	} {
		if err := tc.fn(); !errors.Is(err, tc.err) {
			t.Errorf("%s: got %v, want %v", tc.name, err, tc.err)
		}
	}
	if _, ok := c.Image().Topic("z"); ok {
		t.Error("a failed create left a topic")
	}
}

func TestConcurrentCreates(t *testing.T) {
	c := start(t, testConfig(t, t.TempDir()))
	ctx := ctxT(t)
	const n = 16
	var wg sync.WaitGroup
	errs := make([]error, n)
	ids := make([][16]byte, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			top, err := c.CreateTopic(ctx, TopicSpec{Name: "same", Partitions: int32(i + 1), ReplicationFactor: 1}, false)
			errs[i] = err
			if err == nil {
				ids[i] = top.ID
			}
		}()
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if won >= 0 {
				t.Fatalf("creates %d and %d both succeeded", won, i)
			}
			won = i
		case !errors.Is(err, ErrTopicExists):
			t.Errorf("create %d: %v", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no create succeeded")
	}
	if got := c.Image().Topics["same"]; got.ID != ids[won] || len(got.Partitions) != won+1 {
		t.Errorf("image holds %+v, winner was %d", got, won)
	}

	// Distinct names all succeed, with distinct IDs.
	for i, err := range createEach(ctx, c, n) {
		if err != nil {
			t.Errorf("create t%d: %v", i, err)
		}
	}
	if img := c.Image(); len(img.Topics) != n+1 || len(img.TopicIDs) != n+1 {
		t.Errorf("%d topics, %d ids", len(img.Topics), len(img.TopicIDs))
	}
}

// createEach creates topics t0 to t<n-1>, of one partition each, all at
// once, and returns their errors.
func createEach(ctx context.Context, c *Controller, n int) []error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = c.CreateTopic(ctx, TopicSpec{Name: fmt.Sprintf("t%d", i), Partitions: 1, ReplicationFactor: 1}, false)
		}()
	}
	wg.Wait()
	return errs
}

func TestRestart(t *testing.T) {
	for _, snapshot := range []bool{false, true} {
		t.Run(fmt.Sprintf("snapshot=%v", snapshot), func(t *testing.T) {
			dir := t.TempDir()
			ctx := ctxT(t)
			c, err := New(testConfig(t, dir))
			if err != nil {
				t.Fatal(err)
			}
			if err := c.WaitReady(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CreateTopic(ctx, TopicSpec{Name: "keep", Partitions: 2, ReplicationFactor: 1, Configs: map[string]string{"retention.ms": "5"}}, false); err != nil {
				t.Fatal(err)
			}
			if _, err := c.CreateTopic(ctx, TopicSpec{Name: "gone", Partitions: 1, ReplicationFactor: 1}, false); err != nil {
				t.Fatal(err)
			}
			v := "compact"
			if err := c.AlterTopicConfigs(ctx, "keep", map[string]*string{"cleanup.policy": &v}, true, false); err != nil {
				t.Fatal(err)
			}
			if err := c.DeleteTopic(ctx, "gone"); err != nil {
				t.Fatal(err)
			}
			first, err := c.AllocateProducerIDs(ctx, 1000)
			if err != nil {
				t.Fatal(err)
			}
			alice := metadata.QuotaEntity{User: metadata.Named("alice"), ClientID: metadata.DefaultName}
			if errs, err := c.AlterClientQuotas(ctx, []QuotaAlteration{{Entity: alice, Ops: []QuotaOp{{Key: metadata.QuotaProducerByteRate, Value: new(1024.0)}}}}, false); err != nil || errs[0] != nil {
				t.Fatalf("alter client quotas: %v %v", err, errs)
			}
			if snapshot {
				if err := c.raft.Snapshot().Error(); err != nil {
					t.Fatal(err)
				}
			}
			before := c.Image()
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			if err := c.Close(); err != nil {
				t.Fatalf("second Close: %v", err)
			}

			c2 := start(t, testConfig(t, dir))
			after := c2.Image()
			if after.ClusterID != before.ClusterID {
				t.Errorf("cluster id %q became %q", before.ClusterID, after.ClusterID)
			}
			keep, ok := after.Topic("keep")
			if !ok || keep.ID != before.Topics["keep"].ID || len(keep.Partitions) != 2 ||
				keep.Configs["retention.ms"] != "5" || keep.Configs["cleanup.policy"] != "compact" {
				t.Errorf("keep after restart: %+v", keep)
			}
			if _, ok := after.Topic("gone"); ok {
				t.Error("deleted topic came back")
			}
			if q := after.ClientQuotas[alice]; q[metadata.QuotaProducerByteRate] != 1024 || len(after.ClientQuotas) != 1 {
				t.Errorf("client quotas after restart: %v", after.ClientQuotas)
			}
			second, err := c2.AllocateProducerIDs(ctx, 1000)
			if err != nil {
				t.Fatal(err)
			}
			if second < first+1000 {
				t.Errorf("producer id block %d overlaps the one at %d", second, first)
			}
			if _, err := c2.CreateTopic(ctx, TopicSpec{Name: "keep", Partitions: 1, ReplicationFactor: 1}, false); !errors.Is(err, ErrTopicExists) {
				t.Errorf("recreate after restart: %v", err)
			}
		})
	}
}

func TestClosed(t *testing.T) {
	c := start(t, testConfig(t, ""))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	if err := c.WaitReady(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("WaitReady after close: %v", err)
	}
	if _, err := c.CreateTopic(ctx, TopicSpec{Name: "x", Partitions: 1, ReplicationFactor: 1}, false); !errors.Is(err, ErrClosed) {
		t.Errorf("CreateTopic after close: %v", err)
	}
	if _, err := c.AllocateProducerIDs(ctx, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("AllocateProducerIDs after close: %v", err)
	}
	if c.Image() == nil {
		t.Error("nil image after close")
	}
}

func TestWaitReadyContext(t *testing.T) {
	c, err := New(testConfig(t, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if c.Ready() {
		return // already ready: nothing to cancel
	}
	if err := c.WaitReady(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitReady with cancelled context: %v", err)
	}
}

func TestPlacementRotates(t *testing.T) {
	c := start(t, testConfig(t, ""))
	ctx := ctxT(t)
	// Register two more brokers directly through the log, as joining
	// nodes will.
	for _, id := range []int32{2, 3} {
		res, err := c.propose(ctx, &metadata.RegisterBrokerRecord{
			Broker: metadata.Broker{ID: id, Host: "127.0.0.1", Port: 9092 + id},
		})
		if err != nil || res.err != nil {
			t.Fatal(err, res.err)
		}
	}
	leaders := map[int32]int{}
	for i := range 3 {
		top, err := c.CreateTopic(ctx, TopicSpec{Name: fmt.Sprintf("r%d", i), Partitions: 3, ReplicationFactor: 2}, false)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range top.Partitions {
			leaders[p.Leader]++
			if len(p.Replicas) != 2 || p.Replicas[0] == p.Replicas[1] {
				t.Errorf("replicas %v", p.Replicas)
			}
		}
		if first := top.Partitions[0].Leader; first != int32(i%3)+1 {
			t.Errorf("topic %d starts at broker %d", i, first)
		}
	}
	for id := int32(1); id <= 3; id++ {
		if leaders[id] != 3 {
			t.Errorf("broker %d leads %d partitions, want 3", id, leaders[id])
		}
	}
}

func BenchmarkStartup(b *testing.B) {
	for _, mode := range []string{"memory", "disk"} {
		b.Run(mode, func(b *testing.B) {
			for b.Loop() {
				dir := ""
				if mode == "disk" {
					dir = b.TempDir()
				}
				c, err := New(Config{NodeID: 1, DataDir: dir, Self: metadata.Broker{Host: "127.0.0.1", Port: 9092}})
				if err != nil {
					b.Fatal(err)
				}
				if err := c.WaitReady(context.Background()); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				c.Close()
				b.StartTimer()
			}
		})
	}
}

func BenchmarkCreateTopic(b *testing.B) {
	for _, mode := range []string{"memory", "disk"} {
		b.Run(mode, func(b *testing.B) {
			dir := ""
			if mode == "disk" {
				dir = b.TempDir()
			}
			c := start(b, Config{NodeID: 1, DataDir: dir, Self: metadata.Broker{Host: "127.0.0.1", Port: 9092}})
			i := 0
			for b.Loop() {
				if _, err := c.CreateTopic(context.Background(), TopicSpec{Name: fmt.Sprintf("b%d", i), Partitions: 1, ReplicationFactor: 1}, false); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

func TestDataDirOfAnotherNode(t *testing.T) {
	dir := t.TempDir()
	c, err := New(testConfig(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t, dir)
	cfg.NodeID = 2
	c2, err := New(cfg)
	if err == nil {
		c2.Close()
		t.Fatal("node 2 started on node 1's data dir")
	}
	if !strings.Contains(err.Error(), "not a voter") {
		t.Errorf("error %v", err)
	}
	// The directory is still usable by its node.
	start(t, testConfig(t, dir))
}

func TestRaftLogsRouted(t *testing.T) {
	var mu sync.Mutex
	var buf strings.Builder
	w := writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	})
	cfg := testConfig(t, "")
	cfg.Logger = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
	c := start(t, cfg)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	if !strings.Contains(out, "component=raft") {
		t.Errorf("no raft logs at debug level:\n%s", out)
	}

	buf.Reset()
	cfg.Logger = slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c = start(t, cfg)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	out = buf.String()
	mu.Unlock()
	if strings.Contains(out, "level=DEBUG") || strings.Contains(out, "entering") || strings.Contains(out, "election") {
		t.Errorf("routine raft logs at info level:\n%s", out)
	}
}

// TestCloseWithProposalsInFlight: Close returns, and so does every
// proposal, however many are in flight when it is called. Raft leaves a
// future unanswered when it shuts down between committing and applying
// its entry; a wait on such a future must not hold up Close.
func TestCloseWithProposalsInFlight(t *testing.T) {
	for round := range 20 {
		c := start(t, testConfig(t, ""))
		var wg sync.WaitGroup
		for i := range 64 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				spec := TopicSpec{Name: fmt.Sprintf("t%d-%d", round, i), Partitions: 1, ReplicationFactor: 1}
				_, _ = c.CreateTopic(context.Background(), spec, false)
			}()
		}
		closed := make(chan struct{})
		go func() {
			c.Close()
			wg.Wait()
			close(closed)
		}()
		select {
		case <-closed:
		case <-time.After(testkit.WaitTimeout):
			t.Fatalf("round %d: Close or a proposal did not return within %v", round, testkit.WaitTimeout)
		}
	}
}

// TestPartitionLimit: klog.max.partitions bounds the partition replicas
// on the node across concurrent creations, and a creation past it is
// refused before its partitions are placed: refusing 60,000 allocates
// next to nothing.
func TestPartitionLimit(t *testing.T) {
	c := startWith(t, map[string]string{"klog.max.partitions": "10"})
	ctx := ctxT(t)

	created := 0
	for i, err := range createEach(ctx, c, 16) {
		switch {
		case err == nil:
			created++
		case !errors.Is(err, ErrPolicyViolation):
			t.Errorf("create t%d: %v", i, err)
		}
	}
	if created != 10 || len(c.Image().Topics) != 10 {
		t.Errorf("%d creations succeeded, %d topics, want 10", created, len(c.Image().Topics))
	}
	// Which 10 of the 16 got in is up to the race: grow one that did.
	var grown string
	for name := range c.Image().Topics {
		grown = name
		break
	}
	if err := c.CreatePartitions(ctx, grown, 2, nil, true); !errors.Is(err, ErrPolicyViolation) {
		t.Errorf("grow %s past the limit: %v", grown, err)
	}

	allocs := testing.AllocsPerRun(10, func() {
		if _, err := c.CreateTopic(ctx, TopicSpec{Name: "big", Partitions: 60000, ReplicationFactor: 1}, true); !errors.Is(err, ErrPolicyViolation) {
			t.Fatalf("create 60,000: %v", err)
		}
	})
	if allocs > 100 {
		t.Errorf("refusing 60,000 partitions allocated %.0f times", allocs)
	}
}

// TestRaftPeerErrorsWarn: Raft's errors about unreachable peers, routine
// while a voter is down, are logged as warnings; other errors stay errors.
func TestRaftPeerErrorsWarn(t *testing.T) {
	var buf strings.Builder
	l := newRaftLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})))
	l.Error("failed to appendEntries to", "peer", "2")
	l.Error("failed to persist vote", "err", "disk")
	out := buf.String()
	if !strings.Contains(out, `level=WARN msg="failed to appendEntries to"`) || !strings.Contains(out, `level=ERROR msg="failed to persist vote"`) {
		t.Errorf("levels:\n%s", out)
	}
}

// TestAlterClientQuotasWritesChangesOnly: as Kafka's controller, a value
// set to what it is and the removal of a key not set write no record; a
// refused alteration writes nothing of its own while the others commit.
func TestAlterClientQuotasWritesChangesOnly(t *testing.T) {
	c := start(t, testConfig(t, ""))
	ctx := ctxT(t)
	alice := metadata.QuotaEntity{User: metadata.Named("alice")}
	bob := metadata.QuotaEntity{User: metadata.Named("bob")}
	set := func(e metadata.QuotaEntity, key string, v *float64) QuotaAlteration {
		return QuotaAlteration{Entity: e, Ops: []QuotaOp{{Key: key, Value: v}}}
	}
	errs, err := c.AlterClientQuotas(ctx, []QuotaAlteration{
		set(alice, metadata.QuotaProducerByteRate, new(10.0)),
		set(bob, metadata.QuotaProducerByteRate, new(-1.0)),
	}, false)
	if err != nil || errs[0] != nil || !errors.Is(errs[1], ErrInvalidRequest) {
		t.Fatalf("alter: %v %v", err, errs)
	}
	index := c.Image().Index
	errs, err = c.AlterClientQuotas(ctx, []QuotaAlteration{
		set(alice, metadata.QuotaProducerByteRate, new(10.0)),
		set(alice, metadata.QuotaConsumerByteRate, nil),
		set(bob, metadata.QuotaProducerByteRate, nil),
	}, false)
	if err != nil || errs[0] != nil || errs[1] != nil || errs[2] != nil {
		t.Fatalf("alter: %v %v", err, errs)
	}
	if got := c.Image().Index; got != index {
		t.Errorf("alterations that change nothing moved the log from %d to %d", index, got)
	}
	if q := c.Image().ClientQuotas; len(q) != 1 || q[alice][metadata.QuotaProducerByteRate] != 10 {
		t.Errorf("quotas: %v", q)
	}
}
