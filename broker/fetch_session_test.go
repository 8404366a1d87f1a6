package broker_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// fetchVersionClient is a client whose Fetch requests are sent at version
// v (and Produce at 12, for produceRaw).
func fetchVersionClient(n *brokertest.Node, v int16) *kgo.Client {
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(kmsg.Produce.Int16(), 12)
	vs.SetMaxKeyVersion(kmsg.Fetch.Int16(), v)
	return n.Client(kgo.MaxVersions(vs))
}

// sessionFetch is a fetch of topic in session id at epoch, naming the
// given partitions at their fetch offsets, answered at once.
func sessionFetch(topic string, id, epoch int32, offsets map[int32]int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.MaxBytes = 1 << 20
	req.SessionID, req.SessionEpoch = id, epoch
	rt := kmsg.NewFetchRequestTopic()
	rt.Topic = topic
	for _, p := range slices.Sorted(maps.Keys(offsets)) {
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition, rp.FetchOffset, rp.PartitionMaxBytes = p, offsets[p], 1<<20
		rt.Partitions = append(rt.Partitions, rp)
	}
	if len(rt.Partitions) > 0 {
		req.Topics = append(req.Topics, rt)
	}
	return req
}

// answered lists the partitions resp carries, with how many bytes of
// records each, failing on a partition error.
func answered(t *testing.T, resp *kmsg.FetchResponse) map[int32]int {
	t.Helper()
	got := map[int32]int{}
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			if rp.ErrorCode != 0 {
				t.Fatalf("partition %d: %v", rp.Partition, kerr.ErrorForCode(rp.ErrorCode))
			}
			got[rp.Partition] = len(rp.RecordBatches)
		}
	}
	return got
}

func doFetch(ctx context.Context, t *testing.T, cl *kgo.Client, req *kmsg.FetchRequest) *kmsg.FetchResponse {
	t.Helper()
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestFetchSessions walks a session through Kafka's rules (KIP-227): a
// full fetch at epoch 0 creates it; an incremental fetch answers only the
// partitions with something new and reads those it does not name; a
// replayed epoch, an unknown id and a request naming topics otherwise are
// refused; forgetting every partition closes it; epoch -1 closes it.
func TestFetchSessions(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := fetchVersionClient(n, 12)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 3, 1, nil, "sess"); err != nil {
		t.Fatal(err)
	}
	produceRaw(ctx, t, cl, "sess", 0, rawBatch("a"))

	resp := doFetch(ctx, t, cl, sessionFetch("sess", 0, 0, map[int32]int64{0: 0, 1: 0, 2: 0}))
	if resp.ErrorCode != 0 || resp.SessionID == 0 {
		t.Fatalf("full fetch at epoch 0: error %d, session %d; want a session", resp.ErrorCode, resp.SessionID)
	}
	id := resp.SessionID
	if got := answered(t, resp); len(got) != 3 || got[0] == 0 {
		t.Fatalf("full fetch answered %v, want all three partitions, records in 0", got)
	}
	if st := n.Broker().FetchSessionStats(); st.Sessions != 1 || st.Partitions != 3 {
		t.Fatalf("stats after creating: %+v", st)
	}

	// Partition 0 moves past its records; nothing else changed.
	resp = doFetch(ctx, t, cl, sessionFetch("sess", id, 1, map[int32]int64{0: 1}))
	if resp.ErrorCode != 0 || resp.SessionID != id {
		t.Fatalf("epoch 1: error %d, session %d", resp.ErrorCode, resp.SessionID)
	}
	if got := answered(t, resp); len(got) != 0 {
		t.Fatalf("epoch 1 with nothing new answered %v, want no partition", got)
	}

	// Records in partition 2, which the request does not name.
	produceRaw(ctx, t, cl, "sess", 2, rawBatch("b"))
	resp = doFetch(ctx, t, cl, sessionFetch("sess", id, 2, nil))
	if got := answered(t, resp); len(got) != 1 || got[2] == 0 {
		t.Fatalf("epoch 2 answered %v, want partition 2 with records", got)
	}

	// The same epoch again: a duplicate.
	resp = doFetch(ctx, t, cl, sessionFetch("sess", id, 2, nil))
	if resp.ErrorCode != kerr.InvalidFetchSessionEpoch.Code || len(resp.Topics) != 0 {
		t.Fatalf("replayed epoch: error %d, %d topics; want INVALID_FETCH_SESSION_EPOCH", resp.ErrorCode, len(resp.Topics))
	}
	resp = doFetch(ctx, t, cl, sessionFetch("sess", id+1, 1, nil))
	if resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("unknown session: error %d, want FETCH_SESSION_ID_NOT_FOUND", resp.ErrorCode)
	}
	// An epoch below -1 is no full fetch, as in Kafka: the session's epoch
	// is another.
	resp = doFetch(ctx, t, cl, sessionFetch("sess", id, -2, nil))
	if resp.ErrorCode != kerr.InvalidFetchSessionEpoch.Code {
		t.Fatalf("epoch -2: error %d, want INVALID_FETCH_SESSION_EPOCH", resp.ErrorCode)
	}
	resp = doFetch(ctx, t, fetchVersionClient(n, 13), sessionFetch("sess", id, 3, nil))
	if resp.ErrorCode != kerr.FetchSessionTopicIDError.Code {
		t.Fatalf("v13 in a v12 session: error %d, want FETCH_SESSION_TOPIC_ID_ERROR", resp.ErrorCode)
	}

	// Forgetting all three partitions closes the session; the fetch is
	// answered without one.
	req := sessionFetch("sess", id, 3, nil)
	ft := kmsg.NewFetchRequestForgottenTopic()
	ft.Topic, ft.Partitions = "sess", []int32{0, 1, 2}
	req.ForgottenTopics = append(req.ForgottenTopics, ft)
	resp = doFetch(ctx, t, cl, req)
	if resp.ErrorCode != 0 || resp.SessionID != 0 {
		t.Fatalf("forgetting all: error %d, session %d; want no error and no session", resp.ErrorCode, resp.SessionID)
	}
	if st := n.Broker().FetchSessionStats(); st.Sessions != 0 || st.Partitions != 0 {
		t.Fatalf("stats after forgetting all: %+v", st)
	}
	resp = doFetch(ctx, t, cl, sessionFetch("sess", id, 4, nil))
	if resp.ErrorCode != kerr.FetchSessionIDNotFound.Code {
		t.Fatalf("closed session: error %d, want FETCH_SESSION_ID_NOT_FOUND", resp.ErrorCode)
	}

	// Epoch -1 closes the session it names and answers in full.
	id = doFetch(ctx, t, cl, sessionFetch("sess", 0, 0, map[int32]int64{0: 0})).SessionID
	if id == 0 {
		t.Fatal("no session created")
	}
	resp = doFetch(ctx, t, cl, sessionFetch("sess", id, -1, map[int32]int64{0: 0, 1: 0}))
	if got := answered(t, resp); resp.SessionID != 0 || len(got) != 2 {
		t.Fatalf("epoch -1: session %d, answered %v; want no session, both partitions", resp.SessionID, got)
	}
	if st := n.Broker().FetchSessionStats(); st.Sessions != 0 {
		t.Fatalf("stats after epoch -1: %+v", st)
	}

	// Before v7 there are no sessions.
	resp = doFetch(ctx, t, fetchVersionClient(n, 6), sessionFetch("sess", 0, 0, map[int32]int64{0: 0}))
	if st := n.Broker().FetchSessionStats(); st.Sessions != 0 || len(answered(t, resp)) != 1 {
		t.Fatalf("v6: stats %+v", st)
	}
}

