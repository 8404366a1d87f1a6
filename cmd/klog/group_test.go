package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/inspect"
	"github.com/klogdev/klog/internal/testkit"
)

// testAdmin returns an admin client independent of the command under test.
func testAdmin(t *testing.T, b string) *kadm.Client {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return kadm.NewClient(cl)
}

// waitGroup waits until the group is in state with the given number of
// members.
func waitGroup(t *testing.T, b, group, state string, members int) {
	t.Helper()
	adm := testAdmin(t, b)
	testkit.WaitFor(t, fmt.Sprintf("group %q %s with %d members", group, state, members), func() (bool, string) {
		ds, err := adm.DescribeGroups(testkit.Context(t), group)
		if err != nil {
			return false, err.Error()
		}
		d := ds[group]
		return d.State == state && len(d.Members) == members, fmt.Sprintf("%s with %d members (err %v)", d.State, len(d.Members), d.Err)
	})
}

// joinGroup starts a group consumer of topics that has polled at least one
// record, so it is a member with an assignment. It commits nothing by
// itself. The returned stop closes it (leaving the group); cleanup does so
// too.
func joinGroup(t *testing.T, b, group string, opts []kgo.Opt, topics ...string) (*kgo.Client, func()) {
	t.Helper()
	opts = append([]kgo.Opt{
		kgo.SeedBrokers(b),
		kgo.ClientID("grouptest"),
		kgo.ConsumerGroup(group),
		kgo.ConsumeTopics(topics...),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()),
		kgo.DisableAutoCommit(),
	}, opts...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	stop := func() {
		if !closed {
			closed = true
			cl.Close()
		}
	}
	t.Cleanup(stop)
	ctx := testkit.Context(t)
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("group %q: no record polled: %v", group, err)
		}
		if fs.NumRecords() > 0 {
			return cl, stop
		}
	}
}

// commitAs commits offsets as the member cl.
func commitAs(t *testing.T, cl *kgo.Client, topic string, offsets map[int32]int64) {
	t.Helper()
	m := map[string]map[int32]kgo.EpochOffset{topic: {}}
	for p, o := range offsets {
		m[topic][p] = kgo.EpochOffset{Epoch: -1, Offset: o}
	}
	var cerr error
	cl.CommitOffsetsSync(testkit.Context(t), m, func(_ *kgo.Client, _ *kmsg.OffsetCommitRequest, resp *kmsg.OffsetCommitResponse, err error) {
		if err != nil {
			cerr = err
			return
		}
		for _, rt := range resp.Topics {
			for _, rp := range rt.Partitions {
				if rp.ErrorCode != 0 && cerr == nil {
					cerr = fmt.Errorf("%s[%d]: error code %d", rt.Topic, rp.Partition, rp.ErrorCode)
				}
			}
		}
	})
	if cerr != nil {
		t.Fatalf("commit: %v", cerr)
	}
}

// emptyGroup creates an empty group with committed offsets, the way a
// consumer that committed and left does: join, commit, leave.
func emptyGroup(t *testing.T, b, group, topic string, offsets map[int32]int64) {
	t.Helper()
	cl, stop := joinGroup(t, b, group, nil, topic)
	commitAs(t, cl, topic, offsets)
	stop()
	waitGroup(t, b, group, "Empty", 0)
}

// committed returns the group's committed offsets, read directly.
func committed(t *testing.T, b, group string) map[string]map[int32]int64 {
	t.Helper()
	os, err := testAdmin(t, b).FetchOffsets(testkit.Context(t), group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("fetch offsets of %q: %v", group, err)
	}
	out := make(map[string]map[int32]int64)
	os.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			if out[o.Topic] == nil {
				out[o.Topic] = make(map[int32]int64)
			}
			out[o.Topic][o.Partition] = o.At
		}
	})
	return out
}

func wantCommitted(t *testing.T, b, group, topic string, want map[int32]int64) {
	t.Helper()
	got := committed(t, b, group)[topic]
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("group %q committed offsets of %q = %v, want %v", group, topic, got, want)
	}
}

func describeJSON(t *testing.T, b string, groups ...string) groupDescribeJSON {
	t.Helper()
	r := mustRun(t, b, "", append([]string{"group", "describe", "--format", "json"}, groups...)...)
	var d groupDescribeJSON
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("describe JSON: %v\n%s", err, r.stdout)
	}
	return d
}

