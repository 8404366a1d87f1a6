package waits

import (
	"context"
	"errors"
	"net"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// hooks are the franz-go hooks a Watcher learns from.
type hooks struct{ wt *Watcher }

var (
	_ kgo.HookProduceRecordBuffered    = hooks{}
	_ kgo.HookProduceRecordPartitioned = hooks{}
	_ kgo.HookProduceRecordUnbuffered  = hooks{}
	_ kgo.HookBrokerConnect            = hooks{}
	_ kgo.HookBrokerE2E                = hooks{}
	_ kgo.HookGroupManageError         = hooks{}
)

// A record is pending on its topic (partition -1) from when it is
// buffered until it is partitioned, then on its partition until it is
// finished.

func (h hooks) OnProduceRecordBuffered(r *kgo.Record) {
	wt := h.wt
	wt.mu.Lock()
	defer wt.mu.Unlock()
	wt.add(topicPartition{r.Topic, -1})
}

func (h hooks) OnProduceRecordPartitioned(r *kgo.Record, _ int32) {
	wt := h.wt
	wt.mu.Lock()
	defer wt.mu.Unlock()
	wt.remove(topicPartition{r.Topic, -1}, false)
	wt.add(topicPartition{r.Topic, r.Partition})
}

func (h hooks) OnProduceRecordUnbuffered(r *kgo.Record, err error) {
	wt := h.wt
	wt.mu.Lock()
	defer wt.mu.Unlock()
	// A record that failed before it was partitioned is still pending
	// on its topic.
	tp := topicPartition{r.Topic, r.Partition}
	if pw := wt.parts[tp]; pw == nil || pw.pending == 0 {
		tp.partition = -1
	}
	wt.remove(tp, err == nil)
}

// add counts a record pending on tp; the caller holds mu.
func (wt *Watcher) add(tp topicPartition) {
	pw := wt.parts[tp]
	if pw == nil {
		pw = &partWait{}
		wt.parts[tp] = pw
	}
	if pw.pending == 0 {
		pw.since = wt.now()
	}
	pw.pending++
}

// remove counts a record no longer pending on tp, delivered or not; the
// caller holds mu. A delivery ends a reported wait.
func (wt *Watcher) remove(tp topicPartition, delivered bool) {
	pw := wt.parts[tp]
	if pw == nil {
		return
	}
	if pw.pending > 0 {
		pw.pending--
	}
	if delivered {
		now := wt.now()
		if pw.reported {
			wt.ended(tp.String()+" delivered again", now.Sub(pw.since))
			pw.reported = false
		}
		pw.since = now
	}
}

func (h hooks) OnBrokerConnect(meta kgo.BrokerMetadata, _ time.Duration, _ net.Conn, err error) {
	h.wt.brokerResult(meta, err)
}

func (h hooks) OnBrokerE2E(meta kgo.BrokerMetadata, _ int16, e2e kgo.BrokerE2E) {
	h.wt.brokerResult(meta, e2e.Err())
}

// brokerResult notes a broker's connection or request that succeeded or
// failed. A context's end is the client's own doing, not the broker's.
func (wt *Watcher) brokerResult(meta kgo.BrokerMetadata, err error) {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, kgo.ErrClientClosed) {
		return
	}
	addr := net.JoinHostPort(meta.Host, strconv.Itoa(int(meta.Port)))
	wt.mu.Lock()
	defer wt.mu.Unlock()
	now := wt.now()
	bw := wt.brokers[addr]
	switch {
	case err == nil && meta.NodeID >= 0:
		wt.answering = meta.NodeID
	case err != nil && meta.NodeID == wt.answering:
		wt.answering = -1
	}
	if err == nil {
		if bw != nil {
			if bw.reported {
				wt.ended("broker "+addr+" reachable again", now.Sub(bw.since))
			}
			delete(wt.brokers, addr)
		}
		return
	}
	if bw == nil {
		bw = &brokerWait{since: now}
		wt.brokers[addr] = bw
	}
	bw.last, bw.err = now, err
}

func (h hooks) OnGroupManageError(err error) {
	wt := h.wt
	wt.mu.Lock()
	defer wt.mu.Unlock()
	if wt.group.since.IsZero() {
		wt.group.since = wt.now()
	}
	wt.group.err = err
}

// assigned notes that the group session is back.
func (wt *Watcher) assigned() {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	g := &wt.group
	if g.reported {
		wt.ended("group "+wt.o.Group+" joined again", wt.now().Sub(g.since))
	}
	*g = groupWait{}
}

// believeDown is how long a broker whose connection or request failed is
// taken to be unreachable without another attempt: the client dials a
// broker it needs again and again, one it does not need seldom.
const believeDown = time.Minute

// unreachable returns the error of the broker at addr if its connections
// or requests failed lately, nil otherwise; the caller holds mu.
func (wt *Watcher) unreachable(addr string) error {
	bw := wt.brokers[addr]
	if bw == nil || wt.now().Sub(bw.last) > believeDown {
		return nil
	}
	return bw.err
}
