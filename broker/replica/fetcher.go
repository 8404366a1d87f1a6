package replica

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/broker/wire"
	"github.com/klogdev/klog/store/log"
)

// fetchVersion is the Fetch version fetchers send: the last that names
// topics and carries the replica id as ReplicaID, with LastFetchedEpoch
// and DivergingEpoch (KIP-320).
const fetchVersion = 12

// offsetForLeaderEpochVersion is the OffsetForLeaderEpoch version
// fetchers send (v3+ carries the replica id).
const offsetForLeaderEpochVersion = 4

// listOffsetsVersion is the ListOffsets version fetchers send to ask a
// leader's log start (v4+ carries the current leader epoch).
const listOffsetsVersion = 7

// maxTruncationRounds bounds the OffsetForLeaderEpoch exchanges of one
// truncation (KIP-279 asks again while the two logs find no common epoch);
// past it the partition backs off and starts over.
const maxTruncationRounds = 16

// followed is one partition a fetcher fetches.
type followed struct {
	p *partition.Partition
	// epoch is the leader epoch the partition was followed at, sent as
	// the current leader epoch.
	epoch int32
	// truncate is set until the partition has truncated for this leader
	// epoch (or after a diverging epoch or an out-of-range offset).
	truncate bool
	// rounds counts the truncation rounds that did not settle.
	rounds int
	// outOfRange is set by an OFFSET_OUT_OF_RANGE answer and cleared by
	// any other: a second one in a row, truncation between them, means
	// the fetch offset is below the leader's log start, and restart is
	// set: the leader's log start is asked for, to restart the log there.
	outOfRange, restart bool
	// retryAt holds the partition back after an error, until then.
	retryAt time.Time
	// backoff is the next hold back: it doubles from firstBackoff up to
	// the configured backoff with each error in a row, and a good
	// answer resets it.
	backoff time.Duration
}

// firstBackoff is a partition's first hold back after an error. The
// errors a follower meets most are those of a leader that has not yet
// applied the metadata record the follower acts on (a new topic, a new
// epoch), and it applies it within milliseconds: holding back the whole
// replica.fetch.backoff.ms (1 s) at once kept a new topic's first acks=all
// produce waiting that long on a fresh cluster.
const firstBackoff = 10 * time.Millisecond

// fetcher fetches every partition followed from one leader, in one
// goroutine (run) that stop ends and waits for.
type fetcher struct {
	cfg    Config
	leader int32
	logger *slog.Logger
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	// added has room for one signal: a partition was added.
	added chan struct{}

	mu struct {
		sync.Mutex
		parts map[key]*followed
	}
}

func newFetcher(cfg Config, leader int32) *fetcher {
	f := &fetcher{cfg: cfg, leader: leader, logger: cfg.Logger.With("leader", leader),
		done: make(chan struct{}), added: make(chan struct{}, 1)}
	f.ctx, f.cancel = context.WithCancel(context.Background())
	f.mu.parts = map[key]*followed{}
	return f
}

// add follows p at epoch; it reports false when p was already followed at
// that epoch.
func (f *fetcher) add(k key, p *partition.Partition, epoch int32) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if cur, ok := f.mu.parts[k]; ok && cur.p == p && cur.epoch == epoch {
		return false
	}
	f.mu.parts[k] = &followed{p: p, epoch: epoch, truncate: true}
	select {
	case f.added <- struct{}{}:
	default:
	}
	return true
}

// remove stops fetching k and returns how many partitions are left.
func (f *fetcher) remove(k key) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.mu.parts, k)
	return len(f.mu.parts)
}

// stop ends run and waits for it.
func (f *fetcher) stop() {
	f.cancel()
	<-f.done
}

// run fetches until stop: truncation first for the partitions that need
// it, then one Fetch for all that are ready; after an error it closes the
// connection and backs off.
func (f *fetcher) run() {
	defer close(f.done)
	var c *wire.Conn
	defer func() {
		if c != nil {
			c.Close()
		}
	}()
	dial := f.cfg.Dial
	dial.ClientID, dial.Timeout, dial.MaxFrame, dial.Switch = wire.PeerClientID(f.cfg.NodeID), f.cfg.Timeout, f.cfg.MaxFrame, f.cfg.Switch
	for f.ctx.Err() == nil {
		if c == nil {
			addr, ok := f.cfg.Addr(f.leader)
			if !ok {
				f.logger.Debug("leader address unknown")
				f.sleep(f.cfg.Backoff)
				continue
			}
			var err error
			if c, err = wire.Dial(f.ctx, addr, dial); err != nil {
				f.logger.Debug("connect to leader", "addr", addr, "err", err)
				c = nil
				f.sleep(f.cfg.Backoff)
				continue
			}
		}
		err := f.round(c)
		if err == nil {
			continue
		}
		if f.ctx.Err() == nil {
			f.logger.Debug("fetch from leader", "err", err)
		}
		c.Close()
		c = nil
		f.sleep(f.cfg.Backoff)
	}
}

