package group

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/internal/testkit"
)

// classicHarness drives one classic group "g" through datadriven commands.
type classicHarness struct {
	t       *testing.T
	c       *Coordinator
	store   *memStore
	clock   *testkit.Clock
	ids     map[string]string // name -> member id
	gens    map[string]int32  // name -> generation of its last join
	waits   []pendingWait
	printed int // records already printed
}

type pendingWait struct {
	name string
	join *joinWait
	sync *syncWait
}

func TestClassicDatadriven(t *testing.T) { runClassicDatadriven(t, "testdata/classic") }

// TestTxnDatadriven drives transactional offset commits of a classic group
// with the same commands, plus txn-commit, end-txn, fence and reload.
func TestTxnDatadriven(t *testing.T) { runClassicDatadriven(t, "testdata/txn") }

func runClassicDatadriven(t *testing.T, dir string) {
	datadriven.Walk(t, dir, func(t *testing.T, path string) {
		var h *classicHarness
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			if d.Cmd == "new" {
				h = newClassicHarness(t, d)
				return ""
			}
			if h == nil {
				t.Fatalf("%s: first command must be new", d.Pos)
			}
			var out strings.Builder
			h.cmd(t, d, &out)
			h.pollWaits(&out)
			return out.String()
		})
	})
}

func newClassicHarness(t *testing.T, d *datadriven.TestData) *classicHarness {
	h := &classicHarness{t: t, ids: map[string]string{}, gens: map[string]int32{}}
	h.c, h.store, h.clock = newTestCoordinator(t, func(cfg *Config) {
		for _, a := range d.CmdArgs {
			switch a.Key {
			case "delay":
				cfg.InitialRebalanceDelay = mustDuration(t, a.Vals[0])
			case "max-size":
				n, _ := strconv.Atoi(a.Vals[0])
				cfg.MaxSize = n
			case "retention":
				cfg.OffsetsRetention = mustDuration(t, a.Vals[0])
			case "retention-check":
				cfg.OffsetsRetentionCheckInterval = mustDuration(t, a.Vals[0])
			case "topics": // the topics that exist, 4 partitions each
				topics := map[string]TopicInfo{}
				for _, name := range a.Vals {
					topics[name] = TopicInfo{Name: name, Partitions: 4}
				}
				cfg.Topics = func() map[string]TopicInfo { return topics }
			}
		}
	})
	return h
}

func mustDuration(t *testing.T, s string) time.Duration {
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func arg(d *datadriven.TestData, key, def string) string {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			if len(a.Vals) == 0 {
				return ""
			}
			return strings.Join(a.Vals, ",")
		}
	}
	return def
}

func hasArg(d *datadriven.TestData, key string) bool {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			return true
		}
	}
	return false
}

func argInt(t *testing.T, d *datadriven.TestData, key string, def int) int {
	v := arg(d, key, "")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatalf("%s: %s=%q: %v", d.Pos, key, v, err)
	}
	return n
}

func argMillis(t *testing.T, d *datadriven.TestData, key string, def time.Duration) int32 {
	v := arg(d, key, "")
	if v == "" {
		return int32(def / time.Millisecond)
	}
	return int32(mustDuration(t, v) / time.Millisecond)
}

