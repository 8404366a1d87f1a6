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
	h.wt.topic(r.Topic).unpart.add(h.wt.clock.Load())
}

func (h hooks) OnProduceRecordPartitioned(r *kgo.Record, _ int32) {
	wt := h.wt
	t := wt.topic(r.Topic)
	now := wt.clock.Load()
	t.unpart.remove(now, false)
	wt.part(t, r.Partition, true).add(now)
}

func (h hooks) OnProduceRecordUnbuffered(r *kgo.Record, err error) {
	wt := h.wt
	t := wt.topic(r.Topic)
	// A record that failed before it was partitioned is still pending
	// on its topic.
	tp := topicPartition{r.Topic, r.Partition}
	pw := wt.part(t, r.Partition, false)
	if pw == nil || pw.state.Load()&pendingMax == 0 {
		tp.partition, pw = -1, &t.unpart
	}
	now := wt.clock.Load()
	since := pw.remove(now, err == nil)
	// A delivery ends a reported wait.
	if err == nil && pw.reported.Load() {
		wt.mu.Lock()
		defer wt.mu.Unlock()
		if pw.reported.CompareAndSwap(true, false) {
			wt.ended(tp.String()+" delivered again", wt.at(now).Sub(wt.at(since)))
		}
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
