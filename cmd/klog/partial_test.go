package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// outage is a cluster of three nodes with two of them killed: topic orders
// has six partitions of one replica each, some led by the node left
// (keep), which coordinates group g1 (offsets committed on every
// partition) and transactional id live; dead names one transactional id
// coordinated by a killed node.
type outage struct {
	b          string
	keep       int32
	kept, lost []int32 // the partitions of orders led by keep, and the others
	live, dead string
}

func startOutage(t *testing.T) outage {
	t.Helper()
	c := brokertest.StartCluster(t, 3)
	ctx := testkit.Context(t)
	cl := c.Client(kgo.RecordPartitioner(kgo.ManualPartitioner()))
	adm := kadm.NewClient(cl)
	if resp, err := adm.CreateTopic(ctx, 6, 1, nil, "orders"); err != nil || resp.Err != nil {
		t.Fatalf("create orders: %v %v", err, resp.Err)
	}
	o := outage{b: strings.Join(c.Bootstrap(), ",")}
	testkit.WaitFor(t, "the coordinator of g1", func() (bool, string) {
		fc := adm.FindGroupCoordinators(ctx, "g1")
		r, ok := fc["g1"]
		o.keep = r.NodeID
		return ok && r.Err == nil, fmt.Sprint(fc)
	})
	md, err := adm.Metadata(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	offsets := make(kadm.Offsets)
	for _, p := range md.Topics["orders"].Partitions.Sorted() {
		if p.Leader == o.keep {
			o.kept = append(o.kept, p.Partition)
		} else {
			o.lost = append(o.lost, p.Partition)
		}
		offsets.AddOffset("orders", p.Partition, 0, -1)
	}
	if len(o.kept) == 0 || len(o.lost) == 0 {
		t.Skipf("node %d leads partitions %v of orders: nothing to tell apart", o.keep, o.kept)
	}
	if err := adm.CommitAllOffsets(ctx, "g1", offsets); err != nil {
		t.Fatal(err)
	}
	for i := 0; o.live == "" || o.dead == ""; i++ {
		id := fmt.Sprintf("tx-%d", i)
		var coord int32
		testkit.WaitFor(t, "the coordinator of "+id, func() (bool, string) {
			fc := adm.FindTxnCoordinators(ctx, id)
			coord = fc[id].NodeID
			return fc[id].Err == nil, fmt.Sprint(fc)
		})
		switch {
		case coord == o.keep && o.live == "":
			o.live = id
		case coord != o.keep && o.dead == "":
			o.dead = id
		default:
			continue
		}
		tx := c.Client(kgo.TransactionalID(id), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err := tx.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		if err := tx.ProduceSync(ctx, &kgo.Record{Topic: "orders", Partition: o.kept[0], Value: []byte(id)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
		if err := tx.EndTransaction(ctx, kgo.TryCommit); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range c.Nodes() {
		if n.ID() != o.keep {
			n.Kill()
		}
	}
	// The node left may reload its coordinators once its peers are gone.
	kept := kadm.NewClient(c.Node(o.keep).Client())
	testkit.WaitFor(t, "the committed offsets of g1 from the node left", func() (bool, string) {
		fo, err := kept.FetchOffsets(ctx, "g1")
		return err == nil && len(fo["orders"]) == 6, fmt.Sprint(fo, err)
	})
	return o
}

// wantPartial checks a partial answer: exit 3, and on stderr at most one
// line per killed node, each naming what it could not read.
func wantPartial(t *testing.T, r result, what string) {
	t.Helper()
	if r.code != exitPartial {
		t.Errorf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", what, r.code, exitPartial, r.stdout, r.stderr)
	}
	reasons := 0
	for _, l := range lines(r.stderr) {
		if strings.HasPrefix(l, "klog: ? for ") {
			reasons++
		}
	}
	if reasons == 0 || reasons > 3 {
		t.Errorf("%s: want one reason per unreachable node on stderr:\n%s", what, r.stderr)
	}
}

// TestDescribeDuringOutage: with two of three nodes killed, topic describe,
// group describe and txn list print what the surviving node can tell, mark
// each cell it cannot with "?", give each distinct reason once on stderr
// and exit 3 (a partial answer), not 1 with no table.
func TestDescribeDuringOutage(t *testing.T) {
	o := startOutage(t)

	r := klogRun(t, o.b, "", "topic", "describe", "orders")
	wantPartial(t, r, "topic describe")
	t.Logf("topic describe:\n%s%s", r.stdout, r.stderr)
	rows := map[string][]string{}
	for _, l := range lines(r.stdout) {
		f := strings.Fields(l)
		if len(f) == 7 {
			rows[f[0]] = f
		}
	}
	for _, p := range o.kept {
		if f := rows[fmt.Sprint(p)]; f == nil || f[5] == "?" || f[6] == "?" {
			t.Errorf("topic describe: partition %d of the live node: %q\n%s", p, f, r.stdout)
		}
	}
	for _, p := range o.lost {
		if f := rows[fmt.Sprint(p)]; f == nil || f[5] != "?" || f[6] != "?" {
			t.Errorf("topic describe: partition %d of a killed node: %q\n%s", p, f, r.stdout)
		}
	}
	tj := decodeJSON[topicDescribeJSON](t, klogRun(t, o.b, "", "topic", "describe", "orders", "--format", "json").stdout)
	for _, p := range tj.Topics[0].Partitions {
		lost := p.Leader != o.keep
		if lost != (p.HighWatermark == -1 && p.Errors["high_watermark"] != "" && p.Errors["log_start_offset"] != "") {
			t.Errorf("topic describe JSON: %+v", p)
		}
	}

	r = klogRun(t, o.b, "", "group", "describe", "g1")
	wantPartial(t, r, "group describe")
	t.Logf("group describe:\n%s%s", r.stdout, r.stderr)
	unknown := 0
	for _, l := range lines(r.stdout) {
		if f := strings.Fields(l); len(f) >= 7 && f[0] == "orders" && f[6] == "?" {
			unknown++
		}
	}
	if unknown != len(o.lost) || !strings.Contains(r.stdout, "TOTAL-LAG      ?") {
		t.Errorf("group describe: %d partitions with lag ?, want %d\n%s", unknown, len(o.lost), r.stdout)
	}
	gj := decodeJSON[groupDescribeJSON](t, klogRun(t, o.b, "", "group", "describe", "g1", "--format", "json").stdout)
	for _, p := range gj.Groups[0].Partitions {
		if (p.Lag == nil) != (p.Errors["lag"] != "") {
			t.Errorf("group describe JSON: %+v", p)
		}
	}

	r = klogRun(t, o.b, "", "txn", "list")
	wantPartial(t, r, "txn list")
	t.Logf("txn list:\n%s%s", r.stdout, r.stderr)
	if !strings.Contains(r.stdout, o.live) || strings.Contains(r.stdout, o.dead) || !strings.Contains(r.stderr, "the transactions of broker") {
		t.Errorf("txn list: want %s listed, %s missing and said so\nstdout:\n%s\nstderr:\n%s", o.live, o.dead, r.stdout, r.stderr)
	}
	r = klogRun(t, o.b, "", "txn", "list", "--format", "json")
	xj := decodeJSON[txnListJSON](t, r.stdout)
	if r.code != exitPartial || len(xj.Transactions) != 1 || xj.Transactions[0].TransactionalID != o.live ||
		len(xj.Errors) == 0 || !strings.HasPrefix(xj.Errors[0], "the transactions of broker") {
		t.Errorf("txn list JSON: exit %d, %+v", r.code, xj)
	}
}