// name returns the datadriven name of member id.
func (h *classicHarness) name(id string) string {
	if id == "" {
		return `""`
	}
	var names []string
	for n, mid := range h.ids {
		if mid == id {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "?" + id
	}
	return names[0]
}

func errName(code int16) string {
	if code == 0 {
		return "OK"
	}
	return kerr.ErrorForCode(code).(*kerr.Error).Message
}

func strPtr(s string) *string { return &s }

func (h *classicHarness) cmd(t *testing.T, d *datadriven.TestData, out *strings.Builder) {
	ctx := testkit.Context(t)
	name := ""
	if len(d.CmdArgs) > 0 && len(d.CmdArgs[0].Vals) == 0 {
		name = d.CmdArgs[0].Key
	}
	switch d.Cmd {
	case "join":
		req := kmsg.NewPtrJoinGroupRequest()
		req.Version = int16(argInt(t, d, "v", 9))
		req.Group = arg(d, "group", "g")
		req.MemberID = arg(d, "id", h.ids[name])
		if hasArg(d, "new") {
			req.MemberID = ""
		}
		if i := arg(d, "instance", ""); i != "" {
			req.InstanceID = strPtr(i)
		}
		req.SessionTimeoutMillis = argMillis(t, d, "session", 10*time.Second)
		req.RebalanceTimeoutMillis = argMillis(t, d, "rebalance", 30*time.Second)
		req.ProtocolType = arg(d, "type", "consumer")
		meta := arg(d, "meta", "m")
		for _, p := range strings.Split(arg(d, "protocols", "range"), ",") {
			req.Protocols = append(req.Protocols, kmsg.JoinGroupRequestProtocol{Name: p, Metadata: []byte(meta)})
		}
		w := h.c.startJoin(WithClient(ctx, name, "host-"+name), req)
		h.waits = append(h.waits, pendingWait{name: name, join: w})
	case "sync":
		req := kmsg.NewPtrSyncGroupRequest()
		req.Version = 5
		req.Group = "g"
		req.MemberID = h.ids[name]
		req.Generation = int32(argInt(t, d, "gen", int(h.gens[name])))
		if i := arg(d, "instance", ""); i != "" {
			req.InstanceID = strPtr(i)
		}
		if a := arg(d, "assign", ""); a != "" {
			for _, kv := range strings.Split(a, ",") {
				k, v, _ := strings.Cut(kv, "=")
				req.GroupAssignment = append(req.GroupAssignment, kmsg.SyncGroupRequestGroupAssignment{MemberID: h.ids[k], MemberAssignment: []byte(v)})
			}
		}
		w := h.c.startSync(ctx, req)
		h.waits = append(h.waits, pendingWait{name: name, sync: w})
	case "heartbeat":
		req := kmsg.NewPtrHeartbeatRequest()
		req.Version = 4
		req.Group = "g"
		req.MemberID = h.ids[name]
		req.Generation = int32(argInt(t, d, "gen", int(h.gens[name])))
		if i := arg(d, "instance", ""); i != "" {
			req.InstanceID = strPtr(i)
		}
		resp := h.c.Heartbeat(ctx, req)
		fmt.Fprintf(out, "%s: heartbeat %s\n", name, errName(resp.ErrorCode))
	case "leave":
		req := kmsg.NewPtrLeaveGroupRequest()
		req.Version = 5
		req.Group = arg(d, "group", "g")
		for _, a := range d.CmdArgs {
			m := kmsg.LeaveGroupRequestMember{}
			if a.Key == "group" {
				continue
			}
			if a.Key == "instance" {
				// instance=i or instance=(i,name): by instance id, and member id.
				m.InstanceID = strPtr(a.Vals[0])
				if len(a.Vals) > 1 {
					m.MemberID = h.ids[a.Vals[1]]
				}
			} else {
				m.MemberID = h.ids[a.Key]
			}
			req.Members = append(req.Members, m)
		}
		resp := h.c.LeaveGroup(ctx, req)
		fmt.Fprintf(out, "leave %s", errName(resp.ErrorCode))
		for _, m := range resp.Members {
			who := h.name(m.MemberID)
			if m.InstanceID != nil {
				who = "instance " + *m.InstanceID
			}
			fmt.Fprintf(out, "; %s %s", who, errName(m.ErrorCode))
		}
		out.WriteString("\n")
	case "advance":
		h.clock.Advance(mustDuration(t, d.CmdArgs[0].Key))
		h.c.Tick(ctx)
	case "state":
		h.printState(out)
	case "records":
		recs := h.store.Records(0)
		for _, r := range recs[h.printed:] {
			out.WriteString(describeRecord(t, r, h.name) + "\n")
		}
		h.printed = len(recs)
	case "fail-appends":
		h.store.mu.Lock()
		h.store.SetFail(errInjected)
		h.store.mu.Unlock()
	case "heal-appends":
		h.store.mu.Lock()
		h.store.SetFail(nil)
		h.store.mu.Unlock()
	case "commit":
		req := kmsg.NewPtrOffsetCommitRequest()
		req.Version = int16(argInt(t, d, "v", 8))
		req.Group = arg(d, "group", "g")
		req.Generation = -1
		if name != "simple" {
			req.MemberID = h.ids[name]
			req.Generation = int32(argInt(t, d, "gen", int(h.gens[name])))
		}
		for _, a := range d.CmdArgs[1:] {
			if a.Key == "gen" || a.Key == "v" || a.Key == "group" {
				continue
			}
			topic, p, _ := strings.Cut(a.Key, "/")
			part, _ := strconv.Atoi(p)
			off, _ := strconv.Atoi(a.Vals[0])
			req.Topics = append(req.Topics, kmsg.OffsetCommitRequestTopic{Topic: topic, Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: int32(part), Offset: int64(off), LeaderEpoch: -1}}})
		}
		resp := h.c.OffsetCommit(ctx, req)
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				fmt.Fprintf(out, "%s: commit %s/%d %s\n", name, rt.Topic, rp.Partition, errName(rp.ErrorCode))
			}
		}
	case "fetch":
		// fetch [v=N] [stable] [t/0 t/1 ...]: every offset of g, or those
		// partitions; stable sets RequireStable.
		req := kmsg.NewPtrOffsetFetchRequest()
		req.Version = int16(argInt(t, d, "v", 8))
		req.RequireStable = hasArg(d, "stable")
		var topics []kmsg.OffsetFetchRequestTopic
		for _, a := range d.CmdArgs {
			topic, p, ok := strings.Cut(a.Key, "/")
			if !ok {
				continue
			}
			part, _ := strconv.Atoi(p)
			if n := len(topics); n > 0 && topics[n-1].Topic == topic {
				topics[n-1].Partitions = append(topics[n-1].Partitions, int32(part))
			} else {
				topics = append(topics, kmsg.OffsetFetchRequestTopic{Topic: topic, Partitions: []int32{int32(part)}})
			}
		}
		resp := h.c.OffsetFetch(ctx, h.fetchRequest(req, topics))
		printPartition := func(topic string, part int32, off int64, code int16) {
			if code != 0 {
				fmt.Fprintf(out, " %s/%d=%s", topic, part, errName(code))
				return
			}
			fmt.Fprintf(out, " %s/%d=%d", topic, part, off)
		}
		if req.Version < 8 {
			fmt.Fprintf(out, "fetch %s", errName(resp.ErrorCode))
			for _, rt := range resp.Topics {
				for _, rp := range rt.Partitions {
					printPartition(rt.Topic, rp.Partition, rp.Offset, rp.ErrorCode)
				}
			}
			out.WriteString("\n")
		}
		for _, rg := range resp.Groups {
			fmt.Fprintf(out, "fetch %s", errName(rg.ErrorCode))
			for _, rt := range rg.Topics {
				for _, rp := range rt.Partitions {
					printPartition(rt.Topic, rp.Partition, rp.Offset, rp.ErrorCode)
				}
			}
			out.WriteString("\n")
		}
	case "txn-commit":
		// txn-commit <member|anon> pid=N [epoch=E] [v=3] [gen=G] t/0=5 ...:
		// anon commits without member id and generation.
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.Version = int16(argInt(t, d, "v", 3))
		req.TransactionalID = "tx-" + arg(d, "pid", "1")
		req.Group = "g"
		req.ProducerID = int64(argInt(t, d, "pid", 1))
		req.ProducerEpoch = int16(argInt(t, d, "epoch", 0))
		if name != "anon" {
			req.MemberID = h.ids[name]
			req.Generation = int32(argInt(t, d, "gen", int(h.gens[name])))
			if i := arg(d, "instance", ""); i != "" {
				req.InstanceID = strPtr(i)
			}
		}
		for _, a := range d.CmdArgs {
			topic, p, ok := strings.Cut(a.Key, "/")
			if !ok {
				continue
			}
			part, _ := strconv.Atoi(p)
			off, _ := strconv.Atoi(a.Vals[0])
			req.Topics = append(req.Topics, kmsg.TxnOffsetCommitRequestTopic{Topic: topic, Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: int32(part), Offset: int64(off), LeaderEpoch: -1}}})
		}
		resp := h.c.TxnOffsetCommit(ctx, req)
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				fmt.Fprintf(out, "%s: txn-commit %s/%d %s\n", name, rt.Topic, rp.Partition, errName(rp.ErrorCode))
			}
		}
	case "end-txn":
		// end-txn pid=N commit|abort: the broker writes the marker, then
		// reports it.
		pid := int64(argInt(t, d, "pid", 1))
		commit := hasArg(d, "commit")
		if !commit && !hasArg(d, "abort") {
			t.Fatalf("%s: end-txn needs commit or abort", d.Pos)
		}
		h.store.marker(0, pid, commit)
		h.c.CompleteTransaction(0, pid, commit)
	case "fence":
		// fence pid=N epoch=E: a newer epoch of the producer exists.
		h.store.bumpEpoch(int64(argInt(t, d, "pid", 1)), int16(argInt(t, d, "epoch", 1)))
	case "reload":
		// The coordinator moves away and back: the partition is replayed.
		h.c.UnloadPartition(0)
		if err := h.c.LoadPartition(ctx, 0); err != nil {
			t.Fatalf("%s: reload: %v", d.Pos, err)
		}
	default:
		t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	}
}

