package broker_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// dupCount is how many times the duplicate tests name one item.
const dupCount = 10000

// dupCase is one API asked about one item many times in one request.
type dupCase struct {
	name string
	// maxVersion pins the API's version (0: the newest both sides speak).
	maxVersion int16
	// build is the request naming its item n times.
	build func(n int) kmsg.Request
	// served: the item is answered as if named once, so the response to
	// dupCount repetitions is no larger than the response to one. Otherwise
	// the repetitions are refused with one small INVALID_REQUEST answer.
	served bool
	// check looks at the response to dupCount repetitions.
	check func(t *testing.T, resp kmsg.Response)
}

// dupFixture is a node with topics t (2 partitions), d and e (1 each), and
// group g holding committed offsets for both partitions of t.
type dupFixture struct {
	n   *brokertest.Node
	cl  *kgo.Client
	adm *kadm.Client
	ids map[string][16]byte // topic ids
}

func newDupFixture(t testing.TB) *dupFixture {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := n.Client()
	adm := kadm.NewClient(cl)
	f := &dupFixture{n: n, cl: cl, adm: adm, ids: make(map[string][16]byte)}
	for name, partitions := range map[string]int32{"t": 2, "d": 1, "e": 1} {
		created, err := adm.CreateTopic(ctx, partitions, 1, nil, name)
		if err != nil || created.Err != nil {
			t.Fatalf("create %s: %v %v", name, err, created.Err)
		}
		f.ids[name] = created.ID
	}
	offsets := make(kadm.Offsets)
	offsets.Add(kadm.Offset{Topic: "t", Partition: 0, At: 5, LeaderEpoch: -1, Metadata: "m"})
	offsets.Add(kadm.Offset{Topic: "t", Partition: 1, At: 7, LeaderEpoch: -1, Metadata: "m"})
	committed, err := adm.CommitOffsets(ctx, "g", offsets)
	if err != nil || committed.Error() != nil {
		t.Fatalf("commit: %v %v", err, committed.Error())
	}
	return f
}

// send sends req to the node directly (the client would split some
// requests and merge their answers), at most at version maxVersion.
func (f *dupFixture) send(t testing.TB, ctx context.Context, req kmsg.Request, maxVersion int16) kmsg.Response {
	t.Helper()
	cl := f.cl
	if maxVersion > 0 {
		v := kversion.Stable()
		v.SetMaxKeyVersion(req.Key(), maxVersion)
		cl = f.n.Client(kgo.MaxVersions(v))
	}
	resp, err := cl.Broker(0).Request(ctx, req)
	if err != nil {
		t.Fatalf("%s: %v", kmsg.NameForKey(req.Key()), err)
	}
	return resp
}

func encodedLen(resp kmsg.Response) int { return len(resp.AppendTo(nil)) }

// TestDuplicatesAnsweredOnce names one item dupCount times in a request of
// every API that names items, and checks that the node answers it once:
// with INVALID_REQUEST where Kafka refuses duplicates, served as if named
// once where Kafka has no such rule (see broker/duplicates.go).
func TestDuplicatesAnsweredOnce(t *testing.T) {
	ctx := testkit.Context(t)
	f := newDupFixture(t)
	for _, c := range f.dupCases(t, ctx) {
		t.Run(c.name, func(t *testing.T) {
			var once int
			if c.served {
				once = encodedLen(f.send(t, ctx, c.build(1), c.maxVersion))
			}
			resp := f.send(t, ctx, c.build(dupCount), c.maxVersion)
			size := encodedLen(resp)
			switch {
			case c.served && size > once:
				t.Errorf("%d repetitions: %d-byte response, %d bytes for one", dupCount, size, once)
			case !c.served && size > 512:
				t.Errorf("%d repetitions: %d-byte response, want at most 512", dupCount, size)
			}
			c.check(t, resp)
		})
	}
}

