package broker_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// The handlers of OffsetForLeaderEpoch, DescribeTopicPartitions,
// DescribeLogDirs and ElectLeaders, each compared with Kafka 4.4 by
// scripts/kafka/protodiff (cases_describe.go).

// requestNode sends req to the node itself, not through the client's
// sharding (which answers unknown topics without asking).
func requestNode[R kmsg.Response](ctx context.Context, t *testing.T, cl *kgo.Client, req kmsg.Request) R {
	t.Helper()
	resp, err := cl.Broker(0).Request(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(R)
}

func createTopics(ctx context.Context, t *testing.T, cl *kgo.Client, partitions int32, topics ...string) {
	t.Helper()
	resp, err := kadm.NewClient(cl).CreateTopics(ctx, partitions, 1, nil, topics...)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
}

func TestOffsetForLeaderEpoch(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := nameClient(n)
	createTopics(ctx, t, cl, 1, "ofle")

	ask := func(topic string, partition, current, epoch int32) kmsg.OffsetForLeaderEpochResponseTopicPartition {
		t.Helper()
		req := kmsg.NewPtrOffsetForLeaderEpochRequest()
		req.ReplicaID = -1
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = topic
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = partition, current, epoch
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
		resp := requestNode[*kmsg.OffsetForLeaderEpochResponse](ctx, t, cl, req)
		return resp.Topics[0].Partitions[0]
	}
	check := func(what string, got kmsg.OffsetForLeaderEpochResponseTopicPartition, code int16, epoch int32, end int64) {
		t.Helper()
		if got.ErrorCode != code || got.LeaderEpoch != epoch || got.EndOffset != end {
			t.Errorf("%s: error %d epoch %d end %d, want %d %d %d", what, got.ErrorCode, got.LeaderEpoch, got.EndOffset, code, epoch, end)
		}
	}

	// The leader's epoch counts from the log end before anything is
	// written at it, as Kafka's leader caches it on becoming leader.
	check("empty log", ask("ofle", 0, 0, 0), 0, 0, 0)
	if p := produceRaw(ctx, t, cl, "ofle", 0, rawBatch("a", "b", "c")); p.ErrorCode != 0 {
		t.Fatalf("produce: %d", p.ErrorCode)
	}
	check("current epoch", ask("ofle", 0, 0, 0), 0, 0, 3)
	check("no current epoch", ask("ofle", 0, -1, 0), 0, 0, 3)
	check("epoch newer than the log", ask("ofle", 0, -1, 7), 0, -1, -1)
	check("undefined epoch", ask("ofle", 0, -1, -1), 0, -1, -1)
	check("epoch older than the log", ask("ofle", 0, -1, -3), 0, -3, 0)
	check("current epoch too high", ask("ofle", 0, 1000, 0), kerr.UnknownLeaderEpoch.Code, -1, -1)
	check("current epoch negative", ask("ofle", 0, -5, 0), kerr.FencedLeaderEpoch.Code, -1, -1)
	check("unknown partition", ask("ofle", 7, -1, 0), kerr.UnknownTopicOrPartition.Code, -1, -1)
	check("unknown topic", ask("missing", 0, -1, 0), kerr.UnknownTopicOrPartition.Code, -1, -1)
}

func TestDescribeTopicPartitions(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := n.Client()
	createTopics(ctx, t, cl, 3, "dtp-a")
	createTopics(ctx, t, cl, 2, "dtp-b")

	describe := func(limit int32, cursor *kmsg.DescribeTopicPartitionsRequestCursor, topics ...string) *kmsg.DescribeTopicPartitionsResponse {
		t.Helper()
		req := kmsg.NewPtrDescribeTopicPartitionsRequest()
		req.ResponsePartitionLimit, req.Cursor = limit, cursor
		for _, name := range topics {
			rt := kmsg.NewDescribeTopicPartitionsRequestTopic()
			rt.Topic = name
			req.Topics = append(req.Topics, rt)
		}
		return requestNode[*kmsg.DescribeTopicPartitionsResponse](ctx, t, cl, req)
	}
	// page is the response as "topic:partition" items and the next cursor.
	page := func(resp *kmsg.DescribeTopicPartitionsResponse) (items []string, next string) {
		for _, st := range resp.Topics {
			if st.ErrorCode != 0 {
				items = append(items, *st.Topic+":"+kerr.ErrorForCode(st.ErrorCode).(*kerr.Error).Message)
				continue
			}
			if st.AuthorizedOperations != 3576 {
				t.Errorf("%s: authorized operations %d, want 3576 (every topic operation)", *st.Topic, st.AuthorizedOperations)
			}
			for _, sp := range st.Partitions {
				items = append(items, *st.Topic+":"+string(rune('0'+sp.Partition)))
			}
		}
		if c := resp.NextCursor; c != nil {
			next = c.Topic + ":" + string(rune('0'+c.Partition))
		}
		return items, next
	}
	for _, c := range []struct {
		name   string
		resp   *kmsg.DescribeTopicPartitionsResponse
		items  []string
		cursor string
	}{
		{"all", describe(100, nil, "dtp-b", "dtp-a", "dtp-b"), []string{"dtp-a:0", "dtp-a:1", "dtp-a:2", "dtp-b:0", "dtp-b:1"}, ""},
		{"limit within a topic", describe(2, nil, "dtp-a", "dtp-b"), []string{"dtp-a:0", "dtp-a:1"}, "dtp-a:2"},
		{"from the cursor", describe(2, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "dtp-a", Partition: 2}, "dtp-a", "dtp-b"),
			[]string{"dtp-a:2", "dtp-b:0"}, "dtp-b:1"},
		{"limit at a topic's end", describe(3, nil, "dtp-a", "dtp-b"), []string{"dtp-a:0", "dtp-a:1", "dtp-a:2"}, "dtp-b:0"},
		{"limit zero is one", describe(0, nil, "dtp-b"), []string{"dtp-b:0"}, "dtp-b:1"},
		{"unknown topic", describe(100, nil, "dtp-a", "missing"), []string{"dtp-a:0", "dtp-a:1", "dtp-a:2", "missing:" + kerr.UnknownTopicOrPartition.Message}, ""},
		{"cursor not among the topics", describe(100, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "dtp-b"}, "dtp-a"),
			[]string{"dtp-a:" + kerr.InvalidRequest.Message}, ""},
		{"cursor partition negative", describe(100, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "dtp-a", Partition: -1}, "dtp-a"),
			[]string{"dtp-a:" + kerr.InvalidRequest.Message}, ""},
		{"every topic from the cursor", describe(100, &kmsg.DescribeTopicPartitionsRequestCursor{Topic: "dtp-b", Partition: 1}),
			[]string{"dtp-b:1"}, ""},
	} {
		items, cursor := page(c.resp)
		if !slices.Equal(items, c.items) || cursor != c.cursor {
			t.Errorf("%s: %v next %q, want %v next %q", c.name, items, cursor, c.items, c.cursor)
		}
	}
}