// sleep waits d, or less when the fetcher stops.
func (f *fetcher) sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-f.ctx.Done():
	case <-t.C:
	}
}

// ready returns the partitions to restart at the leader's log start, to
// truncate and to fetch now, and the earliest time a partition held back
// may go again.
func (f *fetcher) ready(now time.Time) (restart, truncate, fetch map[key]*followed, next time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	restart, truncate, fetch = map[key]*followed{}, map[key]*followed{}, map[key]*followed{}
	for k, fp := range f.mu.parts {
		switch {
		case now.Before(fp.retryAt):
			if next.IsZero() || fp.retryAt.Before(next) {
				next = fp.retryAt
			}
		case fp.restart:
			restart[k] = fp
		case fp.truncate:
			truncate[k] = fp
		default:
			fetch[k] = fp
		}
	}
	return restart, truncate, fetch, next
}

// round is one pass: truncate what needs it, then fetch the rest. An
// error is the connection's.
func (f *fetcher) round(c *wire.Conn) error {
	restart, truncate, fetch, next := f.ready(time.Now())
	if len(restart) > 0 {
		return f.restartAt(c, restart)
	}
	if len(truncate) > 0 {
		return f.truncate(c, truncate)
	}
	if len(fetch) == 0 {
		// Nothing to fetch: wait for a partition, or for one held back.
		var timeout <-chan time.Time
		if !next.IsZero() {
			t := time.NewTimer(time.Until(next))
			defer t.Stop()
			timeout = t.C
		}
		select {
		case <-f.ctx.Done():
		case <-f.added:
		case <-timeout:
		}
		return nil
	}
	return f.fetch(c, fetch)
}

// current runs apply with f.mu held if k is still followed as fp, so no
// write reaches a partition that moved to another fetcher or leader epoch.
func (f *fetcher) current(k key, fp *followed, apply func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.parts[k] == fp {
		apply()
	}
}

// holdBack makes fp wait a backoff before it is fetched again.
func (f *fetcher) holdBack(fp *followed) {
	fp.backoff = min(max(fp.backoff*2, firstBackoff), f.cfg.Backoff)
	fp.retryAt = time.Now().Add(fp.backoff)
}

// truncate asks the leader for the end of each partition's latest epoch
// and truncates where FollowerTruncation says; a partition without epochs
// truncates to its high watermark without asking. A partition whose
// answer needs another round (KIP-279) stays marked and asks again.
func (f *fetcher) truncate(c *wire.Conn, parts map[key]*followed) error {
	req := kmsg.NewPtrOffsetForLeaderEpochRequest()
	req.SetVersion(offsetForLeaderEpochVersion)
	req.ReplicaID = f.cfg.NodeID
	asked := map[key]*followed{}
	for k, fp := range parts {
		es := fp.p.LeaderEpochs()
		if len(es) == 0 {
			f.current(k, fp, func() { f.truncateTo(k, fp, es, -1, -1) })
			continue
		}
		asked[k] = fp
		rt := kmsg.NewOffsetForLeaderEpochRequestTopic()
		rt.Topic = k.topic
		rp := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.LeaderEpoch = k.index, fp.epoch, log.LatestEpoch(es)
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	if len(asked) == 0 {
		return nil
	}
	kresp, err := c.Do(f.ctx, req, f.cfg.Timeout)
	if err != nil {
		return err
	}
	resp := kresp.(*kmsg.OffsetForLeaderEpochResponse)
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			k := key{rt.Topic, rp.Partition}
			fp, ok := asked[k]
			if !ok {
				continue
			}
			delete(asked, k)
			f.current(k, fp, func() {
				if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
					f.logger.Debug("offset for leader epoch", "topic", k.topic, "partition", k.index, "err", err)
					f.holdBack(fp)
					return
				}
				f.truncateTo(k, fp, fp.p.LeaderEpochs(), rp.LeaderEpoch, rp.EndOffset)
			})
		}
	}
	for _, fp := range asked { // not answered: ask again later
		f.current(key{fp.p.Topic(), fp.p.Index()}, fp, func() { f.holdBack(fp) })
	}
	return nil
}

