package brokertest

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/wire"
)

// AnyKey, as the key of Control, controls requests of every API key.
const AnyKey kmsg.Key = -1

// ControlFunc sees a request node received, before its handler runs.
// With handled false the request goes on to its handler (a control that
// only watches, or delays, returns false); with handled true resp is the
// answer instead (nil: no answer) and a non-nil err closes the
// connection. ctx ends when the node stops. It runs on the connection's
// goroutine: that connection's next request waits for it.
type ControlFunc func(ctx context.Context, node int32, req kmsg.Request) (resp kmsg.Response, handled bool, err error)

// control is one Control.
type control struct {
	key kmsg.Key
	fn  ControlFunc
}

// controls are a cluster's controls, in the order they were added; the
// slice is replaced whole, so a request with none costs one atomic load.
type controls struct {
	mu   sync.Mutex
	list atomic.Pointer[[]*control]
}

func (cs *controls) add(c *control) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	var list []*control
	if l := cs.list.Load(); l != nil {
		list = slices.Clone(*l)
	}
	list = append(list, c)
	cs.list.Store(&list)
}

func (cs *controls) remove(c *control) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	l := cs.list.Load()
	if l == nil {
		return
	}
	list := slices.DeleteFunc(slices.Clone(*l), func(x *control) bool { return x == c })
	if len(list) == 0 {
		cs.list.Store(nil)
		return
	}
	cs.list.Store(&list)
}

// Control has fn see every request of API key (AnyKey: of every key) that
// any node of the cluster receives, from clients and from the other nodes
// (followers fetch from their leaders), before its handler, until the
// returned remove is called or the test ends. Controls run in the order
// they were added; the first that handles a request answers it. It is
// klog's counterpart of kfake's ControlKey.
func (c *Cluster) Control(key kmsg.Key, fn ControlFunc) (remove func()) {
	ctl := &control{key: key, fn: fn}
	c.controls.add(ctl)
	remove = sync.OnceFunc(func() { c.controls.remove(ctl) })
	c.t.Cleanup(remove)
	return remove
}

// FailRequests answers the next n requests of API key, on any node, with
// err's error code instead of handling them: every partition of a
// Produce, Fetch, ListOffsets or OffsetCommit, every key of a
// FindCoordinator, and the response's own error code for the requests
// that have one (JoinGroup, SyncGroup, Heartbeat, InitProducerID, ...). Nothing of a failed request is applied. The
// requests after the n-th are served as usual. It fails the test at once
// for a key it cannot answer this way.
func (c *Cluster) FailRequests(key kmsg.Key, err *kerr.Error, n int) (remove func()) {
	c.t.Helper()
	if probe := kmsg.RequestForKey(key.Int16()); probe == nil || errorResponse(probe, 0) == nil {
		c.t.Fatalf("brokertest: FailRequests cannot answer %s with an error code", kmsg.NameForKey(key.Int16()))
	}
	var left atomic.Int64
	left.Store(int64(n))
	return c.Control(key, func(_ context.Context, _ int32, req kmsg.Request) (kmsg.Response, bool, error) {
		if left.Add(-1) < 0 {
			return nil, false, nil
		}
		return errorResponse(req, err.Code), true, nil
	})
}

// DelayRequests holds every request of API key (AnyKey: every request),
// on any node, for d before its handler runs, until remove is called.
// The connection's later requests wait behind it, as behind a slow
// broker. A Fetch delay delays the followers' replication fetches too.
func (c *Cluster) DelayRequests(key kmsg.Key, d time.Duration) (remove func()) {
	return c.Control(key, func(ctx context.Context, _ int32, _ kmsg.Request) (kmsg.Response, bool, error) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		}
		return nil, false, nil
	})
}

// requestHook is each node's broker.RequestHook: it holds requests while
// the node hangs, then runs the cluster's controls.
func (n *Node) requestHook(ctx context.Context, _ *wire.RequestContext, req kmsg.Request) (kmsg.Response, bool, error) {
	if hung := n.hung.Load(); hung != nil {
		select {
		case <-*hung:
		case <-ctx.Done():
			return nil, true, ctx.Err()
		}
	}
	list := n.cluster.controls.list.Load()
	if list == nil {
		return nil, false, nil
	}
	key := kmsg.Key(req.Key())
	for _, ctl := range *list {
		if ctl.key != AnyKey && ctl.key != key {
			continue
		}
		if resp, handled, err := ctl.fn(ctx, n.id, req); handled {
			return resp, true, err
		}
	}
	return nil, false, nil
}