func TestDescribeLogDirs(t *testing.T) {
	ctx := testkit.Context(t)
	dir := t.TempDir()
	for _, c := range []struct {
		name    string
		opts    []brokertest.Option
		wantDir string
	}{
		{"on disk", []brokertest.Option{brokertest.DataDir(dir)}, dir},
		{"in memory", nil, "memory:/klog"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := brokertest.Start(t, c.opts...)
			cl := nameClient(n)
			createTopics(ctx, t, cl, 2, "dld")
			if p := produceRaw(ctx, t, cl, "dld", 1, rawBatch("a", "b", "c")); p.ErrorCode != 0 {
				t.Fatalf("produce: %d", p.ErrorCode)
			}
			describe := func(topics []kmsg.DescribeLogDirsRequestTopic) kmsg.DescribeLogDirsResponseDir {
				t.Helper()
				req := kmsg.NewPtrDescribeLogDirsRequest()
				req.Topics = topics
				resp := requestNode[*kmsg.DescribeLogDirsResponse](ctx, t, cl, req)
				if len(resp.Dirs) != 1 {
					t.Fatalf("%d dirs, want 1", len(resp.Dirs))
				}
				return resp.Dirs[0]
			}
			d := describe([]kmsg.DescribeLogDirsRequestTopic{{Topic: "dld", Partitions: []int32{0, 1, 7}}, {Topic: "missing", Partitions: []int32{0}}})
			if d.ErrorCode != 0 || d.Dir != c.wantDir {
				t.Errorf("dir %q error %d, want %q", d.Dir, d.ErrorCode, c.wantDir)
			}
			if c.wantDir == dir && (d.TotalBytes <= 0 || d.UsableBytes <= 0 || d.UsableBytes > d.TotalBytes) {
				t.Errorf("on disk: total %d usable %d bytes", d.TotalBytes, d.UsableBytes)
			}
			if c.wantDir != dir && (d.TotalBytes != -1 || d.UsableBytes != -1) {
				t.Errorf("in memory: total %d usable %d bytes, want -1 (unknown)", d.TotalBytes, d.UsableBytes)
			}
			if len(d.Topics) != 1 || d.Topics[0].Topic != "dld" || len(d.Topics[0].Partitions) != 2 {
				t.Fatalf("topics %+v, want dld's partitions 0 and 1 only", d.Topics)
			}
			p0, p1 := d.Topics[0].Partitions[0], d.Topics[0].Partitions[1]
			if p0.Partition != 0 || p0.Size != 0 || p1.Partition != 1 || p1.Size != int64(len(rawBatch("a", "b", "c"))) || p1.OffsetLag != 0 || p1.IsFuture {
				t.Errorf("partitions %+v %+v, want 0 empty and 1 holding one batch", p0, p1)
			}
			if all := describe(nil); len(all.Topics) != 1 || len(all.Topics[0].Partitions) != 2 {
				t.Errorf("every partition: topics %+v", all.Topics)
			}
			if none := describe([]kmsg.DescribeLogDirsRequestTopic{}); len(none.Topics) != 0 {
				t.Errorf("no partitions asked for: topics %+v", none.Topics)
			}
		})
	}
}