func TestGroupListDescribeLag(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "lagged", 2)
	seedNumbered(t, b, "lagged", 0, 10, time.Now())
	seedNumbered(t, b, "lagged", 1, 3, time.Now())

	cl, stop := joinGroup(t, b, "g-lag", nil, "lagged")
	commitAs(t, cl, "lagged", map[int32]int64{0: 4})
	waitGroup(t, b, "g-lag", "Stable", 1)

	r := mustRun(t, b, "", "group", "list")
	ls := lines(r.stdout)
	if len(ls) != 2 || !strings.HasPrefix(ls[0], "GROUP") || !strings.HasPrefix(strings.Join(strings.Fields(ls[1]), " "), "g-lag classic Stable consumer cooperative-sticky 1 ") {
		t.Errorf("group list:\n%s", r.stdout)
	}

	// One member owns both partitions: partition 0 committed 4 of 10,
	// partition 1 has no commit, so its lag counts from the log start.
	d := describeJSON(t, b, "g-lag")
	if d.Version != groupJSONVersion || len(d.Groups) != 1 {
		t.Fatalf("describe = %+v", d)
	}
	g := d.Groups[0]
	if g.Group != "g-lag" || g.Type != "classic" || g.State != "Stable" || g.ProtocolType != "consumer" || g.Protocol != "cooperative-sticky" {
		t.Errorf("group header = %+v", g)
	}
	if len(g.Members) != 1 {
		t.Fatalf("members = %+v", g.Members)
	}
	m := g.Members[0]
	if m.ClientID != "grouptest" || m.MemberID == "" || m.Host == "" || m.InstanceID != nil ||
		fmt.Sprint(m.Assigned) != "[{lagged [0 1]}]" {
		t.Errorf("member = %+v", m)
	}
	if len(g.Partitions) != 2 {
		t.Fatalf("partitions = %+v", g.Partitions)
	}
	p0, p1 := g.Partitions[0], g.Partitions[1]
	if p0.Topic != "lagged" || p0.Partition != 0 || p0.Committed == nil || *p0.Committed != 4 ||
		p0.LogStartOffset != 0 || p0.HighWatermark != 10 || p0.LastStableOffset != 10 ||
		p0.Lag == nil || *p0.Lag != 6 || p0.MemberID != m.MemberID {
		t.Errorf("partition 0 = %+v", p0)
	}
	if p1.Partition != 1 || p1.Committed != nil || p1.Lag == nil || *p1.Lag != 3 || p1.MemberID != m.MemberID {
		t.Errorf("partition 1 = %+v", p1)
	}
	if g.TotalLag != 9 {
		t.Errorf("total lag = %d, want 9", g.TotalLag)
	}

	// The JSON shape: field names are the contract.
	r = mustRun(t, b, "", "group", "describe", "g-lag", "--format", "json")
	var raw map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil {
		t.Fatal(err)
	}
	rg := raw["groups"].([]any)[0].(map[string]any)
	for _, k := range []string{"group", "type", "state", "protocol_type", "protocol", "coordinator", "members", "partitions", "total_lag"} {
		if _, ok := rg[k]; !ok {
			t.Errorf("describe JSON lacks %q:\n%s", k, r.stdout)
		}
	}
	rp := rg["partitions"].([]any)[1].(map[string]any)
	if v, ok := rp["committed"]; !ok || v != nil {
		t.Errorf("uncommitted partition: committed = %v (present %t), want null", v, ok)
	}

	// Text: the header, members and partition table.
	r = mustRun(t, b, "", "group", "describe", "g-lag")
	for _, want := range []string{"TOTAL-LAG      9", "lagged[0,1]", "TOPIC   PARTITION  COMMITTED  LOG-START  HW  LSO  LAG  MEMBER-ID"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("describe text lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "lagged  1          -          0          3   3    3") {
		t.Errorf("describe text: uncommitted partition row missing:\n%s", r.stdout)
	}

	// After the member leaves, the committed offset stays and the
	// unassigned, uncommitted partition drops out.
	stop()
	waitGroup(t, b, "g-lag", "Empty", 0)
	g = describeJSON(t, b, "g-lag").Groups[0]
	if g.State != "Empty" || len(g.Members) != 0 || len(g.Partitions) != 1 || g.TotalLag != 6 {
		t.Errorf("empty group = %+v", g)
	}

	// State filters, in any case.
	r = mustRun(t, b, "", "group", "list", "--state", "empty", "--format", "json")
	var l groupListJSON
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil {
		t.Fatal(err)
	}
	if l.Version != groupJSONVersion || len(l.Groups) != 1 || l.Groups[0].Group != "g-lag" || l.Groups[0].State != "Empty" || l.Groups[0].Members != 0 {
		t.Errorf("list --state empty = %+v", l)
	}
	r = mustRun(t, b, "", "group", "list", "--state", "Stable,PreparingRebalance", "--format", "json")
	if strings.Contains(r.stdout, "g-lag") {
		t.Errorf("list --state Stable shows an empty group:\n%s", r.stdout)
	}
	if r := klogRun(t, b, "", "group", "list", "--state", "sleepy"); r.code != exitUsage {
		t.Errorf("list --state sleepy: exit %d, want %d", r.code, exitUsage)
	}

	// A group that does not exist is a per-item failure; the others are
	// still described.
	r = klogRun(t, b, "", "group", "describe", "g-lag", "nope", "--format", "json")
	if r.code != exitFailure || !strings.Contains(r.stderr, `group "nope": group does not exist`) {
		t.Errorf("describe nope: exit %d, stderr %q", r.code, r.stderr)
	}
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil || len(d.Groups) != 2 || d.Groups[0].Error != "" || d.Groups[1].Error == "" {
		t.Errorf("describe with a missing group: %v\n%s", err, r.stdout)
	}
	if r := klogRun(t, b, "", "group", "describe"); r.code != exitUsage {
		t.Errorf("describe without groups: exit %d", r.code)
	}
}

