package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/scripts/internal/klogproc"
)

// Settings the memory probes start their node with: short enough to see
// the timeouts act within a probe's few seconds.
const (
	progressTimeout = time.Second     // socket.request.progress.timeout.ms
	idleTimeout     = 2 * time.Second // connections.max.idle.ms
	maxConnections  = 300             // max.connections
	closeSlack      = 2 * time.Second // allowed past a timeout for the close
)

var memoryConfigs = []string{
	fmt.Sprintf("socket.request.progress.timeout.ms=%d", progressTimeout.Milliseconds()),
	fmt.Sprintf("connections.max.idle.ms=%d", idleTimeout.Milliseconds()),
	fmt.Sprintf("max.connections=%d", maxConnections),
}

// bound records an unmet bound: a failure when strict, a note when the
// attack runs beside others (all-memory) and only memory and service are
// judged.
func (p *run) bound(strict bool, format string, args ...any) {
	if strict {
		p.failf(format, args...)
	} else {
		p.notef("unmet: "+format, args...)
	}
}

// dialMany opens n raw connections; the ones that fail are counted.
func dialMany(nd *node, n int) (conns []*rawConn, failed int) {
	for range n {
		r, err := dialRaw(nd)
		if err != nil {
			failed++
			continue
		}
		conns = append(conns, r)
	}
	return conns, failed
}

func closeAll(conns []*rawConn) {
	for _, c := range conns {
		c.Close()
	}
}