// AlterReplicaLogDirs on a node of one log directory: a partition asked
// to move to it is where it should be already; any other directory is
// LOG_DIR_NOT_FOUND, checked before the partition; a topic name too long
// for a move's directory INVALID_TOPIC_EXCEPTION; a partition of no topic
// UNKNOWN_TOPIC_OR_PARTITION; a partition named twice answered once, for
// the last directory; as Kafka 4.4 (the protocol diff's
// alterreplicalogdirs cases).
func TestAlterReplicaLogDirs(t *testing.T) {
	ctx := testkit.Context(t)
	for _, c := range []struct {
		name string
		opts []brokertest.Option
	}{
		{"on disk", []brokertest.Option{brokertest.DataDir(t.TempDir())}},
		{"in memory", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := brokertest.Start(t, c.opts...)
			cl := nameClient(n)
			long := strings.Repeat("l", 220)
			createTopics(ctx, t, cl, 3, "ard", long)
			dreq := kmsg.NewPtrDescribeLogDirsRequest()
			dir := requestNode[*kmsg.DescribeLogDirsResponse](ctx, t, cl, dreq).Dirs[0].Dir
			req := kmsg.NewPtrAlterReplicaLogDirsRequest()
			to := func(dir string, topic string, partitions ...int32) {
				d := kmsg.NewAlterReplicaLogDirsRequestDir()
				d.Dir = dir
				rt := kmsg.NewAlterReplicaLogDirsRequestDirTopic()
				rt.Topic, rt.Partitions = topic, partitions
				d.Topics = append(d.Topics, rt)
				req.Dirs = append(req.Dirs, d)
			}
			to("/elsewhere", "ard", 0, 1)
			to(dir, "ard", 0, 7)
			to(dir, "missing", 0)
			to(dir, long, 0)
			to(dir+"x", long, 1)
			resp := requestNode[*kmsg.AlterReplicaLogDirsResponse](ctx, t, cl, req)
			got := map[string]int16{}
			for _, rt := range resp.Topics {
				for _, rp := range rt.Partitions {
					key := fmt.Sprintf("%.8s/%d", rt.Topic, rp.Partition)
					if _, dup := got[key]; dup {
						t.Errorf("%s answered twice", key)
					}
					got[key] = rp.ErrorCode
				}
			}
			want := map[string]int16{
				"ard/0":      0,
				"ard/1":      kerr.LogDirNotFound.Code,
				"ard/7":      kerr.UnknownTopicOrPartition.Code,
				"missing/0":  kerr.UnknownTopicOrPartition.Code,
				"llllllll/0": kerr.InvalidTopicException.Code,
				"llllllll/1": kerr.LogDirNotFound.Code,
			}
			if !maps.Equal(got, want) {
				t.Errorf("answers %v, want %v", got, want)
			}
		})
	}
}

func TestElectLeaders(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := n.Client()
	createTopics(ctx, t, cl, 2, "el")
	elect := func(electionType int8, topics []kmsg.ElectLeadersRequestTopic) *kmsg.ElectLeadersResponse {
		t.Helper()
		req := kmsg.NewPtrElectLeadersRequest()
		req.ElectionType, req.Topics, req.TimeoutMillis = electionType, topics, 10000
		return requestNode[*kmsg.ElectLeadersResponse](ctx, t, cl, req)
	}
	codes := func(resp *kmsg.ElectLeadersResponse) map[string][]int16 {
		out := map[string][]int16{}
		for _, st := range resp.Topics {
			out[st.Topic] = []int16{}
			for _, sp := range st.Partitions {
				out[st.Topic] = append(out[st.Topic], sp.ErrorCode)
			}
		}
		return out
	}
	notNeeded, unknown, invalid := kerr.ElectionNotNeeded.Code, kerr.UnknownTopicOrPartition.Code, kerr.InvalidRequest.Code
	named := []kmsg.ElectLeadersRequestTopic{{Topic: "el", Partitions: []int32{0, 1, 7}}, {Topic: "missing", Partitions: []int32{0}}}
	for _, electionType := range []int8{0, 1} {
		resp := elect(electionType, named)
		if got := codes(resp); resp.ErrorCode != 0 || len(got) != 2 || !slices.Equal(got["el"], []int16{notNeeded, notNeeded, unknown}) || !slices.Equal(got["missing"], []int16{unknown}) {
			t.Errorf("election type %d: %d %v", electionType, resp.ErrorCode, got)
		}
	}
	all := elect(0, nil)
	if got, ok := codes(all)["el"]; !ok || len(got) != 0 || len(all.Topics) != 1 {
		t.Errorf("every partition: %v, want every topic without partitions", got)
	}
	bad := elect(5, named)
	if got := codes(bad); bad.ErrorCode != invalid || !slices.Equal(got["el"], []int16{invalid, invalid, invalid}) {
		t.Errorf("election type 5: %d %v", bad.ErrorCode, got)
	}
}