// truncateTo truncates fp's log for the leader's answer (leaderEpoch,
// leaderEnd) to its latest epoch of es; (-1, -1) when it was not asked.
// f.mu is held.
func (f *fetcher) truncateTo(k key, fp *followed, es []log.EpochEntry, leaderEpoch int32, leaderEnd int64) {
	end := fp.p.LogEndOffset()
	offset, done := log.FollowerTruncation(es, end, fp.p.HighWatermark(), leaderEpoch, leaderEnd)
	if offset < end {
		if err := fp.p.TruncateTo(offset); err != nil {
			f.logger.Warn("truncate follower", "topic", k.topic, "partition", k.index, "offset", offset, "err", err)
			f.holdBack(fp)
			return
		}
		f.logger.Debug("truncated follower", "topic", k.topic, "partition", k.index, "from", end, "to", offset,
			"leader_epoch", leaderEpoch, "leader_end_offset", leaderEnd)
	}
	if done {
		fp.truncate, fp.rounds = false, 0
		return
	}
	if fp.rounds++; fp.rounds >= maxTruncationRounds {
		f.logger.Warn("truncation does not settle; backing off", "topic", k.topic, "partition", k.index, "rounds", fp.rounds)
		fp.rounds = 0
		f.holdBack(fp)
	}
}

// fetch sends one Fetch for parts and applies the answer.
func (f *fetcher) fetch(c *wire.Conn, parts map[key]*followed) error {
	req := kmsg.NewPtrFetchRequest()
	req.SetVersion(fetchVersion)
	req.ReplicaID = f.cfg.NodeID
	req.MaxWaitMillis = int32(f.cfg.MaxWait / time.Millisecond)
	req.MinBytes = 1
	req.MaxBytes = f.cfg.ResponseMaxBytes
	req.SessionEpoch = -1 // a full fetch without a session
	keys := make([]key, 0, len(parts))
	for k := range parts {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.topic != b.topic {
			return cmp.Compare(a.topic, b.topic)
		}
		return cmp.Compare(a.index, b.index)
	})
	for _, k := range keys {
		fp := parts[k]
		if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != k.topic {
			rt := kmsg.NewFetchRequestTopic()
			rt.Topic = k.topic
			req.Topics = append(req.Topics, rt)
		}
		rp := kmsg.NewFetchRequestTopicPartition()
		rp.Partition = k.index
		rp.CurrentLeaderEpoch = fp.epoch
		rp.FetchOffset = fp.p.LogEndOffset()
		rp.LastFetchedEpoch = log.LatestEpoch(fp.p.LeaderEpochs())
		rp.LogStartOffset = fp.p.LogStartOffset()
		rp.PartitionMaxBytes = f.cfg.FetchMaxBytes
		rt := &req.Topics[len(req.Topics)-1]
		rt.Partitions = append(rt.Partitions, rp)
	}
	// The answer's record batches point into the connection's buffer,
	// reused by the next fetch: each is appended (copied to the log)
	// below, before this returns.
	kresp, err := c.DoReused(f.ctx, req, f.cfg.MaxWait+f.cfg.Timeout)
	if err != nil {
		return err
	}
	resp := kresp.(*kmsg.FetchResponse)
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
		return fmt.Errorf("fetch: %w", err)
	}
	for ti := range resp.Topics {
		rt := &resp.Topics[ti]
		for pi := range rt.Partitions {
			rp := &rt.Partitions[pi]
			k := key{rt.Topic, rp.Partition}
			fp, ok := parts[k]
			if !ok {
				continue
			}
			f.current(k, fp, func() { f.apply(k, fp, rp) })
		}
	}
	return nil
}

