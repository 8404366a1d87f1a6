package txn

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/internal/testkit"
)

// harness drives a coordinator through datadriven commands. Producer ids
// and epochs default to the last ones InitProducerID returned for the id.
type harness struct {
	e       *testEnv
	pids    map[string]int64
	epochs  map[string]int16
	printed int // records already printed
}

func TestDatadriven(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		h := &harness{pids: map[string]int64{}, epochs: map[string]int16{}}
		h.e = newTestEnv(t, nil)
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var out strings.Builder
			h.cmd(t, d, &out)
			return out.String()
		})
	})
}

func arg(d *datadriven.TestData, key string) (string, bool) {
	for _, a := range d.CmdArgs {
		if a.Key == key {
			if len(a.Vals) == 0 {
				return "", true
			}
			return strings.Join(a.Vals, ","), true
		}
	}
	return "", false
}

func argInt(t *testing.T, d *datadriven.TestData, key string, def int64) int64 {
	s, ok := arg(d, key)
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("%s: %s=%q: %v", d.Pos, key, s, err)
	}
	return n
}

func argDuration(t *testing.T, d *datadriven.TestData, key string, def time.Duration) time.Duration {
	s, ok := arg(d, key)
	if !ok {
		return def
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("%s: %s=%q: %v", d.Pos, key, s, err)
	}
	return v
}

func errName(code int16) string {
	if code == 0 {
		return "OK"
	}
	return kerr.ErrorForCode(code).(*kerr.Error).Message
}

func parseTPs(t *testing.T, s string) []TopicPartition {
	var out []TopicPartition
	for _, f := range strings.Split(s, ",") {
		i := strings.LastIndexByte(f, '-')
		p, err := strconv.Atoi(f[i+1:])
		if i < 0 || err != nil {
			t.Fatalf("bad partition %q", f)
		}
		out = append(out, TopicPartition{f[:i], int32(p)})
	}
	return out
}

func (h *harness) id(d *datadriven.TestData) string {
	id, _ := arg(d, "id")
	return id
}

