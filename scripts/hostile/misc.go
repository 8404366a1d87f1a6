package main

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Descriptor probe (finding 5) figures.
const (
	fdLimit        = 512  // ulimit -n of the node
	fdHeadroom     = 32   // descriptors left for clients and restarts
	manyPartitions = 6000 // one CreateTopics
	// logLineBound bounds what the node may log for a whole flood of bad
	// requests (findings 5 and 12): a rate-limited warning, not a line per
	// request.
	logLineBound = 100
)

// descriptors (finding 5): under ulimit -n 512, a CreateTopics of 6,000
// partitions is refused with a clear error or accepted with descriptors
// bounded; accept errors do not flood the log; killed and restarted under
// the same limit the node starts and serves.
func descriptors(p *run) {
	ctx := p.ctx
	lines0 := p.n.LogLines()
	start := time.Now()
	p.during(func(context.Context) {
		req := kmsg.NewPtrCreateTopicsRequest()
		// klog answers once this node made the partitions' logs, which
		// took 51 s and over 70 s at load 15-20 (Kafka answers at the
		// controller's commit): the wait leaves room for that.
		req.TimeoutMillis = 150000
		t := kmsg.NewCreateTopicsRequestTopic()
		t.Topic, t.NumPartitions, t.ReplicationFactor = "many", manyPartitions, 1
		req.Topics = append(req.Topics, t)
		r, err := dialRaw(p.n)
		if err != nil {
			p.failf("%v", err)
			return
		}
		defer r.Close()
		resp, _, err := r.Do(req, 160*time.Second)
		if err != nil {
			p.failf("CreateTopics %d partitions: %v", manyPartitions, err)
			return
		}
		rt := resp.(*kmsg.CreateTopicsResponse).Topics[0]
		p.code("createtopics", rt.ErrorCode)
		msg := "-"
		if rt.ErrorMessage != nil {
			msg = *rt.ErrorMessage
		}
		p.notef("CreateTopics %d partitions: %s %q in %.1fs", manyPartitions, codeName(rt.ErrorCode), msg, time.Since(start).Seconds())
	})
	_, fds := p.n.sampler().now()
	lines := p.n.LogLines() - lines0
	secs := time.Since(start).Seconds()
	p.notef("log %d lines in %.1fs", lines, secs)
	if lines >= logLineBound {
		p.failf("node logged %d lines during the attack, bound %d", lines, logLineBound)
	}
	if peak := p.n.sampler().peakFDs(); peak > fdLimit-fdHeadroom {
		p.failf("peak %d descriptors of %d allowed (now %d)", peak, fdLimit, fds)
	}
	if err := p.n.restart(ctx, true, p.n.opts); err != nil {
		p.failf("restart under ulimit -n %d after SIGKILL: %v", fdLimit, err)
		return
	}
	_, fds = p.n.sampler().now()
	p.notef("restarted with %d descriptors", fds)
}

// fetchMax (finding 11): three partitions with a batch each, fetched with
// a 50 MiB limit, all come back in one response.
func fetchMax(p *run) {
	ctx := p.ctx
	const topic = "fetchmax"
	if err := createTopic(ctx, p.n, topic, 3, nil); err != nil {
		p.failf("%v", err)
		return
	}
	for i := range int32(3) {
		if err := produceValues(ctx, p.n, topic, i, 1<<20, fmt.Appendf(nil, "p%d", i)); err != nil {
			p.failf("%v", err)
			return
		}
	}
	req := fetchReq(topic, 0, 50<<20, 500, 1)
	for i := range int32(2) {
		pt := req.Topics[0].Partitions[0]
		pt.Partition, pt.PartitionMaxBytes = i+1, 1<<20
		req.Topics[0].Partitions = append(req.Topics[0].Partitions, pt)
	}
	req.Topics[0].Partitions[0].PartitionMaxBytes = 1 << 20
	resp, err := doRaw(p.n, req)
	if err != nil {
		p.failf("fetch: %v", err)
		return
	}
	fr := resp.(*kmsg.FetchResponse)
	p.code("fetch", fr.ErrorCode)
	with := 0
	for _, t := range fr.Topics {
		for _, pt := range t.Partitions {
			if pt.ErrorCode != 0 {
				p.code(fmt.Sprintf("fetch[%d]", pt.Partition), pt.ErrorCode)
			}
			if len(pt.RecordBatches) > 0 {
				with++
			}
		}
	}
	p.notef("%d of 3 partitions carried records in one 50 MiB fetch", with)
	if with != 3 {
		p.failf("one fetch with MaxBytes 50 MiB returned records of %d of 3 partitions", with)
	}
}

// logFlood (finding 12): 2,000 malformed requests and 2,000 timestamp
// ListOffsets leave the node's log bounded.
func logFlood(p *run) {
	const malformed, lookups = 2000, 2000
	lines0 := p.n.LogLines()
	start := time.Now()
	p.during(func(context.Context) {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				for range malformed / 8 {
					sendMalformed(p.n)
				}
			})
		}
		wg.Go(func() { timestampLookups(p, lookups) })
		wg.Wait()
	})
	lines := p.n.LogLines() - lines0
	secs := time.Since(start).Seconds()
	p.notef("%d malformed requests and %d timestamp lookups: %d log lines in %.1fs", malformed, lookups, lines, secs)
	if lines >= logLineBound {
		p.failf("node logged %d lines for %d bad requests, bound %d", lines, malformed+lookups, logLineBound)
	}
}

// sendMalformed sends one Metadata request cut short inside its body (the
// frame length matches what is sent) and waits for the node to close.
func sendMalformed(n *node) {
	r, err := dialRaw(n)
	if err != nil {
		return
	}
	defer r.Close()
	req := kmsg.NewPtrMetadataRequest()
	t := kmsg.NewMetadataRequestTopic()
	t.Topic = kmsg.StringPtr("some-topic-name")
	req.Topics = append(req.Topics, t)
	frame, err := r.Encode(req)
	if err != nil {
		return
	}
	frame = frame[:len(frame)-12]
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-4))
	if r.Write(frame) == nil {
		r.ClosedWithin(2 * time.Second)
	}
}

// timestampLookups pipelines ListOffsets by timestamp on the canary
// partition and reads the answers.
func timestampLookups(p *run, n int) {
	r, err := dialRaw(p.n)
	if err != nil {
		p.failf("%v", err)
		return
	}
	defer r.Close()
	go func() {
		for range n {
			req := kmsg.NewPtrListOffsetsRequest()
			req.ReplicaID = -1
			t := kmsg.NewListOffsetsRequestTopic()
			t.Topic = p.c.topic
			pt := kmsg.NewListOffsetsRequestTopicPartition()
			pt.Partition, pt.Timestamp = 0, time.Now().Add(-time.Hour).UnixMilli()
			t.Partitions = append(t.Partitions, pt)
			req.Topics = append(req.Topics, t)
			if r.Send(req) != nil {
				return
			}
		}
	}()
	codes := map[int16]int{}
	for range n {
		resp, _, err := r.Recv(10 * time.Second)
		if err != nil {
			p.failf("timestamp lookups: %v", err)
			return
		}
		codes[resp.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].ErrorCode]++
	}
	for c, k := range codes {
		p.code(fmt.Sprintf("listoffsets*%d", k), c)
	}
}
