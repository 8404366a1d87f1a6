package adminapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/adminapi"
	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/nodeapi"
)

// startNode is a node without background cleaning, so that only the API's
// requests clean, with a compacted topic "c" of small segments holding
// 10 values of each of keys k0..k4, a tombstone of k0, and a topic "d"
// that is not compacted.
func startNode(t *testing.T) (*brokertest.Node, *nodeapi.Client, string) {
	t.Helper()
	n := brokertest.Start(t, brokertest.Config("log.cleaner.enable", "false"))
	ctx := testkit.Context(t)
	cl := n.Client(kgo.DefaultProduceTopic("c"))
	adm := kadm.NewClient(cl)
	seg := "1024"
	if _, err := adm.CreateTopic(ctx, 1, 1, map[string]*string{"cleanup.policy": new("compact"), "internal.segment.bytes": &seg}, "c"); err != nil {
		t.Fatal(err)
	}
	if _, err := adm.CreateTopic(ctx, 1, 1, nil, "d"); err != nil {
		t.Fatal(err)
	}
	var recs []*kgo.Record
	for round := range 10 {
		for k := range 5 {
			recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "k%d", k), Value: fmt.Appendf(nil, "v%d", round)})
		}
	}
	recs = append(recs, &kgo.Record{Key: []byte("k0")})
	for i := range 30 {
		recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "filler%d", i), Value: []byte("x")})
	}
	for _, r := range recs {
		if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(adminapi.Handler(n.Broker(), "admin-test", "test"))
	t.Cleanup(srv.Close)
	return n, nodeapi.NewClient(srv.URL, 0), srv.URL
}

func TestCompactDryRunThenCompact(t *testing.T) {
	_, c, _ := startNode(t)
	ctx := testkit.Context(t)
	before, err := c.Cleaner(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Partitions) != 1 || before.Partitions[0].Topic != "c" || before.Partitions[0].Runs != 0 || before.Partitions[0].DirtyRatio != 1 {
		t.Fatalf("cleaner before %+v", before)
	}
	plan, err := c.Compact(ctx, "c", -1, true)
	if err != nil {
		t.Fatal(err)
	}
	if !plan.DryRun || len(plan.Partitions) != 1 || plan.Partitions[0].Plan == nil || plan.Partitions[0].Cleaned {
		t.Fatalf("dry run %+v", plan)
	}
	p := plan.Partitions[0]
	keys := map[string]int64{}
	for _, k := range p.Plan.Keys {
		keys[k.Key] = k.Records
	}
	// Each key's 9 older values go, and k0's last value before its
	// tombstone; the tombstone stays, pending.
	for k := range 5 {
		want := int64(9)
		if k == 0 {
			want = 10
		}
		if keys[fmt.Sprint("k", k)] != want {
			t.Fatalf("dry run removes %d of k%d, want %d (plan %+v)", keys[fmt.Sprint("k", k)], k, want, p.Plan)
		}
	}
	if p.Plan.TombstonesPending != 1 || len(p.Plan.Tombstones) != 1 || p.Plan.Tombstones[0].Key != "k0" || p.Plan.Tombstones[0].Offset != 50 {
		t.Fatalf("tombstones %+v", p.Plan)
	}
	if st, _ := c.Cleaner(ctx); st.Partitions[0].Runs != 0 {
		t.Fatalf("a dry run ran the cleaner: %+v", st)
	}
	done, err := c.Compact(ctx, "c", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	d := done.Partitions[0]
	if !d.Cleaned || d.RecordsRemoved != p.RecordsRemoved || d.BytesRemoved != p.BytesRemoved || d.RecordsRemoved != 46 ||
		d.EndOffset != d.FirstUncleanableOffset || d.Cleaner.Runs == 0 || d.Cleaner.FirstDirtyOffset != d.EndOffset || d.Cleaner.LastRun == nil {
		t.Fatalf("compaction %+v, after the dry run %+v", d, p)
	}
	after, err := c.Cleaner(ctx)
	if err != nil || after.Partitions[0].RecordsRemoved != 46 || after.Partitions[0].DirtyRatio >= 1 {
		t.Fatalf("cleaner after %+v %v", after, err)
	}
}

func TestErrors(t *testing.T) {
	_, c, url := startNode(t)
	ctx := testkit.Context(t)
	for _, tc := range []struct {
		topic     string
		partition int32
		status    int
		msg       string
	}{
		{"nope", -1, http.StatusNotFound, "unknown topic or partition: nope"},
		{"c", 7, http.StatusNotFound, "unknown topic or partition: c/7"},
		{"d", -1, http.StatusConflict, "topic d: cleanup.policy has no compact (it is delete)"},
	} {
		_, err := c.Compact(ctx, tc.topic, tc.partition, false)
		se, ok := err.(*nodeapi.StatusError)
		if !ok || se.Status != tc.status || !strings.HasSuffix(se.Message, tc.msg) {
			t.Errorf("compact %s/%d: %v, want %d %q", tc.topic, tc.partition, err, tc.status, tc.msg)
		}
	}
	for _, tc := range []struct {
		method, path string
		status       int
		msg          string
	}{
		{"POST", "/v1/topics/c/compact?partition=x", http.StatusBadRequest, `partition "x": want a partition number`},
		{"POST", "/v1/topics/c/compact?dry_run=maybe", http.StatusBadRequest, `dry_run "maybe": want true or false`},
		{"GET", "/v1/topics/c/compact", http.StatusMethodNotAllowed, "method not allowed; allowed: POST"},
		{"GET", "/v2/nothing", http.StatusNotFound, "no endpoint GET /v2/nothing"},
	} {
		checkError(t, tc.method, url+tc.path, tc.status, tc.msg)
	}
}

func TestNode(t *testing.T) {
	n, c, _ := startNode(t)
	got, err := c.Node(testkit.Context(t))
	if err != nil {
		t.Fatal(err)
	}
	if want := (nodeapi.Node{NodeID: 0, Kafka: n.Addr(), Admin: "admin-test", Version: "test"}); got != want {
		t.Fatalf("node %+v, want %+v", got, want)
	}
}

// TestListenBoundsAndCloses: a Server serves on its own listener and
// Close ends it.
func TestListenBoundsAndCloses(t *testing.T) {
	n := brokertest.Start(t)
	s, err := adminapi.Listen("127.0.0.1:0", n.Broker(), adminapi.Options{Version: "v"})
	if err != nil {
		t.Fatal(err)
	}
	c := nodeapi.NewClient(s.Addr(), 0)
	if got, err := c.Node(testkit.Context(t)); err != nil || got.Admin != s.Addr() {
		t.Fatalf("node %+v %v", got, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Node(testkit.Context(t)); err == nil {
		t.Fatal("served after Close")
	}
}

// checkError calls url and fails t unless the answer is the API's JSON
// error msg with status.
func checkError(t *testing.T, method, url string, status int, msg string) {
	t.Helper()
	req, _ := http.NewRequestWithContext(context.Background(), method, url, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var e nodeapi.Error
	if resp.StatusCode != status || json.Unmarshal(body, &e) != nil || e.Error != msg || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("%s %s: %d %s, want %d %q", method, url, resp.StatusCode, body, status, msg)
	}
}