// apply takes one partition's fetch answer: records appended, the
// leader's high watermark, or truncation after a diverging epoch. f.mu is
// held.
func (f *fetcher) apply(k key, fp *followed, rp *kmsg.FetchResponseTopicPartition) {
	switch err := kerr.ErrorForCode(rp.ErrorCode); {
	case errors.Is(err, kerr.OffsetOutOfRange) && fp.outOfRange:
		// Truncation did not help: the follower's log end is below
		// the leader's log start (retention, DeleteRecords). Ask where
		// the leader's log starts, to restart there.
		f.logger.Debug("fetch offset out of range after truncation", "topic", k.topic, "partition", k.index, "offset", fp.p.LogEndOffset())
		fp.restart = true
		return
	case errors.Is(err, kerr.OffsetOutOfRange):
		// The follower's log end is past the leader's: find where the
		// two agree again.
		f.logger.Debug("fetch offset out of range", "topic", k.topic, "partition", k.index, "offset", fp.p.LogEndOffset())
		fp.truncate, fp.outOfRange = true, true
		return
	case err != nil:
		// Not (or no longer) the leader, or the leader has not seen
		// this epoch yet: wait for the metadata to catch up.
		f.logger.Debug("fetch", "topic", k.topic, "partition", k.index, "err", err)
		f.holdBack(fp)
		return
	}
	fp.outOfRange, fp.backoff = false, 0
	if rp.DivergingEpoch.EndOffset >= 0 {
		// The leader's answer for the last fetched epoch, as
		// OffsetForLeaderEpoch would give it; a round that does not
		// settle it leaves truncate set, for OffsetForLeaderEpoch
		// (KIP-279).
		fp.truncate = true
		f.truncateTo(k, fp, fp.p.LeaderEpochs(), rp.DivergingEpoch.Epoch, rp.DivergingEpoch.EndOffset)
		return
	}
	if len(rp.RecordBatches) > 0 {
		if err := fp.p.AppendReplicated(rp.RecordBatches); err != nil {
			f.logger.Warn("append replicated", "topic", k.topic, "partition", k.index, "offset", fp.p.LogEndOffset(), "err", err)
			fp.truncate = true
			f.holdBack(fp)
			return
		}
	}
	if _, err := fp.p.UpdateHighWatermarkFromLeader(rp.HighWatermark); err != nil {
		f.holdBack(fp)
		return
	}
	if err := fp.p.AdvanceLogStart(rp.LogStartOffset); err != nil {
		f.logger.Warn("advance log start", "topic", k.topic, "partition", k.index, "leader_log_start", rp.LogStartOffset, "err", err)
		f.holdBack(fp)
	}
}

// restartAt asks the leader for each partition's log start (ListOffsets
// of the earliest offset, as Kafka's fetcher does) and restarts the
// follower's log there when it is past the follower's log end; otherwise
// the partition truncates again.
func (f *fetcher) restartAt(c *wire.Conn, parts map[key]*followed) error {
	req := kmsg.NewPtrListOffsetsRequest()
	req.SetVersion(listOffsetsVersion)
	req.ReplicaID = f.cfg.NodeID
	for k, fp := range parts {
		rt := kmsg.NewListOffsetsRequestTopic()
		rt.Topic = k.topic
		rp := kmsg.NewListOffsetsRequestTopicPartition()
		rp.Partition, rp.CurrentLeaderEpoch, rp.Timestamp = k.index, fp.epoch, -2 // earliest
		rt.Partitions = append(rt.Partitions, rp)
		req.Topics = append(req.Topics, rt)
	}
	kresp, err := c.Do(f.ctx, req, f.cfg.Timeout)
	if err != nil {
		return err
	}
	resp := kresp.(*kmsg.ListOffsetsResponse)
	for _, rt := range resp.Topics {
		for _, rp := range rt.Partitions {
			k := key{rt.Topic, rp.Partition}
			fp, ok := parts[k]
			if !ok {
				continue
			}
			delete(parts, k)
			f.current(k, fp, func() { f.restartTo(k, fp, rp.ErrorCode, rp.Offset) })
		}
	}
	for k, fp := range parts { // not answered: ask again later
		f.current(k, fp, func() { f.holdBack(fp) })
	}
	return nil
}

// restartTo takes the leader's answer for fp's log start. f.mu is held.
func (f *fetcher) restartTo(k key, fp *followed, code int16, start int64) {
	if err := kerr.ErrorForCode(code); err != nil {
		f.logger.Debug("leader log start", "topic", k.topic, "partition", k.index, "err", err)
		f.holdBack(fp)
		return
	}
	fp.restart, fp.outOfRange = false, false
	end := fp.p.LogEndOffset()
	if start <= end {
		// Not below the leader's log start after all: the leader's log
		// changed between the answers; find the common point again.
		fp.truncate = true
		return
	}
	if err := fp.p.RestartAt(start); err != nil {
		f.logger.Warn("restart follower log", "topic", k.topic, "partition", k.index, "offset", start, "err", err)
		fp.restart = true
		f.holdBack(fp)
		return
	}
	fp.truncate = false
	f.logger.Info("follower log restarted at the leader's log start", "topic", k.topic, "partition", k.index,
		"log_end_offset", end, "leader_log_start", start)
}