func (h *harness) cmd(t *testing.T, d *datadriven.TestData, out *strings.Builder) {
	ctx := testkit.Context(t)
	c := h.e.c
	id := h.id(d)
	version := int16(argInt(t, d, "v", -1))
	pid := argInt(t, d, "pid", h.pids[id])
	epoch := int16(argInt(t, d, "epoch", int64(h.epochs[id])))
	switch d.Cmd {
	case "init":
		req := kmsg.NewPtrInitProducerIDRequest()
		req.Version = 4
		if version >= 0 {
			req.Version = version
		}
		req.TransactionalID = &id
		req.TransactionTimeoutMillis = int32(argDuration(t, d, "timeout", time.Minute).Milliseconds())
		req.ProducerID = argInt(t, d, "pid", -1)
		req.ProducerEpoch = int16(argInt(t, d, "epoch", -1))
		resp := c.InitProducerID(ctx, req)
		if resp.ErrorCode != 0 {
			fmt.Fprintf(out, "init %s: %s\n", id, errName(resp.ErrorCode))
			return
		}
		h.pids[id], h.epochs[id] = resp.ProducerID, resp.ProducerEpoch
		fmt.Fprintf(out, "init %s: pid=%d epoch=%d\n", id, resp.ProducerID, resp.ProducerEpoch)
	case "add":
		tpsArg, _ := arg(d, "partitions")
		tps := parseTPs(t, tpsArg)
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		req.Version = 3
		if version >= 0 {
			req.Version = version
		}
		_, verify := arg(d, "verify-only")
		if req.Version < 4 {
			req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
			for _, tp := range tps {
				req.Topics = append(req.Topics, kmsg.AddPartitionsToTxnRequestTopic{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
			}
			resp := c.AddPartitionsToTxn(ctx, req)
			for _, rt := range resp.Topics {
				for _, p := range rt.Partitions {
					fmt.Fprintf(out, "add %s %s-%d: %s\n", id, rt.Topic, p.Partition, errName(p.ErrorCode))
				}
			}
			return
		}
		tx := kmsg.NewAddPartitionsToTxnRequestTransaction()
		tx.TransactionalID, tx.ProducerID, tx.ProducerEpoch, tx.VerifyOnly = id, pid, epoch, verify
		for _, tp := range tps {
			tx.Topics = append(tx.Topics, kmsg.AddPartitionsToTxnRequestTransactionTopic{Topic: tp.Topic, Partitions: []int32{tp.Partition}})
		}
		req.Transactions = append(req.Transactions, tx)
		resp := c.AddPartitionsToTxn(ctx, req)
		for _, rtx := range resp.Transactions {
			for _, rt := range rtx.Topics {
				for _, p := range rt.Partitions {
					fmt.Fprintf(out, "add %s %s-%d: %s\n", rtx.TransactionalID, rt.Topic, p.Partition, errName(p.ErrorCode))
				}
			}
		}
	case "add-offsets":
		req := kmsg.NewPtrAddOffsetsToTxnRequest()
		req.Version = 3
		if version >= 0 {
			req.Version = version
		}
		req.TransactionalID, req.ProducerID, req.ProducerEpoch = id, pid, epoch
		req.Group, _ = arg(d, "group")
		fmt.Fprintf(out, "add-offsets %s: %s\n", id, errName(c.AddOffsetsToTxn(ctx, req).ErrorCode))
	case "commit", "abort":
		req := kmsg.NewPtrEndTxnRequest()
		req.Version = 4
		if version >= 0 {
			req.Version = version
		}
		req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = id, pid, epoch, d.Cmd == "commit"
		resp := c.EndTxn(ctx, req)
		fmt.Fprintf(out, "%s %s: %s", d.Cmd, id, errName(resp.ErrorCode))
		if req.Version >= 5 && resp.ErrorCode == 0 {
			// Transaction version 2: the producer goes on with these.
			h.pids[id], h.epochs[id] = resp.ProducerID, resp.ProducerEpoch
			fmt.Fprintf(out, " pid=%d epoch=%d", resp.ProducerID, resp.ProducerEpoch)
		}
		out.WriteString("\n")
	case "add-implicit":
		tpArg, _ := arg(d, "partition")
		err := c.AddPartition(ctx, id, pid, epoch, parseTPs(t, tpArg)[0])
		fmt.Fprintf(out, "add-implicit %s %s: %s\n", id, tpArg, errName(Code(err)))
	case "verify":
		tpArg, _ := arg(d, "partition")
		err := c.VerifyPartition(ctx, id, pid, epoch, parseTPs(t, tpArg)[0])
		fmt.Fprintf(out, "verify %s %s: %s\n", id, tpArg, errName(Code(err)))
	case "markers":
		switch {
		case hasArg(d, "hold"):
			h.e.markers.hold()
		case hasArg(d, "release"):
			h.e.markers.release()
		case hasArg(d, "fail"):
			h.e.markers.mu.Lock()
			h.e.markers.fail = int(argInt(t, d, "fail", 0))
			h.e.markers.mu.Unlock()
		}
	case "store-fail":
		h.e.store.SetFail(errInjected)
	case "store-ok":
		h.e.store.SetFail(nil)
	case "wait":
		want, _ := arg(d, "state")
		testkit.WaitFor(t, id+" "+want, func() (bool, string) {
			for _, s := range c.Snapshot() {
				if s.TransactionalID == id {
					return s.State == want && !s.MarkersPending, ""
				}
			}
			return false, ""
		})
	case "advance":
		h.e.clock.Advance(argDuration(t, d, "by", 0))
	case "tick":
		c.Tick(ctx)
	case "restart":
		h.e.restart()
	case "log":
		for _, m := range h.e.markers.takeCalls() {
			fmt.Fprintln(out, m)
		}
		records := h.e.store.Records(0)
		for _, r := range records[h.printed:] {
			fmt.Fprintln(out, recordString(r))
		}
		h.printed = len(records)
	case "state":
		for _, s := range c.Snapshot() {
			fmt.Fprintf(out, "%s pid=%d epoch=%d %s timeout=%s", s.TransactionalID, s.ProducerID, s.ProducerEpoch, s.State, s.Timeout)
			if !s.StartTime.IsZero() {
				fmt.Fprintf(out, " started=%s", s.StartTime.Sub(newFakeClock().Now()))
			}
			if s.MarkersPending {
				out.WriteString(" markers-pending")
			}
			for _, tp := range s.Partitions {
				fmt.Fprintf(out, " %s-%d", tp.Topic, tp.Partition)
			}
			out.WriteString("\n")
		}
	case "describe":
		req := kmsg.NewPtrDescribeTransactionsRequest()
		ids, _ := arg(d, "ids")
		req.TransactionalIDs = strings.Split(ids, ",")
		for _, s := range c.DescribeTransactions(ctx, req).TransactionStates {
			if s.ErrorCode != 0 {
				fmt.Fprintf(out, "%s: %s pid=%d epoch=%d start=%d\n", s.TransactionalID, errName(s.ErrorCode), s.ProducerID, s.ProducerEpoch, s.StartTimestamp)
				continue
			}
			fmt.Fprintf(out, "%s: %s pid=%d epoch=%d timeout=%d start=%d", s.TransactionalID, s.State, s.ProducerID, s.ProducerEpoch, s.TimeoutMillis, s.StartTimestamp)
			for _, tp := range s.Topics {
				fmt.Fprintf(out, " %s%v", tp.Topic, tp.Partitions)
			}
			out.WriteString("\n")
		}
	case "list":
		req := kmsg.NewPtrListTransactionsRequest()
		req.Version = 2
		if version >= 0 {
			req.Version = version
		}
		if s, ok := arg(d, "states"); ok {
			req.StateFilters = strings.Split(s, ",")
		}
		if s, ok := arg(d, "pids"); ok {
			for _, f := range strings.Split(s, ",") {
				n, _ := strconv.ParseInt(f, 10, 64)
				req.ProducerIDFilters = append(req.ProducerIDFilters, n)
			}
		}
		req.DurationFilterMillis = argDuration(t, d, "longer-than", -time.Millisecond).Milliseconds()
		if s, ok := arg(d, "pattern"); ok {
			req.TransactionalIDPattern = &s
		}
		resp := c.ListTransactions(ctx, req)
		fmt.Fprintf(out, "list: %s", errName(resp.ErrorCode))
		if len(resp.UnknownStateFilters) > 0 {
			fmt.Fprintf(out, " unknown-states=%v", resp.UnknownStateFilters)
		}
		out.WriteString("\n")
		for _, s := range resp.TransactionStates {
			fmt.Fprintf(out, "%s pid=%d %s\n", s.TransactionalID, s.ProducerID, s.TransactionState)
		}
	default:
		t.Fatalf("%s: unknown command %q", d.Pos, d.Cmd)
	}
}

func hasArg(d *datadriven.TestData, key string) bool {
	_, ok := arg(d, key)
	return ok
}

// recordString prints a __transaction_state record.
func recordString(r Record) string {
	id, m, ok, err := decodeRecord(r)
	switch {
	case err != nil:
		return "bad record: " + err.Error()
	case !ok:
		return "unknown record"
	case m == nil:
		return "record " + id + ": tombstone"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "record %s: pid=%d epoch=%d %s timeout=%d", id, m.producerID, m.epoch, m.state, m.timeoutMillis)
	if m.prevProducerID >= 0 {
		fmt.Fprintf(&b, " prev-pid=%d", m.prevProducerID)
	}
	if m.nextProducerID >= 0 {
		fmt.Fprintf(&b, " next-pid=%d", m.nextProducerID)
	}
	if m.txnVersion != 0 {
		fmt.Fprintf(&b, " tv=%d", m.txnVersion)
	}
	for _, tp := range m.sortedPartitions() {
		fmt.Fprintf(&b, " %s-%d", tp.Topic, tp.Partition)
	}
	return b.String()
}