func (f *dupFixture) dupCases(t *testing.T, ctx context.Context) []dupCase {
	value := "1234"
	return []dupCase{
		{
			name:   "DescribeConfigs",
			served: true,
			build: func(n int) kmsg.Request {
				req := kmsg.NewPtrDescribeConfigsRequest()
				req.IncludeSynonyms, req.IncludeDocumentation = true, true
				rr := kmsg.NewDescribeConfigsRequestResource()
				rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
				req.Resources = slices.Repeat([]kmsg.DescribeConfigsRequestResource{rr}, n)
				return req
			},
			check: func(t *testing.T, resp kmsg.Response) {
				rs := resp.(*kmsg.DescribeConfigsResponse).Resources
				if len(rs) != 1 || rs[0].ErrorCode != 0 || len(rs[0].Configs) == 0 {
					t.Errorf("%d resources (first %+v), want t's configs once", len(rs), first(rs))
				}
			},
		},
		{
			name:   "Metadata empty names",
			served: true,
			build: func(n int) kmsg.Request {
				req := kmsg.NewPtrMetadataRequest()
				empty := ""
				rt := kmsg.NewMetadataRequestTopic()
				rt.Topic = &empty
				req.Topics = slices.Repeat([]kmsg.MetadataRequestTopic{rt}, n)
				return req
			},
			check: func(t *testing.T, resp kmsg.Response) {
				ts := resp.(*kmsg.MetadataResponse).Topics
				if len(ts) != 1 || ts[0].ErrorCode != kerr.InvalidTopicException.Code {
					t.Errorf("%d topics (first %+v), want one INVALID_TOPIC_EXCEPTION", len(ts), first(ts))
				}
			},
		},
		{
			name:   "Metadata by id",
			served: true,
			build: func(n int) kmsg.Request {
				req := kmsg.NewPtrMetadataRequest()
				rt := kmsg.NewMetadataRequestTopic()
				rt.TopicID = f.ids["t"]
				req.Topics = slices.Repeat([]kmsg.MetadataRequestTopic{rt}, n)
				return req
			},
			check: func(t *testing.T, resp kmsg.Response) {
				ts := resp.(*kmsg.MetadataResponse).Topics
				if len(ts) != 1 || ts[0].ErrorCode != 0 || len(ts[0].Partitions) != 2 {
					t.Errorf("%d topics (first %+v), want t once", len(ts), first(ts))
				}
			},
		},
		{
			name: "DeleteTopics by name",
			build: func(n int) kmsg.Request {
				req := kmsg.NewPtrDeleteTopicsRequest()
				req.TimeoutMillis = 10000
				d, e := "d", "e"
				rd, re := kmsg.NewDeleteTopicsRequestTopic(), kmsg.NewDeleteTopicsRequestTopic()
				rd.Topic, re.Topic = &d, &e
				req.Topics = append(slices.Repeat([]kmsg.DeleteTopicsRequestTopic{rd}, n), re)
				return req
			},
			check: func(t *testing.T, resp kmsg.Response) {
				var got []itemAnswer
				for _, st := range resp.(*kmsg.DeleteTopicsResponse).Topics {
					got = append(got, itemAnswer{deref(st.Topic), st.ErrorCode})
				}
				want := []itemAnswer{{"d", kerr.InvalidRequest.Code}, {"e", 0}}
				if !slices.Equal(got, want) {
					t.Errorf("got %d answers, first %v; want %v", len(got), got[:min(len(got), 3)], want)
				}
				f.wantTopics(t, ctx, map[string]bool{"d": true, "e": false})
			},
		},
		{
			name: "DeleteTopics by id",
			build: func(n int) kmsg.Request {
				req := kmsg.NewPtrDeleteTopicsRequest()
				req.TimeoutMillis = 10000
				rt := kmsg.NewDeleteTopicsRequestTopic()
				rt.TopicID = f.ids["d"]
				req.Topics = slices.Repeat([]kmsg.DeleteTopicsRequestTopic{rt}, n)
				return req
			},
			check: func(t *testing.T, resp kmsg.Response) {
				ts := resp.(*kmsg.DeleteTopicsResponse).Topics
				if len(ts) != 1 || ts[0].ErrorCode != kerr.InvalidRequest.Code || ts[0].TopicID != f.ids["d"] {
					t.Errorf("%d topics (first %+v), want one INVALID_REQUEST for d's id", len(ts), first(ts))
				}
				f.wantTopics(t, ctx, map[string]bool{"d": true})
			},
		},
		{
			name: "ListOffsets",
			build: func(n int) kmsg.Request {
				req := kmsg.NewPtrListOffsetsRequest()
				rt := kmsg.NewListOffsetsRequestTopic()
				rt.Topic = "t"
				p0, p1 := kmsg.NewListOffsetsRequestTopicPartition(), kmsg.NewListOffsetsRequestTopicPartition()
				p0.Partition, p1.Partition = 0, 1
				p0.Timestamp, p1.Timestamp = -1, -1
				rt.Partitions = []kmsg.ListOffsetsRequestTopicPartition{p1}
				// The topic is named n times, each time with partition 0.
				req.Topics = []kmsg.ListOffsetsRequestTopic{rt}
				for range n {
					again := kmsg.NewListOffsetsRequestTopic()
					again.Topic = "t"
					again.Partitions = []kmsg.ListOffsetsRequestTopicPartition{p0}
					req.Topics = append(req.Topics, again)
				}
				return req
			},
			check: func(t *testing.T, resp kmsg.Response) {
				ts := resp.(*kmsg.ListOffsetsResponse).Topics
				if len(ts) != 1 || ts[0].Topic != "t" {
					t.Fatalf("%d topics (first %+v), want t once", len(ts), first(ts))
				}
				var got []itemAnswer
				for _, p := range ts[0].Partitions {
					got = append(got, itemAnswer{string(rune('0' + p.Partition)), p.ErrorCode})
				}
				want := []itemAnswer{{"1", 0}, {"0", kerr.InvalidRequest.Code}}
				if !slices.Equal(got, want) {
					t.Errorf("%d partitions, first %v; want %v", len(got), got[:min(len(got), 3)], want)
				}
			},
		},
		{
			name:       "OffsetFetch v7 partitions",
			maxVersion: 7,
			served:     true,
			build: func(n int) kmsg.Request {
				req := kmsg.NewPtrOffsetFetchRequest()
				req.Group = "g"
				rt := kmsg.NewOffsetFetchRequestTopic()
				rt.Topic, rt.Partitions = "t", slices.Repeat([]int32{0}, n)
				req.Topics = []kmsg.OffsetFetchRequestTopic{rt, rt}
				return req
			},
			check: func(t *testing.T, resp kmsg.Response) {
				ts := resp.(*kmsg.OffsetFetchResponse).Topics
				if len(ts) != 1 || len(ts[0].Partitions) != 1 || ts[0].Partitions[0].Offset != 5 {
					t.Errorf("%d topics (first %+v), want t/0 at 5 once", len(ts), first(ts))
				}
			},
		},
		{
			name:       "OffsetFetch v9 groups",
			maxVersion: 9,
			served:     true,
			build: func(n int) kmsg.Request {
				req := kmsg.NewPtrOffsetFetchRequest()
				rg := kmsg.NewOffsetFetchRequestGroup()
				rg.Group = "g" // every partition
				req.Groups = slices.Repeat([]kmsg.OffsetFetchRequestGroup{rg}, n)
				return req
			},
			check: func(t *testing.T, resp kmsg.Response) {
				gs := resp.(*kmsg.OffsetFetchResponse).Groups
				if len(gs) != 1 || len(gs[0].Topics) != 1 || len(gs[0].Topics[0].Partitions) != 2 {
					t.Errorf("%d groups (first %+v), want g's two offsets once", len(gs), first(gs))
				}
			},
		},
		{
			name: "CreateTopics",
			build: func(n int) kmsg.Request {
				req := kmsg.NewPtrCreateTopicsRequest()
				req.TimeoutMillis = 10000
				rt := kmsg.NewCreateTopicsRequestTopic()
				rt.Topic, rt.NumPartitions, rt.ReplicationFactor = "c", 1, 1
				req.Topics = slices.Repeat([]kmsg.CreateTopicsRequestTopic{rt}, n)
				return req
			},
			check: func(t *testing.T, resp kmsg.Response) {
				ts := resp.(*kmsg.CreateTopicsResponse).Topics
				if len(ts) != 1 || ts[0].ErrorCode != kerr.InvalidRequest.Code {
					t.Errorf("%d topics (first %+v), want one INVALID_REQUEST", len(ts), first(ts))
				}
				f.wantTopics(t, ctx, map[string]bool{"c": false})
			},
		},
		{
			name: "CreatePartitions",
			build: func(n int) kmsg.Request {
				req := kmsg.NewPtrCreatePartitionsRequest()
				req.TimeoutMillis = 10000
				rt := kmsg.NewCreatePartitionsRequestTopic()
				rt.Topic, rt.Count = "t", 3
				req.Topics = slices.Repeat([]kmsg.CreatePartitionsRequestTopic{rt}, n)
				return req
			},
			check: func(t *testing.T, resp kmsg.Response) {
				ts := resp.(*kmsg.CreatePartitionsResponse).Topics
				if len(ts) != 1 || ts[0].ErrorCode != kerr.InvalidRequest.Code {
					t.Errorf("%d topics (first %+v), want one INVALID_REQUEST", len(ts), first(ts))
				}
				td, err := f.adm.ListTopics(ctx, "t")
				if err != nil || len(td["t"].Partitions) != 2 {
					t.Errorf("t has %d partitions (%v), want 2", len(td["t"].Partitions), err)
				}
			},
		},
		{
			name: "AlterConfigs",
			build: func(n int) kmsg.Request {
				req := kmsg.NewPtrAlterConfigsRequest()
				rr := kmsg.NewAlterConfigsRequestResource()
				rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
				c := kmsg.NewAlterConfigsRequestResourceConfig()
				c.Name, c.Value = "retention.ms", &value
				rr.Configs = []kmsg.AlterConfigsRequestResourceConfig{c}
				req.Resources = slices.Repeat([]kmsg.AlterConfigsRequestResource{rr}, n)
				return req
			},
			check: func(t *testing.T, resp kmsg.Response) {
				rs := resp.(*kmsg.AlterConfigsResponse).Resources
				if len(rs) != 1 || rs[0].ErrorCode != kerr.InvalidRequest.Code {
					t.Errorf("%d resources (first %+v), want one INVALID_REQUEST", len(rs), first(rs))
				}
				f.wantRetentionUnchanged(t, ctx, value)
			},
		},
		{
			name: "IncrementalAlterConfigs",
			build: func(n int) kmsg.Request {
				req := kmsg.NewPtrIncrementalAlterConfigsRequest()
				rr := kmsg.NewIncrementalAlterConfigsRequestResource()
				rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
				c := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
				c.Name, c.Op, c.Value = "retention.ms", kmsg.IncrementalAlterConfigOpSet, &value
				rr.Configs = []kmsg.IncrementalAlterConfigsRequestResourceConfig{c}
				req.Resources = slices.Repeat([]kmsg.IncrementalAlterConfigsRequestResource{rr}, n)
				return req
			},
			check: func(t *testing.T, resp kmsg.Response) {
				rs := resp.(*kmsg.IncrementalAlterConfigsResponse).Resources
				if len(rs) != 1 || rs[0].ErrorCode != kerr.InvalidRequest.Code {
					t.Errorf("%d resources (first %+v), want one INVALID_REQUEST", len(rs), first(rs))
				}
				f.wantRetentionUnchanged(t, ctx, value)
			},
		},
		namesCase("FindCoordinator", "g", func(names []string) kmsg.Request {
			req := kmsg.NewPtrFindCoordinatorRequest()
			req.CoordinatorKeys = names
			return req
		}, func(resp kmsg.Response) (answered []string) {
			for _, a := range resp.(*kmsg.FindCoordinatorResponse).Coordinators {
				answered = append(answered, a.Key)
			}
			return answered
		}),
		namesCase("DescribeGroups", "g", func(names []string) kmsg.Request {
			req := kmsg.NewPtrDescribeGroupsRequest()
			req.Groups = names
			return req
		}, func(resp kmsg.Response) (answered []string) {
			for _, a := range resp.(*kmsg.DescribeGroupsResponse).Groups {
				answered = append(answered, a.Group)
			}
			return answered
		}),
		namesCase("ConsumerGroupDescribe", "g", func(names []string) kmsg.Request {
			req := kmsg.NewPtrConsumerGroupDescribeRequest()
			req.Groups = names
			return req
		}, func(resp kmsg.Response) (answered []string) {
			for _, a := range resp.(*kmsg.ConsumerGroupDescribeResponse).Groups {
				answered = append(answered, a.Group)
			}
			return answered
		}),
		partitionsCase("DescribeProducers", func(partitions []int32) kmsg.Request {
			req := kmsg.NewPtrDescribeProducersRequest()
			rt := kmsg.NewDescribeProducersRequestTopic()
			rt.Topic, rt.Partitions = "t", partitions
			req.Topics = []kmsg.DescribeProducersRequestTopic{rt, rt}
			return req
		}, func(resp kmsg.Response) (answered []string) {
			for _, st := range resp.(*kmsg.DescribeProducersResponse).Topics {
				for _, sp := range st.Partitions {
					answered = append(answered, fmt.Sprintf("%s/%d:%d", st.Topic, sp.Partition, sp.ErrorCode))
				}
			}
			return answered
		}),
		partitionsCase("OffsetForLeaderEpoch", func(partitions []int32) kmsg.Request {
			req := kmsg.NewPtrOffsetForLeaderEpochRequest()
			rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
			rt.Topic = "t"
			for _, index := range partitions {
				rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
				rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = index, -1, 0
				rt.Partitions = append(rt.Partitions, rp)
			}
			req.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{rt, rt}
			return req
		}, func(resp kmsg.Response) (answered []string) {
			for _, st := range resp.(*kmsg.OffsetForLeaderEpochResponse).Topics {
				for _, sp := range st.Partitions {
					answered = append(answered, fmt.Sprintf("%s/%d:%d", st.Topic, sp.Partition, sp.ErrorCode))
				}
			}
			return answered
		}),
		namesCase("DescribeTopicPartitions", "t", func(names []string) kmsg.Request {
			req := kmsg.NewPtrDescribeTopicPartitionsRequest()
			req.ResponsePartitionLimit = 100
			for _, name := range names {
				req.Topics = append(req.Topics, kmsg.DescribeTopicPartitionsRequestTopic{Topic: name})
			}
			return req
		}, func(resp kmsg.Response) []string {
			var names []string
			for _, st := range resp.(*kmsg.DescribeTopicPartitionsResponse).Topics {
				names = append(names, deref(st.Topic))
			}
			return names
		}),
		partitionsCase("DescribeLogDirs", func(partitions []int32) kmsg.Request {
			req := kmsg.NewPtrDescribeLogDirsRequest()
			rt := kmsg.NewDescribeLogDirsRequestTopic()
			rt.Topic, rt.Partitions = "t", partitions
			req.Topics = []kmsg.DescribeLogDirsRequestTopic{rt, rt}
			return req
		}, func(resp kmsg.Response) (answered []string) {
			for _, d := range resp.(*kmsg.DescribeLogDirsResponse).Dirs {
				for _, st := range d.Topics {
					for _, sp := range st.Partitions {
						answered = append(answered, fmt.Sprintf("%s/%d:%d", st.Topic, sp.Partition, d.ErrorCode))
					}
				}
			}
			return answered
		}),
		namesCase("DescribeTransactions", "x", func(names []string) kmsg.Request {
			req := kmsg.NewPtrDescribeTransactionsRequest()
			req.TransactionalIDs = names
			return req
		}, func(resp kmsg.Response) (answered []string) {
			for _, a := range resp.(*kmsg.DescribeTransactionsResponse).TransactionStates {
				answered = append(answered, a.TransactionalID)
			}
			return answered
		}),
		{
			name:   "OffsetDelete",
			served: true,
			build: func(n int) kmsg.Request {
				req := kmsg.NewPtrOffsetDeleteRequest()
				req.Group = "g"
				rp := kmsg.NewOffsetDeleteRequestTopicPartition()
				rp.Partition = 1
				rt := kmsg.NewOffsetDeleteRequestTopic()
				rt.Topic, rt.Partitions = "t", slices.Repeat([]kmsg.OffsetDeleteRequestTopicPartition{rp}, n)
				req.Topics = []kmsg.OffsetDeleteRequestTopic{rt, rt}
				return req
			},
			check: func(t *testing.T, resp kmsg.Response) {
				ts := resp.(*kmsg.OffsetDeleteResponse).Topics
				if len(ts) != 1 || len(ts[0].Partitions) != 1 || ts[0].Partitions[0].ErrorCode != 0 {
					t.Errorf("%d topics (first %+v), want t/1 deleted once", len(ts), first(ts))
				}
			},
		},
		// A group no one uses: deleting g would change the cases above.
		namesCase("DeleteGroups", "missing", func(names []string) kmsg.Request {
			req := kmsg.NewPtrDeleteGroupsRequest()
			req.Groups = names
			return req
		}, func(resp kmsg.Response) (answered []string) {
			for _, a := range resp.(*kmsg.DeleteGroupsResponse).Groups {
				answered = append(answered, a.Group)
			}
			return answered
		}),
	}
}

