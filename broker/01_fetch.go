package broker

// Fetch (key 1), versions 4-18.
//
// Each partition returns whole record batches, byte for byte as stored,
// from the batch holding the fetch offset up to the high watermark
// (read_uncommitted) or the last stable offset (read_committed), bounded by
// the partition's max bytes and the request's max bytes (capped by the
// broker's fetch.max.bytes). As in Kafka (KIP-74), the first batch of the
// first partition with data is returned even when it is larger than those
// limits, so a consumer can always make progress. Record data is read only
// with room for it in the node's response budget
// (klog.queued.max.response.bytes, see fetchBudget); without room for the
// first batch a partition returns no data for now. The request waits up to
// MaxWaitMillis until MinBytes are available; any append to a fetched
// partition wakes it. Versions 13+ name topics by id.
//
// Fetch sessions (KIP-227, fetch_session.go): an incremental fetch reads
// every partition of its session and answers only those with something
// new; a full fetch at epoch 0 may create a session.
//
// read_committed fetches also carry the aborted transactions overlapping the
// returned range, so clients drop the batches of aborted transactions.
//
// A fetch naming a replica id (ReplicaID, or ReplicaState from v15) is a
// follower's: from a broker that is no follower of the partition it is
// refused, after the leader epoch and leadership checks, with
// UNKNOWN_LEADER_EPOCH when it named a current leader epoch and
// NOT_LEADER_OR_FOLLOWER otherwise, as Kafka's Partition.fetchRecords
// (followerReplicaOrThrow) refuses an unknown replica. A follower's fetch reads up to the log end offset,
// not the high watermark, and records the follower's fetch offset
// (partition.UpdateFollower), which may advance the high watermark and
// wake acks=-1 produces and fetches; the response carries the high
// watermark after that update. When the follower's LastFetchedEpoch (v12+)
// and fetch offset do not match the leader's log (KIP-320: the leader's
// end of that epoch is below the fetch offset, or the leader knows only a
// smaller epoch there), the partition answers DivergingEpoch with the
// leader's epoch and end offset and no records, and the fetch offset is
// not recorded, as in Kafka's Partition.fetchRecords; a last fetched epoch
// the leader cannot place at all answers OFFSET_OUT_OF_RANGE.
//
// Follower fetching (KIP-392). A consumer's fetch of v11+ may be served by
// any replica, as Kafka's FetchParams.fetchOnlyLeader allows once the
// request carries client metadata: a follower checks the consumer's
// CurrentLeaderEpoch against the leader epoch it knows
// (FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH) and reads up to its own high
// watermark (or last stable offset), as it learned them from the leader; a
// fetch offset past its log end is OFFSET_OUT_OF_RANGE. Until a follower
// that opened its log (a restart) has its high watermark from the leader
// it answers NOT_LEADER_OR_FOLLOWER, which sends consumers back to the
// leader (klog only: Kafka's follower starts from its high-watermark
// checkpoint, klog's from its log end, which may hold uncommitted
// records). Older versions and
// followers' own fetches are served by the leader only. With
// replica.selector.class set to Kafka's RackAwareReplicaSelector, the
// leader answers a v11+ consumer naming its rack (client.rack) with a
// PreferredReadReplica instead of records, at once, when an in-sync
// follower in that rack holds the fetch offset and the leader is not in
// that rack (partition.SelectRackAware), as Kafka's
// ReplicaManager.findPreferredReadReplica does; the partition's offsets
// come with it.
//
// From v16 a partition refused NOT_LEADER_OR_FOLLOWER or
// FENCED_LEADER_EPOCH carries the current leader and its epoch, and the
// response the leaders' endpoints (KIP-951, leader_hints.go).

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/wire"
	"github.com/klogdev/klog/store/log"
)

// maxFetchWait bounds how long a fetch may long-poll whatever the client
// asks for.
const maxFetchWait = 30 * time.Second

// Isolation levels of Fetch and ListOffsets requests (kmsg names none).
const (
	isolationReadUncommitted int8 = 0
	isolationReadCommitted   int8 = 1
)