// TestFetchSessionTopicIDs: a v13+ session keys its partitions by topic
// id and answers them by id.
func TestFetchSessionTopicIDs(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := fetchVersionClient(n, 13)
	res, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "ids")
	if err != nil {
		t.Fatal(err)
	}
	full := sessionFetch("", 0, 0, map[int32]int64{0: 0, 1: 0})
	full.Topics[0].TopicID = res.ID
	resp := doFetch(ctx, t, cl, full)
	if resp.SessionID == 0 || len(answered(t, resp)) != 2 {
		t.Fatalf("full v13 fetch: session %d, %d topics", resp.SessionID, len(resp.Topics))
	}
	produceRaw(ctx, t, cl, "ids", 1, rawBatch("x"))
	resp = doFetch(ctx, t, cl, sessionFetch("", resp.SessionID, 1, nil))
	if got := answered(t, resp); len(got) != 1 || got[1] == 0 || resp.Topics[0].TopicID != res.ID {
		t.Fatalf("incremental v13 fetch answered %v, topic %x", got, resp.Topics[0].TopicID)
	}
}

// TestFetchSessionWaitsOnAllPartitions: an incremental fetch that names no
// partition long-polls on every partition of its session and wakes for
// records in any of them.
func TestFetchSessionWaitsOnAllPartitions(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := fetchVersionClient(n, 12)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "poll"); err != nil {
		t.Fatal(err)
	}
	id := doFetch(ctx, t, cl, sessionFetch("poll", 0, 0, map[int32]int64{0: 0, 1: 0})).SessionID
	req := sessionFetch("poll", id, 1, nil)
	req.MaxWaitMillis, req.MinBytes = 30_000, 1
	done := make(chan *kmsg.FetchResponse, 1)
	go func() {
		resp, err := req.RequestWith(ctx, cl)
		if err != nil {
			t.Error(err)
		}
		done <- resp
	}()
	testkit.WaitFor(t, "the fetch parks", func() (bool, string) {
		return n.Broker().ParkedFetches() == 1, fmt.Sprintf("%d parked", n.Broker().ParkedFetches())
	})
	produceRaw(ctx, t, cl, "poll", 1, rawBatch("late"))
	select {
	case resp := <-done:
		if got := answered(t, resp); len(got) != 1 || got[1] == 0 {
			t.Fatalf("woken fetch answered %v, want partition 1 with records", got)
		}
	case <-ctx.Done():
		t.Fatal("the parked incremental fetch never woke")
	}
}