// namesCase is a served case of an API that names plain strings (groups,
// keys, ids): build fills a request with names, answered lists the names
// its response answers, which must be item once.
func namesCase(name, item string, build func(names []string) kmsg.Request, answered func(kmsg.Response) []string) dupCase {
	return dupCase{
		name:   name,
		served: true,
		build:  func(n int) kmsg.Request { return build(slices.Repeat([]string{item}, n)) },
		check: func(t *testing.T, resp kmsg.Response) {
			if got := answered(resp); len(got) != 1 || got[0] != item {
				t.Errorf("%d answers (first %v), want %s once", len(got), first(got), item)
			}
		},
	}
}

// partitionsCase is a read naming partition 1 of topic t n times, under
// two entries for t: answered lists its answers as "topic/partition:code",
// which must be t/1 once, without error.
func partitionsCase(name string, build func(partitions []int32) kmsg.Request, answered func(kmsg.Response) []string) dupCase {
	return dupCase{
		name:   name,
		served: true,
		build:  func(n int) kmsg.Request { return build(slices.Repeat([]int32{1}, n)) },
		check: func(t *testing.T, resp kmsg.Response) {
			if got := answered(resp); len(got) != 1 || got[0] != "t/1:0" {
				t.Errorf("%d answers (first %v), want t/1:0 once", len(got), first(got))
			}
		},
	}
}