func handleFetch(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (reply wire.Reply, _ error) {
	req := kreq.(*kmsg.FetchRequest)
	resp := req.ResponseKind().(*kmsg.FetchResponse)

	follower := fetchReplicaID(req) >= 0
	fc := n.newFetchContext(req)
	if fc.errCode != 0 {
		n.respond(fc, resp, follower)
		return wire.Reply{Response: resp}, nil
	}
	// What is read: for an incremental fetch, every partition of its
	// session. respond then keeps what the client is told.
	f := &fetch{req: fc.req, resp: resp, iso: partition.ReadUncommitted, listener: rc.Listener}
	switch {
	case follower:
		// A follower reads up to the log end (checked per partition
		// to be a follower's fetch before anything is read).
		f.iso = partition.ReadReplica
	case f.req.IsolationLevel == isolationReadCommitted:
		f.iso = partition.ReadCommitted
	}
	f.maxBytes = int(f.req.MaxBytes)
	if limit := int(n.settings().FetchMaxBytes); f.maxBytes <= 0 || f.maxBytes > limit {
		f.maxBytes = limit
	}
	if !follower {
		f.maxBytes = n.fetchQuotaBytes(rc, f.maxBytes)
	}
	f.buf = wire.GetBuffer()
	f.budget = &fetchBudget{pool: n.responseBytes}
	release := func() { wire.PutBuffer(f.buf); f.budget.keep(nil) }
	defer func() {
		if reply.Release == nil {
			release() // a panic: there is no answer to hand the buffer to
		}
	}()
	n.authorizeFetch(rc, f, follower)
	n.longPoll(ctx, rc, f)
	var throttle time.Duration
	if !follower {
		throttle = n.throttleFetch(rc, fc, resp)
	}
	if throttle == 0 {
		n.respond(fc, resp, follower)
	}
	if f.iso != partition.ReadReplica {
		n.countBytesOut(f.req, resp)
	}
	return wire.Reply{Response: resp, Release: release, SizeHint: fetchResponseSize(resp), Reserved: f.budget.handOver(len(*f.buf)), Throttle: throttle}, nil
}

// fetch is one fetch being served: what it reads and where it reads it
// to.
type fetch struct {
	req      *kmsg.FetchRequest
	resp     *kmsg.FetchResponse
	iso      partition.Isolation
	maxBytes int
	// buf holds the record data read; budget is the room it takes in the
	// node's response budget.
	buf    *[]byte
	budget *fetchBudget
	// listener is the listener the fetch came on, whose endpoints its
	// leader hints name.
	listener string
	// denied marks the topics of req (by index) the principal may not
	// fetch: READ on the topic for a consumer, CLUSTER_ACTION for a
	// follower (TOPIC_AUTHORIZATION_FAILED for each partition).
	denied []bool
}

// authorizeFetch fills f.denied, once per fetch however long it waits.
// A topic id no topic has stays UNKNOWN_TOPIC_ID; a topic name is
// authorized whether or not it exists, as Kafka does. Without an
// authorizer f.denied stays nil: nothing is denied, and a fetch of many
// topics allocates nothing for it.
func (n *Node) authorizeFetch(rc *wire.RequestContext, f *fetch, follower bool) {
	if !n.authorizer().Enabled() {
		return
	}
	img := n.ctrl.Image()
	f.denied = make([]bool, len(f.req.Topics))
	clusterAction := !follower || n.authorizeCluster(rc, kmsg.ACLOperationClusterAction)
	for ti := range f.req.Topics {
		name := fetchTopicName(f.req, img, ti)
		switch {
		case name == "":
		case follower:
			f.denied[ti] = !clusterAction
		default:
			f.denied[ti] = !n.authorize(rc, kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic, name)
		}
	}
}

// longPoll fills f's response, waiting up to the request's MaxWaitMillis
// (at most maxFetchWait) for MinBytes of data: any append to a fetched
// partition, or room freed in the response budget for data it had no room
// for, wakes it. The wait ends early when the client goes away.
func (n *Node) longPoll(ctx context.Context, rc *wire.RequestContext, f *fetch) {
	req, iso := f.req, f.iso
	wait := min(time.Duration(req.MaxWaitMillis)*time.Millisecond, maxFetchWait)
	var timer *time.Timer
	var wake chan struct{}
	// seen holds, once the fetch has parked, each fetched partition's
	// readable bound as it was before the last read: the fetch waits for
	// a bound to move past it. Waiting past the fetch offset instead would
	// never park a fetch whose partitions hold less than MinBytes beyond
	// it, and it would read again at once, forever.
	var seen []int64
	for {
		// Taken before reading: a release while we read wakes us.
		freed := n.responseBytes.Freed()
		if timer != nil {
			seen = n.fetchBounds(req, iso, seen[:0])
		}
		total, stop, starved := n.fillFetch(f)
		if stop || total >= int(req.MinBytes) || wait <= 0 {
			return
		}
		if timer == nil {
			// Park: the wait ends early when the client goes away.
			timer = time.NewTimer(wait)
			defer timer.Stop()
			wake = make(chan struct{}, 1)
			var stopWatch func()
			ctx, stopWatch = rc.UntilHangup(ctx)
			defer stopWatch()
			n.parkedFetches.Add(1)
			defer n.parkedFetches.Add(-1)
		}
		var again bool
		switch {
		case starved:
			// Data waits that the response budget has no room for:
			// read again when responses elsewhere are written.
			again = n.awaitRoom(ctx, f, freed, timer)
		case !n.waitFetch(req, iso, wake, seen):
			// Data arrived while we looked (on the first pass, data
			// below MinBytes may have been there all along: seen is
			// empty and the fetch offsets stand in for it). The timer
			// and the client still end the wait.
			again = n.recheck(ctx, f, timer)
		default:
			again = n.awaitData(ctx, f, wake, timer)
		}
		if !again {
			return
		}
	}
}

// awaitRoom waits for room freed in the response budget; false ends the
// fetch, filled one last time when its wait is over.
func (n *Node) awaitRoom(ctx context.Context, f *fetch, freed <-chan struct{}, timer *time.Timer) bool {
	select {
	case <-freed:
		return true
	case <-timer.C:
		n.fillFetch(f)
		return false
	case <-ctx.Done():
		return false
	}
}

// recheck reads again at once, unless the fetch's wait is over (filled
// one last time) or its client went away; false ends the fetch.
func (n *Node) recheck(ctx context.Context, f *fetch, timer *time.Timer) bool {
	select {
	case <-timer.C:
		n.fillFetch(f)
		return false
	case <-ctx.Done():
		return false
	default:
		return true
	}
}

// awaitData waits for an append to a fetched partition (wake, registered
// by waitFetch); false ends the fetch, filled one last time when its wait
// is over.
func (n *Node) awaitData(ctx context.Context, f *fetch, wake chan struct{}, timer *time.Timer) bool {
	select {
	case <-wake:
		n.unwaitFetch(f.req, wake)
		return true
	case <-timer.C:
		n.unwaitFetch(f.req, wake)
		n.fillFetch(f)
		return false
	case <-ctx.Done():
		n.unwaitFetch(f.req, wake)
		return false
	}
}

// fetchBudget is the part of the node's response budget
// (klog.queued.max.response.bytes) a fetch holds: its read buffer's
// capacity and the record data read into it once more, since the read
// buffer and the encoded response that copies the data both exist while
// the response is encoded. Room is taken before the data is read, so that
// fetches running together never read more than the budget has free.
type fetchBudget struct {
	pool *wire.Pool
	held int64
}

// take takes room for n more bytes of record data, or for as much as the
// budget has free, and returns the bytes that may be read.
func (b *fetchBudget) take(n int) int {
	if n <= 0 {
		return 0
	}
	got := b.pool.TakeUpTo(2 * int64(n))
	b.held += got
	return int(got / 2)
}

// takeFirst takes room for a first batch of n bytes, the one Kafka
// returns whatever the limits (KIP-74), when the budget has it free or
// holds nothing but this fetch's own bytes. It reports whether it took it.
func (b *fetchBudget) takeFirst(n int) bool {
	if !b.pool.TakeIfAlone(2*int64(n), b.held) {
		return false
	}
	b.held += 2 * int64(n)
	return true
}

// keep makes the fetch hold exactly what buf needs: its capacity and its
// record data once more, nothing while it is empty (an idle pooled
// buffer, which a long poll waiting for data must not hold the budget
// with). It gives back the room taken and not read into, or takes what
// was read past the room, when a batch changed between sizing and
// reading it.
func (b *fetchBudget) keep(buf []byte) {
	var want int64
	if len(buf) > 0 {
		want = int64(cap(buf) + len(buf))
	}
	switch {
	case b.held > want:
		b.pool.Release(b.held - want)
	case b.held < want:
		b.pool.Take(want - b.held)
	}
	b.held = want
}

// handOver returns the room for the encoded copy of records bytes of
// record data, which the response queue takes over with the response,
// and keeps the room for the read buffer, given back with the buffer.
func (b *fetchBudget) handOver(records int) int64 {
	out := min(int64(records), b.held)
	b.held -= out
	return out
}

// fetchResponseSize is about the size resp encodes to: its record data
// and a generous allowance for everything around it.
func fetchResponseSize(resp *kmsg.FetchResponse) int {
	size := 256
	for ti := range resp.Topics {
		t := &resp.Topics[ti]
		size += 64 + len(t.Topic)
		for pi := range t.Partitions {
			p := &t.Partitions[pi]
			size += 128 + len(p.RecordBatches) + 16*len(p.AbortedTransactions)
		}
	}
	return size
}

// fillFetch (re)builds f's response from the current state of every
// requested partition, reading record data into f.buf, emptied first,
// within the room f.budget takes. It returns the bytes of record data
// gathered, whether the fetch must answer now (an error to report), and
// whether it gathered nothing because the budget had no room for the
// first batch.
func (n *Node) fillFetch(f *fetch) (total int, stop, starved bool) {
	req, resp, buf := f.req, f.resp, f.buf
	*buf = (*buf)[:0]
	f.budget.keep(*buf)
	img := n.ctrl.Image()
	type span struct{ t, p, start, end int }
	var spans []span

	resp.Topics = resp.Topics[:0]
	for ti := range req.Topics {
		rt := &req.Topics[ti]
		st := kmsg.NewFetchResponseTopic()
		st.Topic, st.TopicID = rt.Topic, rt.TopicID
		name := fetchTopicName(req, img, ti)
		var topicErr *kerr.Error
		if _, ok := img.Topic(name); f.denied != nil && f.denied[ti] {
			topicErr = kerr.TopicAuthorizationFailed
		} else if !ok {
			topicErr = kerr.UnknownTopicOrPartition
			if req.Version >= 13 {
				topicErr = kerr.UnknownTopicID
			}
		}
		st.Partitions = make([]kmsg.FetchResponseTopicPartition, 0, len(rt.Partitions))
		for pi := range rt.Partitions {
			rp := &rt.Partitions[pi]
			sp := kmsg.NewFetchResponseTopicPartition()
			sp.Partition = rp.Partition
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = -1, -1, -1
			// An empty record set, never a null one: librdkafka rejects
			// a null set in a partition without an error.
			sp.RecordBatches = []byte{}
			// Partitions refused before any read carry an empty list
			// of aborted transactions, as Kafka's (KafkaApis answers
			// them with the generated default); those whose read
			// failed carry none (null), as ReplicaManager's.
			if topicErr != nil {
				sp.AbortedTransactions = noAbortedTransactions()
				sp.ErrorCode = topicErr.Code
				stop = true
				st.Partitions = append(st.Partitions, sp)
				continue
			}
			start := len(*buf)
			now, noRoom := n.fetchPartition(f, img, name, rp, &sp)
			stop, starved = stop || now, starved || noRoom
			if len(*buf) > start {
				spans = append(spans, span{len(resp.Topics), len(st.Partitions), start, len(*buf)})
			}
			f.budget.keep(*buf)
			if sp.ErrorCode != 0 {
				stop = true
			}
			st.Partitions = append(st.Partitions, sp)
		}
		resp.Topics = append(resp.Topics, st)
	}
	// Slice the record data only now: buf may have moved while growing.
	for _, s := range spans {
		resp.Topics[s.t].Partitions[s.p].RecordBatches = (*buf)[s.start:s.end]
	}
	n.addFetchLeaderHints(f.listener, req, resp)
	return len(*buf), stop, starved && len(*buf) == 0
}

// fetchPartition answers one partition of f into sp, reading its records
// into f.buf (readPartition) once the fetch may read it. It returns
// whether the fetch must answer now without an error (sent to another
// replica, or a follower's diverging epoch), and whether the budget had
// no room for the partition's first batch.
func (n *Node) fetchPartition(f *fetch, img *metadata.Image, name string, rp *kmsg.FetchRequestTopicPartition, sp *kmsg.FetchResponseTopicPartition) (stop, starved bool) {
	req := f.req
	p := n.partition(name, rp.Partition)
	if p == nil {
		if t, _ := img.Topic(name); t != nil && rp.Partition >= 0 && int(rp.Partition) < len(t.Partitions) {
			sp.ErrorCode = kerr.NotLeaderForPartition.Code
		} else {
			sp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			sp.AbortedTransactions = noAbortedTransactions()
		}
		return false, false
	}
	// Kafka's fetchOnlyLeader: a consumer with client metadata (v11+)
	// may read from a follower.
	anyReplica := fetchReplicaID(req) < 0 && req.Version >= 11
	check := p.CheckLeader
	if anyReplica {
		check = p.CheckReplica
	}
	if err := check(rp.CurrentLeaderEpoch); err != nil {
		sp.ErrorCode = errorCode(err)
		return false, false
	}
	if id := fetchReplicaID(req); id >= 0 && !n.isFollower(img, name, rp.Partition, id) {
		// Kafka's Partition.followerReplicaOrThrow: with an epoch that
		// matched, the replica set is what is not known yet.
		sp.ErrorCode = kerr.NotLeaderForPartition.Code
		if rp.CurrentLeaderEpoch >= 0 {
			sp.ErrorCode = kerr.UnknownLeaderEpoch.Code
		}
		return false, false
	}
	if anyReplica {
		if id := n.preferredReadReplica(img, name, p, req.Rack, rp.FetchOffset); id >= 0 {
			// Sent elsewhere: no records, the offsets, and an answer at
			// once.
			sp.PreferredReadReplica = id
			hw := p.HighWatermark()
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = hw, p.LastStableOffset(), p.LogStartOffset()
			return true, false
		}
	}
	if id := fetchReplicaID(req); id >= 0 {
		if diverged := n.followerFetched(req, p, rp, id, sp); diverged || sp.ErrorCode != 0 {
			// A diverging epoch is answered at once, as Kafka's
			// ReplicaManager.fetchMessages does.
			return true, false
		}
	}
	return false, n.readPartition(f, name, p, rp, sp)
}

// readPartition reads p's records from the fetch offset into f.buf,
// within the partition's and the fetch's max bytes and the room the
// response budget has, and answers sp with them and p's offsets. It
// reports whether the budget had no room for the first batch.
func (n *Node) readPartition(f *fetch, name string, p *partition.Partition, rp *kmsg.FetchRequestTopicPartition, sp *kmsg.FetchResponseTopicPartition) (starved bool) {
	buf, fb := f.buf, f.budget
	limit := min(int(rp.PartitionMaxBytes), f.maxBytes-len(*buf))
	// With no room left the partition reports its offsets only. Room
	// comes from the response budget first.
	room, first := 0, false
	var sizeErr error
	if len(*buf) == 0 {
		// The first batch is returned whatever the limits, when the
		// budget can hold it. A fetch refused takes and gives back
		// nothing, so that it does not wake the others waiting for the
		// budget.
		var size int
		size, sizeErr = p.FirstBatchSize(rp.FetchOffset, f.iso)
		switch {
		case sizeErr != nil || size == 0:
		case fb.takeFirst(size):
			room, first = size+fb.take(limit-size), true
		default:
			starved = true
		}
	} else {
		room = fb.take(limit)
	}
	res, err := p.Fetch(*buf, rp.FetchOffset, room, f.iso, first)
	if err == nil {
		err = sizeErr
	}
	if err != nil {
		// A failed read reports no offsets (-1), as Kafka's
		// ReplicaManager does, OFFSET_OUT_OF_RANGE included.
		sp.ErrorCode = errorCode(err)
		if !errors.Is(err, log.ErrOffsetOutOfRange) {
			n.logger.Warn("fetch read", "topic", name, "partition", rp.Partition, "err", err)
		}
		return starved
	}
	sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = res.HighWatermark, res.LastStableOffset, res.LogStartOffset
	*buf = res.Records
	if f.iso == partition.ReadCommitted {
		// read_committed reads always list the aborted transactions,
		// empty when none overlap (Kafka's LocalLog.read).
		sp.AbortedTransactions = abortedTransactions(res.AbortedTransactions)
	}
	return starved
}

// waitFetch registers wake with every fetched partition. It reports false
// when some partition's readable bound is already past what the fetch saw:
// past seen[k] for the k-th partition of the request, or, when seen is
// empty, past its fetch offset.
func (n *Node) waitFetch(req *kmsg.FetchRequest, iso partition.Isolation, wake chan struct{}, seen []int64) bool {
	img := n.ctrl.Image()
	k := 0
	for ti := range req.Topics {
		for pi := range req.Topics[ti].Partitions {
			rp := &req.Topics[ti].Partitions[pi]
			past := rp.FetchOffset
			if k < len(seen) {
				past = max(past, seen[k])
			}
			k++
			p := n.partition(fetchTopicName(req, img, ti), rp.Partition)
			if p == nil {
				continue
			}
			if !p.Wait(wake, past, iso) {
				n.unwaitFetch(req, wake)
				return false
			}
		}
	}
	return true
}

// fetchBounds appends to bounds each fetched partition's readable bound at
// iso, in the request's order; -1 for a partition the node does not have.
func (n *Node) fetchBounds(req *kmsg.FetchRequest, iso partition.Isolation, bounds []int64) []int64 {
	img := n.ctrl.Image()
	for ti := range req.Topics {
		for pi := range req.Topics[ti].Partitions {
			bound := int64(-1)
			if p := n.partition(fetchTopicName(req, img, ti), req.Topics[ti].Partitions[pi].Partition); p != nil {
				bound = p.Bound(iso)
			}
			bounds = append(bounds, bound)
		}
	}
	return bounds
}

func (n *Node) unwaitFetch(req *kmsg.FetchRequest, wake chan struct{}) {
	img := n.ctrl.Image()
	for ti := range req.Topics {
		for pi := range req.Topics[ti].Partitions {
			if p := n.partition(fetchTopicName(req, img, ti), req.Topics[ti].Partitions[pi].Partition); p != nil {
				p.Unwait(wake)
			}
		}
	}
	select {
	case <-wake:
	default:
	}
}

// noAbortedTransactions is an empty, non-null list of aborted
// transactions.
func noAbortedTransactions() []kmsg.FetchResponseTopicPartitionAbortedTransaction {
	return []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
}

// fetchTopicName is the topic name of request topic ti, resolved by id for
// versions 13+.
func fetchTopicName(req *kmsg.FetchRequest, img *metadata.Image, ti int) string {
	rt := &req.Topics[ti]
	if req.Version >= 13 {
		if t, ok := img.TopicByID(rt.TopicID); ok {
			return t.Name
		}
		return ""
	}
	return rt.Topic
}

// abortedTransactions puts the aborted transactions of a read_committed
// read in the fetch response's shape: never nil, an empty list when none.
func abortedTransactions(aborted []log.AbortedTxn) []kmsg.FetchResponseTopicPartitionAbortedTransaction {
	out := make([]kmsg.FetchResponseTopicPartitionAbortedTransaction, len(aborted))
	for i, a := range aborted {
		out[i] = kmsg.FetchResponseTopicPartitionAbortedTransaction{ProducerID: a.ProducerID, FirstOffset: a.FirstOffset}
	}
	return out
}

// followerFetched handles the follower part of a follower's fetch of
// partition p, before its records are read: a fetch whose last fetched
// epoch diverges from the leader's log gets DivergingEpoch (and its
// offsets) and reports true; any other records the fetch offset as the
// follower's log end offset. An error goes in sp.
func (n *Node) followerFetched(req *kmsg.FetchRequest, p *partition.Partition, rp *kmsg.FetchRequestTopicPartition, id int32, sp *kmsg.FetchResponseTopicPartition) bool {
	if req.Version >= 12 && rp.LastFetchedEpoch >= 0 {
		epoch, end := p.EndOffsetForEpoch(rp.LastFetchedEpoch)
		if epoch == -1 || end == -1 {
			// Kafka's Partition: "Could not determine the end offset
			// of the last fetched epoch".
			sp.ErrorCode = kerr.OffsetOutOfRange.Code
			return false
		}
		if end < rp.FetchOffset || epoch < rp.LastFetchedEpoch {
			sp.DivergingEpoch.Epoch, sp.DivergingEpoch.EndOffset = epoch, end
			hw := p.HighWatermark()
			sp.HighWatermark, sp.LastStableOffset, sp.LogStartOffset = hw, p.LastStableOffset(), p.LogStartOffset()
			return true
		}
	}
	upd, err := p.UpdateFollower(id, rp.FetchOffset, rp.LogStartOffset, time.Now())
	switch {
	case err != nil:
		sp.ErrorCode = errorCode(err)
	case upd.ProposedISR != nil:
		n.proposeISRExpand(p, upd.ProposedISR)
	}
	return false
}

// fetchReplicaID is the broker id a fetch comes from, or -1 for a
// consumer: ReplicaID until v14, ReplicaState from v15 (KIP-903).
func fetchReplicaID(req *kmsg.FetchRequest) int32 {
	if req.Version >= 15 {
		return req.ReplicaState.ID
	}
	return req.ReplicaID
}

// isFollower reports whether broker id is a replica of the partition other
// than this node.
func (n *Node) isFollower(img *metadata.Image, topic string, partition, id int32) bool {
	t, ok := img.Topic(topic)
	if !ok || id == n.self.ID || partition < 0 || int(partition) >= len(t.Partitions) {
		return false
	}
	return slices.Contains(t.Partitions[partition].Replicas, id)
}

// preferredReadReplica is the replica this leader sends a consumer in
// rack clientRack fetching partition p of topic at fetchOffset to, or -1
// for itself: -1 unless replica.selector.class is the rack-aware
// selector. A replica's rack is its broker's, when the broker is
// registered and not fenced (Kafka's
// MetadataCache.getPartitionReplicaEndpoints).
func (n *Node) preferredReadReplica(img *metadata.Image, topic string, p *partition.Partition, clientRack string, fetchOffset int64) int32 {
	if !n.settings().Replica.RackAwareSelector || clientRack == "" {
		return -1
	}
	leader, followers, ok := p.ReadReplicas(fetchOffset, time.Now())
	if !ok {
		return -1
	}
	rack := func(id int32) string {
		if b, ok := img.Brokers[id]; ok && !b.Fenced {
			return b.Rack
		}
		return ""
	}
	leader.Rack = rack(leader.ID)
	for i := range followers {
		followers[i].Rack = rack(followers[i].ID)
	}
	return partition.SelectRackAware(clientRack, leader, followers)
}