// pollWaits prints the answers that arrived, in request order.
func (h *classicHarness) pollWaits(out *strings.Builder) {
	// Learn every new member id first, so leaders print by name.
	for _, w := range h.waits {
		if w.join != nil {
			if resp, ok := w.join.poll(); ok && resp.MemberID != "" {
				h.ids[w.name] = resp.MemberID
			}
		}
	}
	var still []pendingWait
	for _, w := range h.waits {
		switch {
		case w.join != nil:
			resp, ok := w.join.poll()
			if !ok {
				fmt.Fprintf(out, "%s: join waiting\n", w.name)
				still = append(still, w)
				continue
			}
			if resp.MemberID != "" {
				h.ids[w.name] = resp.MemberID
			}
			if resp.ErrorCode != 0 {
				fmt.Fprintf(out, "%s: join %s", w.name, errName(resp.ErrorCode))
				if resp.MemberID != "" {
					fmt.Fprintf(out, " member=%s", h.name(resp.MemberID))
				}
				out.WriteString("\n")
				continue
			}
			h.gens[w.name] = resp.Generation
			fmt.Fprintf(out, "%s: join gen=%d protocol=%s leader=%s", w.name, resp.Generation, *resp.Protocol, h.name(resp.LeaderID))
			if len(resp.Members) > 0 {
				var ms []string
				for _, m := range resp.Members {
					ms = append(ms, h.name(m.MemberID)+":"+string(m.ProtocolMetadata))
				}
				fmt.Fprintf(out, " members=%s", strings.Join(ms, ","))
			}
			if resp.SkipAssignment {
				out.WriteString(" skip-assignment")
			}
			out.WriteString("\n")
		case w.sync != nil:
			resp, ok := w.sync.poll()
			if !ok {
				fmt.Fprintf(out, "%s: sync waiting\n", w.name)
				still = append(still, w)
				continue
			}
			if resp.ErrorCode != 0 {
				fmt.Fprintf(out, "%s: sync %s\n", w.name, errName(resp.ErrorCode))
				continue
			}
			fmt.Fprintf(out, "%s: sync assignment=%q\n", w.name, resp.MemberAssignment)
		}
	}
	h.waits = still
}