// openTxn begins a transaction, produces values and leaves it open until
// the test ends.
func openTxn(t *testing.T, b, topic string, values ...string) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(b), kgo.TransactionalID("klog-open-"+topic), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = cl.EndTransaction(ctx, kgo.TryAbort)
		cl.Close()
	})
	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	for _, v := range values {
		if err := cl.ProduceSync(testkit.Context(t), &kgo.Record{Value: []byte(v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestGroupLagCountsToLastStableOffset(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "txlag", 1)
	// Offsets 0-2 committed data, 3 the commit marker, 4-5 an open
	// transaction: HW 6, LSO 4.
	produceTxn(t, b, "txlag", true, "c0", "c1", "c2")
	openTxn(t, b, "txlag", "o0", "o1")

	// A read_committed consumer that read everything it can commits 4.
	if err := testAdmin(t, b).CommitAllOffsets(testkit.Context(t), "g-txn", kadm.OffsetsFromRecords(kgo.Record{Topic: "txlag", Partition: 0, Offset: 3})); err != nil {
		t.Fatal(err)
	}
	p := describeJSON(t, b, "g-txn").Groups[0].Partitions[0]
	if p.HighWatermark != 6 || p.LastStableOffset != 4 || *p.Committed != 4 || *p.Lag != 0 {
		t.Errorf("open transaction: %+v (lag %d), want HW 6, LSO 4, lag 0", p, *p.Lag)
	}

	// Seeking to the end stops at the LSO too: the open transaction's
	// records are still to be read once it commits.
	mustRun(t, b, "", "group", "seek", "g-txn", "--to", "start", "--yes")
	wantCommitted(t, b, "g-txn", "txlag", map[int32]int64{0: 0})
	mustRun(t, b, "", "group", "seek", "g-txn", "--to", "end", "--yes")
	wantCommitted(t, b, "g-txn", "txlag", map[int32]int64{0: 4})
}

func TestGroupSeek(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "seekt", 2)
	base := time.Date(2024, 1, 15, 10, 0, 0, 0, time.UTC)
	seedNumbered(t, b, "seekt", 0, 10, base)
	seedNumbered(t, b, "seekt", 1, 5, base.Add(100*time.Second))
	emptyGroup(t, b, "g-seek", "seekt", map[int32]int64{0: 10, 1: 5})

	// Dry run: the preview, nothing committed.
	r := mustRun(t, b, "", "group", "seek", "g-seek", "--to", "start", "--dry-run")
	want := "TOPIC  PARTITION  CURRENT  NEW\nseekt  0          10       0\nseekt  1          5        0\n"
	if r.stdout != want {
		t.Errorf("dry run preview:\n%s\nwant:\n%s", r.stdout, want)
	}
	wantCommitted(t, b, "g-seek", "seekt", map[int32]int64{0: 10, 1: 5})

	// Without a terminal and without --yes: the preview, then refusal.
	r = klogRun(t, b, "", "group", "seek", "g-seek", "--to", "start")
	if r.code != exitFailure || r.stdout != want || !strings.Contains(r.stderr, "pass --yes") {
		t.Errorf("seek without --yes: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	wantCommitted(t, b, "g-seek", "seekt", map[int32]int64{0: 10, 1: 5})

	steps := []struct {
		to   string
		want map[int32]int64
	}{
		{"start", map[int32]int64{0: 0, 1: 0}},
		{"-3", map[int32]int64{0: 7, 1: 2}},
		{"+2", map[int32]int64{0: 2, 1: 2}},
		{"7", map[int32]int64{0: 7, 1: 5}}, // clamped to the end
		{"@" + base.Add(4*time.Second).Format(time.RFC3339), map[int32]int64{0: 4, 1: 0}},
		{"@" + fmt.Sprint(base.Add(102*time.Second).UnixMilli()), map[int32]int64{0: 10, 1: 2}},
		{"end", map[int32]int64{0: 10, 1: 5}},
	}
	for _, s := range steps {
		r := mustRun(t, b, "", "group", "seek", "g-seek", "--to", s.to, "--yes")
		if !strings.Contains(r.stderr, `committed 2 offsets for group "g-seek"`) {
			t.Errorf("seek --to %s: stderr %q", s.to, r.stderr)
		}
		wantCommitted(t, b, "g-seek", "seekt", s.want)
	}

	// JSON: one document with the preview and the outcome.
	r = mustRun(t, b, "", "group", "seek", "g-seek", "--to", "-1", "--yes", "--format", "json")
	var res groupSeekJSON
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil {
		t.Fatalf("seek JSON: %v\n%s", err, r.stdout)
	}
	if res.Version != groupJSONVersion || res.Group != "g-seek" || res.DryRun || !res.Committed || len(res.Partitions) != 2 ||
		*res.Partitions[0].Current != 10 || *res.Partitions[0].New != 9 || *res.Partitions[1].Current != 5 || *res.Partitions[1].New != 4 {
		t.Errorf("seek JSON = %s", r.stdout)
	}
	r = klogRun(t, b, "", "group", "seek", "g-seek", "--to", "start", "--format", "json")
	if err := json.Unmarshal([]byte(r.stdout), &res); r.code != exitFailure || err != nil || res.Committed {
		t.Errorf("unconfirmed seek JSON: exit %d, %v\n%s", r.code, err, r.stdout)
	}

	// A group without commits needs --topics; with them it is created.
	r = klogRun(t, b, "", "group", "seek", "g-new", "--to", "start", "--yes")
	if r.code != exitFailure || !strings.Contains(r.stderr, "no committed offsets") {
		t.Errorf("seek of a group without commits: exit %d, stderr %q", r.code, r.stderr)
	}
	mustRun(t, b, "", "group", "seek", "g-new", "--to", "-1", "--topics", "seekt", "--yes")
	wantCommitted(t, b, "g-new", "seekt", map[int32]int64{0: 9, 1: 4})
	r = klogRun(t, b, "", "group", "seek", "g-new", "--to", "start", "--topics", "missing", "--yes")
	if r.code != exitFailure || !strings.Contains(r.stderr, `topic "missing": topic does not exist`) {
		t.Errorf("seek --topics missing: exit %d, stderr %q", r.code, r.stderr)
	}

	for _, args := range [][]string{
		{"group", "seek", "g-seek"},                          // no --to
		{"group", "seek", "g-seek", "--to", "1:3", "--yes"},  // a range
		{"group", "seek", "g-seek", "--to", "soon", "--yes"}, // not a position
		{"group", "seek", "--to", "start"},                   // no group
		{"group", "seek", "a", "b", "--to", "start"},         // two groups
	} {
		if r := klogRun(t, b, "", args...); r.code != exitUsage {
			t.Errorf("klog %q: exit %d, want %d; stderr %q", args, r.code, exitUsage, r.stderr)
		}
	}
	wantCommitted(t, b, "g-seek", "seekt", map[int32]int64{0: 9, 1: 4})
}

func TestGroupSeekAndDeleteRefusedWhileActive(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "busy", 1)
	seedNumbered(t, b, "busy", 0, 5, time.Now())
	cl, stop := joinGroup(t, b, "g-busy", nil, "busy")
	commitAs(t, cl, "busy", map[int32]int64{0: 3})
	waitGroup(t, b, "g-busy", "Stable", 1)

	r := klogRun(t, b, "", "group", "seek", "g-busy", "--to", "start", "--yes")
	if r.code != exitFailure || !strings.Contains(r.stderr, `group "g-busy" is Stable with 1 member: group has active members`) || r.stdout != "" {
		t.Errorf("seek of an active group: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	wantCommitted(t, b, "g-busy", "busy", map[int32]int64{0: 3})

	// A dry run still previews, with a note.
	r = mustRun(t, b, "", "group", "seek", "g-busy", "--to", "start", "--dry-run")
	if !strings.Contains(r.stdout, "busy   0          3        0") || !strings.Contains(r.stderr, "active members") {
		t.Errorf("dry run of an active group:\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
	}

	r = klogRun(t, b, "", "group", "delete", "g-busy", "--yes")
	if r.code != exitFailure || !strings.Contains(r.stdout, "ERROR") || !strings.Contains(r.stderr, "NON_EMPTY_GROUP") {
		t.Errorf("delete of an active group: exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}

	stop()
	waitGroup(t, b, "g-busy", "Empty", 0)
	mustRun(t, b, "", "group", "seek", "g-busy", "--to", "start", "--yes")
	wantCommitted(t, b, "g-busy", "busy", map[int32]int64{0: 0})
}

func TestGroupDelete(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "del", 1)
	seedNumbered(t, b, "del", 0, 2, time.Now())
	emptyGroup(t, b, "g-del1", "del", map[int32]int64{0: 1})
	emptyGroup(t, b, "g-del2", "del", map[int32]int64{0: 2})

	// Not a terminal, no --yes: nothing happens.
	r := klogRun(t, b, "", "group", "delete", "g-del1")
	if r.code != exitFailure || !strings.Contains(r.stderr, "pass --yes") {
		t.Errorf("delete without --yes: exit %d, stderr %q", r.code, r.stderr)
	}
	if r := mustRun(t, b, "", "group", "list"); !strings.Contains(r.stdout, "g-del1") {
		t.Errorf("g-del1 deleted without confirmation:\n%s", r.stdout)
	}

	// One group deleted, one that does not exist: exit 1, both reported.
	r = klogRun(t, b, "", "group", "delete", "g-del1", "nope", "--yes")
	if r.code != exitFailure {
		t.Errorf("delete with a missing group: exit %d", r.code)
	}
	out := strings.Join(strings.Fields(r.stdout), " ")
	if !strings.Contains(out, "g-del1 DELETED") || !strings.Contains(out, "nope ERROR: GROUP_ID_NOT_FOUND") {
		t.Errorf("delete output:\n%s", r.stdout)
	}
	r = mustRun(t, b, "", "group", "list")
	if strings.Contains(r.stdout, "g-del1") || !strings.Contains(r.stdout, "g-del2") {
		t.Errorf("after delete:\n%s", r.stdout)
	}
	if got := committed(t, b, "g-del1"); len(got) != 0 {
		t.Errorf("deleted group still has offsets %v", got)
	}

	r = mustRun(t, b, "", "group", "delete", "g-del2", "-y", "--format", "json")
	var res groupDeleteJSON
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || res.Version != groupJSONVersion ||
		len(res.Groups) != 1 || res.Groups[0].Group != "g-del2" || res.Groups[0].Error != "" {
		t.Errorf("delete JSON: %v\n%s", err, r.stdout)
	}
	if r := klogRun(t, b, "", "group", "delete"); r.code != exitUsage {
		t.Errorf("delete without groups: exit %d", r.code)
	}
}

// TestGroupConfirmPrompt drives the prompt a terminal user sees.
func TestGroupConfirmPrompt(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "ask", 1)
	seedNumbered(t, b, "ask", 0, 4, time.Now())
	emptyGroup(t, b, "g-ask", "ask", map[int32]int64{0: 4})
	g := &globals{brokers: b, format: formatText}
	ctx := testkit.Context(t)
	// ask answers the question with answer, writing the question on diag.
	ask := func(answer string, diag io.Writer) consent {
		return consent{interactive: true, in: strings.NewReader(answer), diag: diag}
	}
	o := groupSeekOptions{group: "g-ask", to: "start"}

	for _, answer := range []string{"n\n", "", "maybe\n"} {
		var out, diag strings.Builder
		o.confirm = ask(answer, &diag)
		err := runGroupSeek(ctx, g, o, &out, &diag)
		if !errors.Is(err, ErrNotConfirmed) {
			t.Errorf("answer %q: err = %v, want ErrNotConfirmed", answer, err)
		}
		if !strings.Contains(out.String(), "ask    0          4        0") || !strings.Contains(diag.String(), `Commit 1 offset for group "g-ask"? [y/N]`) {
			t.Errorf("answer %q: stdout %q, stderr %q", answer, out.String(), diag.String())
		}
	}
	wantCommitted(t, b, "g-ask", "ask", map[int32]int64{0: 4})

	var out, diag strings.Builder
	o.confirm = ask("Y\n", &diag)
	if err := runGroupSeek(ctx, g, o, &out, &diag); err != nil {
		t.Fatalf("answer y: %v\n%s", err, diag.String())
	}
	wantCommitted(t, b, "g-ask", "ask", map[int32]int64{0: 0})

	err := runGroupDelete(ctx, g, []string{"g-ask"}, ask("no\n", &diag), &out, &diag)
	if !errors.Is(err, ErrNotConfirmed) {
		t.Errorf("delete declined: err = %v", err)
	}
	if err := runGroupDelete(ctx, g, []string{"g-ask"}, ask("yes\n", &diag), &out, &diag); err != nil {
		t.Errorf("delete confirmed: %v", err)
	}
	if got := committed(t, b, "g-ask"); len(got) != 0 {
		t.Errorf("deleted group still has offsets %v", got)
	}
}

// TestGroupConsumerProtocol covers groups whose broker assigns partitions.
func TestGroupConsumerProtocol(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "nextgen", 2)
	seedNumbered(t, b, "nextgen", 0, 3, time.Now())
	seedNumbered(t, b, "nextgen", 1, 3, time.Now())
	cl, stop := joinGroup(t, b, "g-next", []kgo.Opt{kgo.ServerSideBalancer(), kgo.Balancers(kgo.RangeBalancer())}, "nextgen")
	commitAs(t, cl, "nextgen", map[int32]int64{0: 1, 1: 2})

	var g inspect.GroupDescription
	testkit.WaitFor(t, "the member to own both partitions", func() (bool, string) {
		g = describeJSON(t, b, "g-next").Groups[0]
		return len(g.Members) == 1 && fmt.Sprint(g.Members[0].Assigned) == "[{nextgen [0 1]}]", fmt.Sprintf("%+v", g)
	})
	if g.Type != "consumer" || g.Protocol != "range" || g.ProtocolType != "consumer" || g.Members[0].ClientID != "grouptest" || g.TotalLag != 3 {
		t.Errorf("consumer-protocol group = %+v", g)
	}
	r := mustRun(t, b, "", "group", "list", "--format", "json")
	var l groupListJSON
	if err := json.Unmarshal([]byte(r.stdout), &l); err != nil || len(l.Groups) != 1 ||
		l.Groups[0].Type != "consumer" || l.Groups[0].Members != 1 || l.Groups[0].Protocol != "range" {
		t.Errorf("list: %v\n%s", err, r.stdout)
	}
	if r := klogRun(t, b, "", "group", "seek", "g-next", "--to", "start", "--yes"); r.code != exitFailure || !strings.Contains(r.stderr, "active members") {
		t.Errorf("seek of an active consumer-protocol group: exit %d, stderr %q", r.code, r.stderr)
	}
	stop()
	testkit.WaitFor(t, "the group to empty", func() (bool, string) {
		g = describeJSON(t, b, "g-next").Groups[0]
		return len(g.Members) == 0 && inspect.Inactive(g.State), fmt.Sprintf("%+v", g)
	})
	mustRun(t, b, "", "group", "seek", "g-next", "--to", "start", "--yes")
	wantCommitted(t, b, "g-next", "nextgen", map[int32]int64{0: 0, 1: 0})
}

func TestCanonicalState(t *testing.T) {
	for in, want := range map[string]string{"empty": "Empty", "STABLE": "Stable", "preparingrebalance": "PreparingRebalance", "reconciling": "Reconciling"} {
		if got, ok := canonicalState(groupStates, in); !ok || got != want {
			t.Errorf("canonicalState(%q) = %q, %t", in, got, ok)
		}
	}
	if _, ok := canonicalState(groupStates, "asleep"); ok {
		t.Error("canonicalState accepted asleep")
	}
}

// TestGroupLagAfterConsumeThroughMarkers: a klog consume -g that read to
// the end leaves no lag, though the log ends with transaction markers.
func TestGroupLagAfterConsumeThroughMarkers(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "marked", 1)
	produceTxn(t, b, "marked", true, "c0", "c1")
	produceTxn(t, b, "marked", false, "a0")

	r := mustRun(t, b, "", "consume", "marked", "-g", "g-marked", "-e")
	if r.stdout != "c0\nc1\n" {
		t.Fatalf("consume -g = %q", r.stdout)
	}
	p := describeJSON(t, b, "g-marked").Groups[0].Partitions[0]
	if p.HighWatermark != 5 || p.LastStableOffset != 5 || p.Committed == nil || *p.Committed != 5 || *p.Lag != 0 {
		t.Errorf("after consuming to the end: %+v, want committed 5 and lag 0", p)
	}

	// An aborted transaction and then two committed records: lag 2, the
	// records only, not their markers nor the aborted record.
	produceTxn(t, b, "marked", false, "a1")
	produceTxn(t, b, "marked", true, "c2", "c3")
	p = describeJSON(t, b, "g-marked").Groups[0].Partitions[0]
	if *p.Lag != 2 {
		t.Errorf("lag = %d after an aborted record and a committed transaction of two, want 2", *p.Lag)
	}
	r = mustRun(t, b, "", "consume", "marked", "-g", "g-marked", "-e")
	if r.stdout != "c2\nc3\n" {
		t.Errorf("second consume -g = %q", r.stdout)
	}
	if p = describeJSON(t, b, "g-marked").Groups[0].Partitions[0]; *p.Lag != 0 {
		t.Errorf("lag = %d after consuming again, want 0", *p.Lag)
	}
}

func TestConfirmAndTerminal(t *testing.T) {
	for in, want := range map[string]bool{"y\n": true, " YES \n": true, "y": true, "n\n": false, "\n": false, "": false, "yy\n": false} {
		var diag strings.Builder
		got, err := confirm(strings.NewReader(in), &diag, "Go?")
		if err != nil || got != want || !strings.HasPrefix(diag.String(), "Go? [y/N] ") {
			t.Errorf("confirm(%q) = %t, %v; prompt %q", in, got, err, diag.String())
		}
	}
	// Only the first line is the answer, and it is bounded.
	if got, _ := confirm(strings.NewReader(strings.Repeat("y", 10*confirmLineMax)+"\n"), io.Discard, "Go?"); got {
		t.Error("an endless line confirmed")
	}

	if isTerminal(strings.NewReader("y\n")) {
		t.Error("a strings.Reader is a terminal")
	}
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if isTerminal(null) {
		t.Errorf("%s is a terminal", os.DevNull)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if isTerminal(r) {
		t.Error("a pipe is a terminal")
	}
}

func TestGroupCompletion(t *testing.T) {
	b := startBroker(t)
	createTopic(t, b, "comp", 1)
	seedNumbered(t, b, "comp", 0, 1, time.Now())
	emptyGroup(t, b, "orders", "comp", map[int32]int64{0: 1})
	emptyGroup(t, b, "audit", "comp", map[int32]int64{0: 1})

	r := mustRun(t, b, "", "__complete", "group", "describe", "")
	if got := lines(r.stdout); len(got) != 3 || got[0] != "audit" || got[1] != "orders" {
		t.Errorf("complete describe = %q", r.stdout)
	}
	r = mustRun(t, b, "", "__complete", "group", "delete", "audit", "")
	if got := lines(r.stdout); len(got) != 2 || got[0] != "orders" {
		t.Errorf("complete delete after audit = %q", r.stdout)
	}
	r = mustRun(t, b, "", "__complete", "group", "seek", "o")
	if got := lines(r.stdout); len(got) != 2 || got[0] != "orders" {
		t.Errorf("complete seek o = %q", r.stdout)
	}
	r = mustRun(t, b, "", "__complete", "group", "seek", "orders", "")
	if got := lines(r.stdout); len(got) != 1 {
		t.Errorf("complete seek after a group = %q", r.stdout)
	}
}