// Hang stops the node answering, as SIGSTOP would, until Resume: its
// connections stay open, and every request it receives, from clients or
// the other nodes, waits unanswered. In a cluster it is also cut off from
// the other nodes (Isolate), so the controller fences it and moves its
// partitions' leadership away after broker.session.timeout.ms. Close,
// Kill and Crash end a hang.
func (n *Node) Hang() {
	n.t.Helper()
	if n.node == nil {
		n.t.Fatal("brokertest: Hang of a node not running")
	}
	ch := make(chan struct{})
	if !n.hung.CompareAndSwap(nil, &ch) {
		n.t.Fatal("brokertest: Hang of a hung node")
	}
	if len(n.cluster.nodes) > 1 {
		n.node.Isolate()
		n.hangIsolated = true
	}
}

// Resume ends Hang: the requests held are handled, in order.
func (n *Node) Resume() {
	n.t.Helper()
	if n.hung.Load() == nil {
		n.t.Fatal("brokertest: Resume of a node not hung")
	}
	n.resume()
}

func (n *Node) resume() {
	if n.hangIsolated && n.node != nil {
		n.node.Heal()
	}
	n.hangIsolated = false
	if ch := n.hung.Swap(nil); ch != nil {
		close(*ch)
	}
}

// errorResponse is req's response with code for each partition it names,
// or in the response's own error code; nil when the response has neither.
func errorResponse(req kmsg.Request, code int16) kmsg.Response {
	switch req := req.(type) {
	case *kmsg.ProduceRequest:
		resp := req.ResponseKind().(*kmsg.ProduceResponse)
		for _, t := range req.Topics {
			rt := kmsg.NewProduceResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewProduceResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.FetchRequest:
		resp := req.ResponseKind().(*kmsg.FetchResponse)
		for _, t := range req.Topics {
			rt := kmsg.NewFetchResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewFetchResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rp.HighWatermark, rp.LastStableOffset, rp.LogStartOffset = -1, -1, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.ListOffsetsRequest:
		resp := req.ResponseKind().(*kmsg.ListOffsetsResponse)
		for _, t := range req.Topics {
			rt := kmsg.NewListOffsetsResponseTopic()
			rt.Topic = t.Topic
			for _, p := range t.Partitions {
				rp := kmsg.NewListOffsetsResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rp.Offset, rp.Timestamp = -1, -1
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.OffsetCommitRequest:
		resp := req.ResponseKind().(*kmsg.OffsetCommitResponse)
		for _, t := range req.Topics {
			rt := kmsg.NewOffsetCommitResponseTopic()
			rt.Topic, rt.TopicID = t.Topic, t.TopicID
			for _, p := range t.Partitions {
				rp := kmsg.NewOffsetCommitResponseTopicPartition()
				rp.Partition, rp.ErrorCode = p.Partition, code
				rt.Partitions = append(rt.Partitions, rp)
			}
			resp.Topics = append(resp.Topics, rt)
		}
		return resp
	case *kmsg.FindCoordinatorRequest:
		resp := req.ResponseKind().(*kmsg.FindCoordinatorResponse)
		resp.ErrorCode = code // v0-3
		for _, key := range req.CoordinatorKeys {
			rc := kmsg.NewFindCoordinatorResponseCoordinator()
			rc.Key, rc.ErrorCode, rc.NodeID, rc.Port = key, code, -1, -1
			resp.Coordinators = append(resp.Coordinators, rc)
		}
		return resp
	}
	resp := req.ResponseKind()
	f := reflect.ValueOf(resp).Elem().FieldByName("ErrorCode")
	if !f.IsValid() || f.Kind() != reflect.Int16 {
		return nil
	}
	f.SetInt(int64(code))
	return resp
}