func (h *classicHarness) printState(out *strings.Builder) {
	for _, s := range h.c.Snapshot() {
		fmt.Fprintf(out, "%s %s gen=%d protocol=%s leader=%s\n", s.Group, s.State, s.Generation, s.Protocol, h.name(s.Leader))
		for _, m := range s.Members {
			fmt.Fprintf(out, "  member %s", h.name(m.MemberID))
			if m.InstanceID != "" {
				fmt.Fprintf(out, " instance=%s", m.InstanceID)
			}
			out.WriteString("\n")
		}
		for _, o := range s.Offsets {
			fmt.Fprintf(out, "  offset %s/%d=%d\n", o.Topic, o.Partition, o.Offset)
		}
		for _, o := range s.Pending {
			fmt.Fprintf(out, "  pending pid=%d %s/%d=%d\n", o.ProducerID, o.Topic, o.Partition, o.Offset)
		}
	}
}

// describeRecord renders a __consumer_offsets record for golden output.
func describeRecord(t *testing.T, r Record, name func(string) string) string {
	if r.Control {
		marker := "ABORT"
		if r.Commit {
			marker = "COMMIT"
		}
		return fmt.Sprintf("marker pid=%d %s", r.ProducerID, marker)
	}
	prefix := ""
	if r.Transactional {
		prefix = fmt.Sprintf("txn pid=%d ", r.ProducerID)
	}
	return prefix + describeData(t, r, name)
}

// describeData renders a data record of __consumer_offsets.
func describeData(t *testing.T, r Record, name func(string) string) string {
	d, ok, err := decodeRecord(r)
	if err != nil || !ok {
		t.Fatalf("undecodable record: ok=%v err=%v", ok, err)
	}
	if d.isOffset {
		if d.offset == nil {
			return fmt.Sprintf("offset %s %s/%d tombstone", d.group, d.topic, d.part)
		}
		return fmt.Sprintf("offset %s %s/%d=%d", d.group, d.topic, d.part, d.offset.Offset)
	}
	if d.meta == nil {
		return fmt.Sprintf("group %s tombstone", d.group)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "group %s type=%s gen=%d", d.group, d.meta.ProtocolType, d.meta.Generation)
	if d.meta.Protocol != nil {
		fmt.Fprintf(&b, " protocol=%s", *d.meta.Protocol)
	}
	if d.meta.Leader != nil {
		fmt.Fprintf(&b, " leader=%s", name(*d.meta.Leader))
	}
	for _, m := range d.meta.Members {
		fmt.Fprintf(&b, " %s:%q", name(m.MemberID), m.Assignment)
	}
	return b.String()
}

// fetchRequest fills req for group g: the v0-7 layout or one v8+ group;
// nil topics asks for every offset.
func (h *classicHarness) fetchRequest(req *kmsg.OffsetFetchRequest, topics []kmsg.OffsetFetchRequestTopic) *kmsg.OffsetFetchRequest {
	if req.Version < 8 {
		req.Group, req.Topics = "g", topics
		return req
	}
	rg := kmsg.OffsetFetchRequestGroup{Group: "g"}
	for _, t := range topics {
		rg.Topics = append(rg.Topics, kmsg.OffsetFetchRequestGroupTopic{Topic: t.Topic, Partitions: t.Partitions})
	}
	req.Groups = []kmsg.OffsetFetchRequestGroup{rg}
	return req
}