// TestFetchSessionRotates: partitions that return records move to the end
// of the session, so a response bounded by max bytes serves each in turn.
func TestFetchSessionRotates(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := fetchVersionClient(n, 12)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 2, 1, nil, "turns"); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"a", "b", "c"} {
		produceRaw(ctx, t, cl, "turns", 0, rawBatch(v))
	}
	produceRaw(ctx, t, cl, "turns", 1, rawBatch("a"))
	// Max bytes 1: each response holds only the first batch found.
	fetch := func(id, epoch int32, offsets map[int32]int64) map[int32]int {
		t.Helper()
		req := sessionFetch("turns", id, epoch, offsets)
		req.MaxBytes = 1
		resp := doFetch(ctx, t, cl, req)
		got := answered(t, resp)
		got[-1] = int(resp.SessionID)
		return got
	}
	got := fetch(0, 0, map[int32]int64{0: 0, 1: 0})
	if got[0] == 0 || got[1] != 0 {
		t.Fatalf("full fetch answered %v, want records of partition 0 only", got)
	}
	id := int32(got[-1])
	if got := fetch(id, 1, map[int32]int64{0: 1}); got[0] == 0 || got[1] != 0 {
		t.Fatalf("epoch 1 answered %v, want records of partition 0, still first", got)
	}
	// Partition 0 returned records and went to the end: partition 1
	// comes first now, though partition 0 has records too.
	if got := fetch(id, 2, map[int32]int64{0: 2}); got[1] == 0 || got[0] != 0 {
		t.Fatalf("epoch 2 answered %v, want records of partition 1, which waited its turn", got)
	}
}

// TestFetchSessionSlots: max.incremental.fetch.session.cache.slots bounds
// the sessions; a newcomer takes a slot only from a session idle for two
// minutes, or an older smaller one.
func TestFetchSessionSlots(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t, brokertest.Config("max.incremental.fetch.session.cache.slots", "1"))
	cl := fetchVersionClient(n, 12)
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 3, 1, nil, "slots"); err != nil {
		t.Fatal(err)
	}
	two := map[int32]int64{0: 0, 1: 0}
	if id := doFetch(ctx, t, cl, sessionFetch("slots", 0, 0, two)).SessionID; id == 0 {
		t.Fatal("the first session was not created")
	}
	for _, parts := range []map[int32]int64{{0: 0}, {0: 0, 1: 0, 2: 0}} {
		if id := doFetch(ctx, t, cl, sessionFetch("slots", 0, 0, parts)).SessionID; id != 0 {
			t.Fatalf("a session of %d partitions took the only slot from a fresh one", len(parts))
		}
	}
	n.AdvanceClock(3 * time.Minute)
	id := doFetch(ctx, t, cl, sessionFetch("slots", 0, 0, map[int32]int64{0: 0})).SessionID
	if id == 0 {
		t.Fatal("no session took the slot of one idle for 3 minutes")
	}
	if st := n.Broker().FetchSessionStats(); st.Sessions != 1 || st.Evictions != 1 || st.Partitions != 1 {
		t.Fatalf("stats: %+v", st)
	}
	// Three minutes old and just used: a session of more partitions may
	// take its slot, one of as many may not.
	n.AdvanceClock(3 * time.Minute)
	if resp := doFetch(ctx, t, cl, sessionFetch("slots", id, 1, nil)); resp.ErrorCode != 0 {
		t.Fatalf("using the session: error %d", resp.ErrorCode)
	}
	if id := doFetch(ctx, t, cl, sessionFetch("slots", 0, 0, map[int32]int64{1: 0})).SessionID; id != 0 {
		t.Fatal("a session of as many partitions took the slot of a session in use")
	}
	if id := doFetch(ctx, t, cl, sessionFetch("slots", 0, 0, two)).SessionID; id == 0 {
		t.Fatal("a larger session did not take the slot of an older smaller one")
	}
	if st := n.Broker().FetchSessionStats(); st.Sessions != 1 || st.Evictions != 2 || st.Partitions != 2 {
		t.Fatalf("stats: %+v", st)
	}

	m := brokertest.Start(t, brokertest.Config("max.incremental.fetch.session.cache.slots", "0"))
	if id := doFetch(ctx, t, fetchVersionClient(m, 12), sessionFetch("slots", 0, 0, two)).SessionID; id != 0 {
		t.Fatal("slots 0 created a session")
	}
}