// itemAnswer is one item's name and error code.
type itemAnswer struct {
	name string
	code int16
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

// wantTopics checks which of the named topics exist.
func (f *dupFixture) wantTopics(t *testing.T, ctx context.Context, want map[string]bool) {
	t.Helper()
	td, err := f.adm.ListTopics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for name, exists := range want {
		if td.Has(name) != exists {
			t.Errorf("topic %s exists: %v, want %v", name, td.Has(name), exists)
		}
	}
}

// wantRetentionUnchanged checks that t's retention.ms is not refused.
func (f *dupFixture) wantRetentionUnchanged(t *testing.T, ctx context.Context, refused string) {
	t.Helper()
	if got := topicConfig(t, ctx, f.adm, "t", "retention.ms"); got == refused {
		t.Errorf("retention.ms set to %s by a refused request", refused)
	}
}

// first is the first of items, for failure messages that should not print
// ten thousand of them.
func first[T any](items []T) any {
	if len(items) == 0 {
		return nil
	}
	return items[0]
}

// BenchmarkAmplification sends the requests of issue 9's amplification
// findings, each about 1 MiB repeating one item, and reports the request
// and response sizes (go test -run '^$' -bench Amplification -benchtime 1x).
func BenchmarkAmplification(b *testing.B) {
	ctx := testkit.Context(b)
	f := newDupFixture(b)
	cases := []struct {
		name       string
		maxVersion int16
		build      func(n int) kmsg.Request
	}{
		{"DescribeConfigs", 4, func(n int) kmsg.Request {
			req := kmsg.NewPtrDescribeConfigsRequest()
			rr := kmsg.NewDescribeConfigsRequestResource()
			rr.ResourceType, rr.ResourceName = kmsg.ConfigResourceTypeTopic, "t"
			req.Resources = slices.Repeat([]kmsg.DescribeConfigsRequestResource{rr}, n)
			return req
		}},
		{"Metadata empty names", 8, func(n int) kmsg.Request {
			req := kmsg.NewPtrMetadataRequest()
			empty := ""
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = &empty
			req.Topics = slices.Repeat([]kmsg.MetadataRequestTopic{rt}, n)
			return req
		}},
		{"DeleteTopics", 5, func(n int) kmsg.Request {
			req := kmsg.NewPtrDeleteTopicsRequest()
			req.TimeoutMillis = 10000
			req.TopicNames = slices.Repeat([]string{"missing"}, n)
			return req
		}},
		{"ListOffsets", 0, func(n int) kmsg.Request {
			req := kmsg.NewPtrListOffsetsRequest()
			rt := kmsg.NewListOffsetsRequestTopic()
			rt.Topic = "t"
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Timestamp = -1
			rt.Partitions = slices.Repeat([]kmsg.ListOffsetsRequestTopicPartition{rp}, n)
			req.Topics = []kmsg.ListOffsetsRequestTopic{rt}
			return req
		}},
		{"OffsetFetch", 9, func(n int) kmsg.Request {
			req := kmsg.NewPtrOffsetFetchRequest()
			rg := kmsg.NewOffsetFetchRequestGroup()
			rg.Group = "g"
			req.Groups = slices.Repeat([]kmsg.OffsetFetchRequestGroup{rg}, n)
			return req
		}},
		// What is left once duplicates are gone: distinct items that do not
		// exist, each answered (see broker/duplicates.go).
		{"Metadata distinct unknown names", 8, func(n int) kmsg.Request {
			req := kmsg.NewPtrMetadataRequest()
			req.AllowAutoTopicCreation = false
			for _, name := range distinctNames(n) {
				rt := kmsg.NewMetadataRequestTopic()
				rt.Topic = &name
				req.Topics = append(req.Topics, rt)
			}
			return req
		}},
		{"DescribeTransactions distinct unknown ids", 0, func(n int) kmsg.Request {
			req := kmsg.NewPtrDescribeTransactionsRequest()
			req.TransactionalIDs = distinctNames(n)
			return req
		}},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			// Repeat the item until the request reaches 1 MiB at the version
			// it is sent with.
			version := c.maxVersion
			if version == 0 {
				version = c.build(1).MaxVersion()
			}
			n := 1
			var req kmsg.Request
			for {
				req = c.build(n)
				req.SetVersion(version)
				if len(req.AppendTo(nil)) >= 1<<20 {
					break
				}
				n *= 2
			}
			var size int
			for b.Loop() {
				size = encodedLen(f.send(b, ctx, c.build(n), c.maxVersion))
			}
			b.ReportMetric(float64(len(req.AppendTo(nil))), "req-B")
			b.ReportMetric(float64(size), "resp-B")
		})
	}
}

// distinctNames is n distinct names of four characters.
func distinctNames(n int) []string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	out := make([]string, n)
	for i := range out {
		var b [4]byte
		for j, v := len(b)-1, i; j >= 0; j, v = j-1, v/len(digits) {
			b[j] = digits[v%len(digits)]
		}
		out[i] = string(b[:])
	}
	return out
}
