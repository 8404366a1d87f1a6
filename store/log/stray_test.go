package log

import (
	"errors"
	"log/slog"
	"slices"
	"testing"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/vfs"
)

// TestCreateRefusesOtherTopicID: Create never hands out the log of
// another topic of the same name: a log whose partition.metadata names
// another topic ID is refused with ErrInconsistentTopicID. A log without
// partition.metadata is handed out and gets one.
func TestCreateRefusesOtherTopicID(t *testing.T) {
	fsys, clk, cfg := vfs.NewMem(), newClock(), DefaultConfig()
	m := openManager(t, fsys, clk, cfg)
	old, other := [16]byte{1}, [16]byte{2}
	l, err := m.Create("c", 0, old, cfg)
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, l, logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Values(3, 10)...), 0)
	if got, err := m.Create("c", 0, other, cfg); !errors.Is(err, ErrInconsistentTopicID) {
		t.Fatalf("Create of another topic id: got a log (%v), err %v; want ErrInconsistentTopicID", got != nil, err)
	}
	if got, err := m.Create("c", 0, old, cfg); err != nil || got != l {
		t.Fatalf("Create of its own topic id: %v %v", got, err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	// Without partition.metadata, as a crash between the directory and the
	// file leaves it.
	if err := fsys.Remove("/data/c-0/" + PartitionMetadataFile); err != nil {
		t.Fatal(err)
	}
	m = openManager(t, fsys, clk, cfg)
	defer m.Close()
	if _, err := m.Create("c", 0, other, cfg); err != nil {
		t.Fatal(err)
	}
	if id, ok := m.TopicID("c", 0); !ok || id != other {
		t.Errorf("topic id %v %v, want %v", id, ok, other)
	}
	if b, err := readFile(fsys, "/data/c-0/"+PartitionMetadataFile, 100); err != nil || string(b) != string(encodePartitionMetadata(other)) {
		t.Errorf("partition.metadata %q %v", b, err)
	}
}

// TestOpenManagerMovesStrayLogsAside: with ManagerOptions.TopicID, a log
// whose topic the cluster does not have under that ID (deleted, or deleted
// and created again) is not opened but renamed aside, data intact, and a
// new log of the topic starts empty; the logs of the cluster's topics,
// and one without partition.metadata, open as before.
func TestOpenManagerMovesStrayLogsAside(t *testing.T) {
	fsys, clk, cfg := vfs.NewMem(), newClock(), DefaultConfig()
	m := openManager(t, fsys, clk, cfg)
	oldC, newC, keptID, goneID := [16]byte{1}, [16]byte{2}, [16]byte{3}, [16]byte{4}
	for _, p := range []struct {
		topic string
		id    [16]byte
	}{{"c", oldC}, {"kept", keptID}, {"gone", goneID}, {"noid", keptID}} {
		l, err := m.Create(p.topic, 0, p.id, cfg)
		if err != nil {
			t.Fatal(err)
		}
		mustAppend(t, l, logtest.BatchWith(logtest.Options{BaseTimestamp: clk.UnixMilli()}, logtest.Values(5, 10)...), 0)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fsys.Remove("/data/noid-0/" + PartitionMetadataFile); err != nil {
		t.Fatal(err)
	}
	cluster := map[string][16]byte{"c": newC, "kept": keptID, "noid": keptID}
	open := func() *Manager {
		m, err := OpenManager(fsys, "/data", ManagerOptions{Logger: testkit.Logger(t, slog.LevelDebug), Now: clk.Now,
			TopicID: func(topic string) ([16]byte, bool) { id, ok := cluster[topic]; return id, ok }})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m = open()
	var opened []string
	for tp := range m.Logs() {
		opened = append(opened, tp.Dir())
	}
	slices.Sort(opened)
	if want := []string{"kept-0", "noid-0"}; !slices.Equal(opened, want) {
		t.Errorf("opened %v, want %v", opened, want)
	}
	l, err := m.Create("c", 0, newC, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if l.EndOffset() != 0 {
		t.Errorf("new topic c starts at %d: it was given the old topic's log", l.EndOffset())
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	names, err := fsys.List("/data")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"c-0." + topicIDString(oldC) + "-stray", "gone-0." + topicIDString(goneID) + "-stray"} {
		if !slices.Contains(names, want) {
			t.Errorf("data dir %v lacks %s", names, want)
		} else if st, err := fsys.Stat("/data/" + want + "/00000000000000000000.log"); err != nil || st.Size() == 0 {
			t.Errorf("stray %s lost its data: %v", want, err)
		}
	}
	// A stray directory is not a log: the next open leaves it alone.
	m = open()
	defer m.Close()
	if got := len(m.Logs()); got != 3 {
		t.Errorf("%d logs after reopening, want 3", got)
	}
}