// closedIn waits, in parallel, for the node to close each connection
// within d, and returns how many it closed and the slowest close.
func closedIn(conns []*rawConn, d time.Duration) (closed int, slowest time.Duration) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for _, c := range conns {
		wg.Go(func() {
			if c.ClosedWithin(d) {
				mu.Lock()
				closed++
				slowest = max(slowest, time.Since(start))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return closed, slowest
}

// slowloris (finding 1): 70 connections each send only a length prefix
// claiming 100 MiB, 10 send half a request and stall, 10 send nothing,
// and 8 claim 100 MiB and send 80 MiB of it before stalling (which makes
// a node that buffers whole frames touch 640 MB). Bounds: memory (checked
// by the caller), the stalled ones closed within
// socket.request.progress.timeout.ms after their last byte, the idle ones
// within connections.max.idle.ms, and (strict only) max.connections
// honoured.
func slowloris(ctx context.Context, p *run, strict bool) {
	const claim, filled = 100 << 20, 80 << 20
	prefix, _ := dialMany(p.n, 70)
	half, _ := dialMany(p.n, 10)
	idle, _ := dialMany(p.n, 10)
	fillers, _ := dialMany(p.n, 8)
	defer closeAll(prefix)
	defer closeAll(half)
	defer closeAll(idle)
	defer closeAll(fillers)
	var wg sync.WaitGroup
	wg.Go(func() {
		closed, slowest := closedIn(idle, idleTimeout+closeSlack)
		p.notef("idle %d/%d closed, slowest %.1fs", closed, len(idle), slowest.Seconds())
		if closed < len(idle) {
			p.bound(strict, "%d of %d idle connections still open after %v (connections.max.idle.ms %v)", len(idle)-closed, len(idle), idleTimeout+closeSlack, idleTimeout)
		} else if slowest < idleTimeout/2 && strict {
			p.failf("idle connections closed after %v, before connections.max.idle.ms %v", slowest, idleTimeout)
		}
	})
	for _, c := range prefix {
		_ = c.Write(binary.BigEndian.AppendUint32(nil, claim))
	}
	for _, c := range half {
		frame, err := c.Encode(kmsg.NewPtrApiVersionsRequest())
		if err == nil {
			_ = c.Write(frame[:len(frame)/2])
		}
	}
	var sent sync.WaitGroup
	var sentBytes atomic.Int64
	chunk := make([]byte, 1<<20)
	for _, c := range fillers {
		sent.Go(func() {
			// The node may stop reading (its request pool is full) and
			// then close: the write ends there.
			_ = c.Net().SetWriteDeadline(time.Now().Add(3 * time.Second))
			if _, err := c.Net().Write(binary.BigEndian.AppendUint32(nil, claim)); err != nil {
				return
			}
			for range filled / len(chunk) {
				n, err := c.Net().Write(chunk)
				sentBytes.Add(int64(n))
				if err != nil {
					return
				}
			}
		})
	}
	sent.Wait()
	p.notef("fillers sent %d MiB of %d", sentBytes.Load()>>20, len(fillers)*filled>>20)
	stalled := slices.Concat(prefix, half, fillers)
	closed, slowest := closedIn(stalled, progressTimeout+closeSlack)
	p.notef("stalled %d/%d closed, slowest %.1fs", closed, len(stalled), slowest.Seconds())
	if closed < len(stalled) {
		p.bound(strict, "%d of %d stalled connections still open %v after their last byte (progress timeout %v)", len(stalled)-closed, len(stalled), progressTimeout+closeSlack, progressTimeout)
	}
	wg.Wait()
}

// maxConns (finding 1): with max.connections=N, N+100 idle connections
// leave at most N open.
func maxConns(p *run) {
	conns, failed := dialMany(p.n, maxConnections+100)
	defer closeAll(conns)
	closed, _ := closedIn(conns, 500*time.Millisecond)
	held := len(conns) - closed
	p.notef("max.connections %d: %d held, %d closed at accept, %d dials failed", maxConnections, held, closed, failed)
	if held > maxConnections {
		p.failf("%d connections held open with max.connections=%d", held, maxConnections)
	}
}

// amplification (finding 2): requests of about 1 MiB that repeat one
// item. Bound: each answer under 1 MiB (or the connection closed), with
// the node's error codes recorded.
func amplification(ctx context.Context, p *run, strict bool) {
	const reqSize, respBound = 1 << 20, 1 << 20
	if err := createTopic(ctx, p.n, "amp", 1, nil); err != nil {
		p.failf("%v", err)
		return
	}
	if err := findCoordinator(p, "amp-group", 0); err != nil {
		p.failf("%v", err)
		return
	}
	cases := []struct {
		name  string
		build func(k int) kmsg.Request
	}{
		{"describeconfigs", func(k int) kmsg.Request {
			req := kmsg.NewPtrDescribeConfigsRequest()
			for range k {
				res := kmsg.NewDescribeConfigsRequestResource()
				res.ResourceType, res.ResourceName = kmsg.ConfigResourceTypeTopic, "amp"
				req.Resources = append(req.Resources, res)
			}
			return req
		}},
		{"metadata", func(k int) kmsg.Request {
			req := kmsg.NewPtrMetadataRequest()
			for range k {
				t := kmsg.NewMetadataRequestTopic()
				t.Topic = kmsg.StringPtr("")
				req.Topics = append(req.Topics, t)
			}
			return req
		}},
		{"deletetopics", func(k int) kmsg.Request {
			req := kmsg.NewPtrDeleteTopicsRequest()
			req.TimeoutMillis = 5000
			for range k {
				req.TopicNames = append(req.TopicNames, "amp-missing")
				t := kmsg.NewDeleteTopicsRequestTopic()
				t.Topic = kmsg.StringPtr("amp-missing")
				req.Topics = append(req.Topics, t)
			}
			return req
		}},
		{"listoffsets", func(k int) kmsg.Request {
			req := kmsg.NewPtrListOffsetsRequest()
			req.ReplicaID = -1
			t := kmsg.NewListOffsetsRequestTopic()
			t.Topic = "amp"
			for range k {
				pt := kmsg.NewListOffsetsRequestTopicPartition()
				pt.Partition, pt.Timestamp = 0, -1
				t.Partitions = append(t.Partitions, pt)
			}
			req.Topics = append(req.Topics, t)
			return req
		}},
		{"offsetfetch", func(k int) kmsg.Request {
			req := kmsg.NewPtrOffsetFetchRequest()
			req.SetVersion(9) // the last version that names topics; 10+ use ids
			req.Group = "amp-group"
			t := kmsg.NewOffsetFetchRequestTopic()
			t.Topic = "amp"
			gt := kmsg.NewOffsetFetchRequestGroupTopic()
			gt.Topic = "amp"
			for range k {
				t.Partitions = append(t.Partitions, 0)
				gt.Partitions = append(gt.Partitions, 0)
			}
			req.Topics = append(req.Topics, t)
			g := kmsg.NewOffsetFetchRequestGroup()
			g.Group = "amp-group"
			g.Topics = append(g.Topics, gt)
			req.Groups = append(req.Groups, g)
			return req
		}},
	}
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Go(func() {
			req, err := fitTo(p.n.versions, reqSize, c.build)
			if err != nil {
				p.failf("%s: %v", c.name, err)
				return
			}
			r, err := dialRaw(p.n)
			if err != nil {
				p.failf("%s: %v", c.name, err)
				return
			}
			defer r.Close()
			resp, size, err := r.Do(req, 20*time.Second)
			if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
				p.codeText(c.name, "closed") // a refusal too: nothing is built
				return
			}
			if err != nil {
				p.bound(strict, "%s: %v", c.name, err)
				return
			}
			p.codeText(c.name, itemCodes(resp))
			p.notef("%s %dB->%dB", c.name, reqSize, size)
			if size >= respBound {
				p.bound(strict, "%s: a %d-byte request got a %d-byte response, bound %d", c.name, reqSize, size, respBound)
			}
		})
	}
	wg.Wait()
}

// fitTo builds the request of k repeated items whose encoding is about
// size bytes, at the version the node (serving versions) will be sent.
func fitTo(versions map[int16]int16, size int, build func(k int) kmsg.Request) (kmsg.Request, error) {
	enc := func(k int) (kmsg.Request, int, error) {
		req := build(k)
		served, ok := versions[req.Key()]
		if !ok {
			return nil, 0, fmt.Errorf("%w: key %d", errNoVersion, req.Key())
		}
		if req.GetVersion() == 0 {
			req.SetVersion(min(req.MaxVersion(), served))
		}
		return req, len(req.AppendTo(nil)), nil
	}
	_, one, err := enc(1)
	if err != nil {
		return nil, err
	}
	_, two, _ := enc(2)
	req, _, err := enc(max(1, (size-one)/(two-one)+1))
	return req, err
}

// itemCodes summarizes the distinct error codes of a response's items.
func itemCodes(resp kmsg.Response) string {
	seen := map[string]int{}
	add := func(c int16) { seen[codeName(c)]++ }
	switch r := resp.(type) {
	case *kmsg.DescribeConfigsResponse:
		for _, x := range r.Resources {
			add(x.ErrorCode)
		}
	case *kmsg.MetadataResponse:
		add(r.ErrorCode)
		for _, x := range r.Topics {
			add(x.ErrorCode)
		}
	case *kmsg.DeleteTopicsResponse:
		for _, x := range r.Topics {
			add(x.ErrorCode)
		}
	case *kmsg.ListOffsetsResponse:
		for _, t := range r.Topics {
			for _, x := range t.Partitions {
				add(x.ErrorCode)
			}
		}
	case *kmsg.OffsetFetchResponse:
		if len(r.Groups) == 0 {
			add(r.ErrorCode)
		}
		for _, t := range r.Topics {
			for _, x := range t.Partitions {
				add(x.ErrorCode)
			}
		}
		for _, g := range r.Groups {
			add(g.ErrorCode)
			for _, t := range g.Topics {
				for _, x := range t.Partitions {
					add(x.ErrorCode)
				}
			}
		}
	}
	var parts []string
	for k, v := range seen {
		parts = append(parts, fmt.Sprintf("%s*%d", k, v))
	}
	sort.Strings(parts)
	return strings.Join(parts, "+")
}

// slowReaders (finding 3): 100 connections pipeline 20 fetches of a 1 MiB
// batch and 4 pipeline 20 fetches of a 60 MiB batch, and none reads an
// answer. Memory is the caller's bound; when strict, long-poll fetches
// whose clients disconnect must also be released (no CLOSE-WAIT left)
// within closeSlack.
func slowReaders(ctx context.Context, p *run, strict bool) {
	if err := createTopic(ctx, p.n, "slow", 1, nil); err != nil {
		p.failf("%v", err)
		return
	}
	bigMax := fmt.Sprint(64 << 20)
	if err := createTopic(ctx, p.n, "slow-big", 1, map[string]*string{"max.message.bytes": &bigMax}); err != nil {
		p.failf("%v", err)
		return
	}
	if err := produceValues(ctx, p.n, "slow", 0, 2<<20, bytes.Repeat([]byte("s"), 1<<20-256)); err != nil {
		p.failf("produce the 1 MiB batch: %v", err)
		return
	}
	if err := produceValues(ctx, p.n, "slow-big", 0, 64<<20, bytes.Repeat([]byte("b"), 60<<20)); err != nil {
		p.failf("produce the 60 MiB batch: %v", err)
		return
	}
	if strict {
		longPollRelease(ctx, p)
	}
	pipeline := func(topic string, conns, fetches int, maxBytes int32) []*rawConn {
		cs, _ := dialMany(p.n, conns)
		for _, c := range cs {
			_ = c.Net().(*net.TCPConn).SetReadBuffer(4 << 10) // keep the answers in the node, not our kernel
			for range fetches {
				if err := c.Send(fetchReq(topic, 0, maxBytes, 0, 0)); err != nil {
					break // the node stopped reading: what it should do
				}
			}
		}
		return cs
	}
	small := pipeline("slow", 100, 20, 2<<20)
	big := pipeline("slow-big", 4, 20, 64<<20)
	// The answers pile up, if they do, while nobody reads them.
	hold := time.NewTimer(3 * time.Second)
	select {
	case <-hold.C:
	case <-ctx.Done():
	}
	rss, _ := p.n.sampler().now()
	p.notef("slow readers holding: rss %dMB", rss>>20)
	// The attack is real only if the slow readers do get their batches.
	// The 60 MiB batch needs more room than the response budget has left
	// beside them, so the node may answer its fetch without records for
	// now: a consumer delayed, never stuck, as the check after shows.
	if len(small) > 0 && len(big) > 0 {
		for i, c := range []*rawConn{small[0], big[0]} {
			_ = c.Net().(*net.TCPConn).SetReadBuffer(4 << 20)
			resp, size, err := c.Recv(3 * time.Second)
			switch {
			case err != nil:
				p.notef("a slow reader's first fetch: %v", err)
			case len(resp.(*kmsg.FetchResponse).Topics[0].Partitions[0].RecordBatches) > 0:
				p.notef("a slow reader's fetch %dB", size)
			case i == 0:
				pt := resp.(*kmsg.FetchResponse).Topics[0].Partitions[0]
				p.failf("a slow reader's first fetch of the 1 MiB batch returned no records: %s", codeName(pt.ErrorCode))
			default:
				p.notef("the 60 MiB batch's fetch waits for room in the response budget")
			}
		}
	}
	closeAll(small)
	closeAll(big)
	// Once the slow readers are gone, the 60 MiB batch is served.
	start := time.Now()
	for {
		resp, err := doRaw(p.n, fetchReq("slow-big", 0, 64<<20, 500, 1))
		if err == nil {
			if got := len(resp.(*kmsg.FetchResponse).Topics[0].Partitions[0].RecordBatches); got > 0 {
				p.notef("60 MiB batch served %.1fs after the slow readers left (%dB)", time.Since(start).Seconds(), got)
				return
			}
		}
		if time.Since(start) > 10*time.Second {
			p.failf("60 MiB batch not served 10s after the slow readers left: %v", err)
			return
		}
	}
}

// longPollRelease: fetches parked at the log end whose clients then
// close must not leave the node's sockets in CLOSE-WAIT.
func longPollRelease(ctx context.Context, p *run) {
	end, err := endOffset(ctx, p.n, "slow", 0)
	if err != nil {
		p.failf("%v", err)
		return
	}
	conns, _ := dialMany(p.n, 10)
	ports := map[int]bool{}
	for _, c := range conns {
		ports[c.LocalPort()] = true
		_ = c.Send(fetchReq("slow", end, 1<<20, 20000, 1))
	}
	// A parked fetch cannot be seen from outside; give the node a moment
	// to read the requests and park them before the clients go.
	park := time.NewTimer(300 * time.Millisecond)
	<-park.C
	closeAll(conns)
	start := time.Now()
	var left int
	wctx, cancel := context.WithTimeout(ctx, closeSlack)
	defer cancel()
	err = klogproc.WaitFor(wctx, func() (bool, error) {
		n, err := p.n.closeWait(ports)
		left = n
		return n == 0, err
	})
	p.notef("long-poll release %d CLOSE-WAIT after %.1fs", left, time.Since(start).Seconds())
	if err != nil {
		p.failf("%d of %d disconnected long-poll fetches still in CLOSE-WAIT after %v: %v", left, len(conns), closeSlack, err)
	}
}

// fetchReq is one fetch of one partition from offset.
func fetchReq(topic string, offset int64, maxBytes, maxWaitMs, minBytes int32) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(12) // the last version that names topics; 13+ use ids
	req.ReplicaID = -1
	req.MaxWaitMillis, req.MinBytes, req.MaxBytes = maxWaitMs, minBytes, maxBytes
	req.SessionEpoch = -1
	t := kmsg.NewFetchRequestTopic()
	t.Topic = topic
	pt := kmsg.NewFetchRequestTopicPartition()
	pt.Partition, pt.FetchOffset, pt.PartitionMaxBytes = 0, offset, maxBytes
	pt.CurrentLeaderEpoch, pt.LogStartOffset = -1, -1
	t.Partitions = append(t.Partitions, pt)
	req.Topics = append(req.Topics, t)
	return req
}
