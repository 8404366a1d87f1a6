package inspect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// GroupDescription is a group's membership with its committed offsets and
// lag per partition. Error is present only when the group or its offsets
// could not be read.
type GroupDescription struct {
	Group        string           `json:"group"`
	Type         string           `json:"type"`
	State        string           `json:"state"`
	ProtocolType string           `json:"protocol_type"`
	Protocol     string           `json:"protocol"`
	Coordinator  int32            `json:"coordinator"`
	Members      []GroupMember    `json:"members"`
	Partitions   []GroupPartition `json:"partitions"`
	TotalLag     int64            `json:"total_lag"`
	Error        string           `json:"error,omitempty"`
}

// GroupPartition is the position of a group in one partition. Committed is
// null when the group has no committed offset there; Lag is null and the
// offsets -1 when the partition's offsets could not be listed: Error says
// why, and Errors says it of each of those fields, keyed by JSON name.
type GroupPartition struct {
	Topic            string `json:"topic"`
	Partition        int32  `json:"partition"`
	Committed        *int64 `json:"committed"`
	LogStartOffset   int64  `json:"log_start_offset"`
	HighWatermark    int64  `json:"high_watermark"`
	LastStableOffset int64  `json:"last_stable_offset"`
	Lag              *int64 `json:"lag"`
	MemberID         string `json:"member_id,omitempty"`
	Error            string `json:"error,omitempty"`
	// Errors is why each field that could not be read is -1 or null.
	Errors map[string]string `json:"errors,omitempty"`
}

// exactLagLimit is the largest offset distance GroupOffsets reads through
// to count the records a read_committed consumer has left; beyond it, lag
// is the offset distance (markers included), which is close at that size.
const exactLagLimit = 10000

// countTimeout bounds the read that counts one partition's lag.
const countTimeout = 5 * time.Second

// GroupOffsets adds committed offsets and lag to a group's membership, for
// the partitions the group committed offsets for and those assigned to a
// member.
//
// Lag is what a read_committed consumer of the group has left to read
// between its committed offset (the log start when it has none, or when the
// log no longer reaches back to it) and the last stable offset, counted in
// records: transaction markers and aborted records are nothing to consume,
// so they are not counted. Counting reads the partition through a client
// from newClient; beyond 10,000 offsets, or when the read fails, lag is the
// offset distance instead.
func GroupOffsets(ctx context.Context, adm *kadm.Client, newClient ClientFunc, info GroupInfo) GroupDescription {
	d := GroupDescription{
		Group:        info.Group,
		Type:         info.Type,
		State:        info.State,
		ProtocolType: info.ProtocolType,
		Protocol:     info.Protocol,
		Coordinator:  info.Coordinator,
		Members:      info.Members,
		Partitions:   []GroupPartition{},
	}
	if d.Members == nil {
		d.Members = []GroupMember{}
	}
	if info.Err != nil {
		d.Error = info.Err.Error()
		return d
	}
	var committed kadm.OffsetResponses
	err := reach(ctx, adm, func() (err error) {
		committed, err = adm.FetchOffsets(ctx, info.Group)
		committed.EachError(func(o kadm.OffsetResponse) {
			if errors.Is(o.Err, kerr.UnknownTopicID) {
				err = o.Err // the client could not name a topic: try again
			}
		})
		return err
	})
	switch {
	case errors.Is(err, kerr.UnknownTopicID):
		d.Error = fmt.Sprintf("fetch committed offsets: the topics of some could not be named: %v", err)
	case err != nil && !errors.Is(err, kerr.GroupIDNotFound):
		d.Error = fmt.Sprintf("fetch committed offsets: %v", err)
		return d
	}
	parts, owner := shownPartitions(committed, info.Members)
	if info.NotFound && len(parts) == 0 {
		d.Error = ErrGroupNotFound.Error()
		return d
	}
	if len(parts) == 0 {
		return d
	}
	lists, err := ListOffsets(ctx, adm, parts.Topics(), nil)
	if err != nil {
		d.Error = err.Error()
		return d
	}
	for _, tp := range parts.Sorted() {
		for _, p := range slices.Sorted(slices.Values(tp.Partitions)) {
			gp := groupPartition(ctx, newClient, committed, lists, tp.Topic, p)
			gp.MemberID = owner[tp.Topic][p]
			if gp.Lag != nil {
				d.TotalLag += *gp.Lag
			}
			d.Partitions = append(d.Partitions, gp)
		}
	}
	return d
}

// shownPartitions are the partitions GroupOffsets shows: those with a
// committed offset, and those assigned to a member (which may not have
// committed yet); owner names the member each assigned one is assigned to.
func shownPartitions(committed kadm.OffsetResponses, members []GroupMember) (parts kadm.TopicsSet, owner map[string]map[int32]string) {
	owner = make(map[string]map[int32]string)
	parts = make(kadm.TopicsSet)
	committed.Each(func(o kadm.OffsetResponse) {
		if o.Err == nil && o.At >= 0 {
			parts.Add(o.Topic, o.Partition)
		}
	})
	for _, m := range members {
		for _, a := range m.Assigned {
			parts.Add(a.Topic, a.Partitions...)
			if owner[a.Topic] == nil {
				owner[a.Topic] = make(map[int32]string)
			}
			for _, p := range a.Partitions {
				owner[a.Topic][p] = m.MemberID
			}
		}
	}
	return parts, owner
}

// groupPartition describes one partition of a group: its committed offset
// and its offsets from lists, and its lag, counted in records when it is
// at most exactLagLimit offsets (see GroupOffsets).
func groupPartition(ctx context.Context, newClient ClientFunc, committed kadm.OffsetResponses, lists Offsets, topic string, p int32) GroupPartition {
	gp := GroupPartition{Topic: topic, Partition: p, LogStartOffset: -1, HighWatermark: -1, LastStableOffset: -1}
	if c, ok := committed.Lookup(topic, p); ok && c.Err == nil && c.At >= 0 {
		at := c.At
		gp.Committed = &at
	}
	o, err := lists.Lookup(topic, p)
	if err != nil {
		gp.Error = err.Error()
		gp.Errors = map[string]string{}
		for _, k := range []string{"log_start_offset", "high_watermark", "last_stable_offset", "lag"} {
			gp.Errors[k] = gp.Error
		}
		return gp
	}
	gp.LogStartOffset, gp.HighWatermark, gp.LastStableOffset = o.LogStart, o.HighWatermark, o.LastStableOffset
	lag := partitionLag(gp.Committed, o.LogStart, o.LastStableOffset)
	if lag > 0 && lag <= exactLagLimit {
		// Count records, not offsets: transaction markers and aborted
		// records are nothing to consume.
		if n, err := countRecords(ctx, newClient, topic, p, o.LastStableOffset-lag, o.LastStableOffset); err == nil {
			lag = n
		}
	}
	gp.Lag = &lag
	return gp
}

// partitionLag is the offset distance a read_committed consumer of the
// group still has to cover in a partition: from its committed offset (the
// log start when it has none, or when the log no longer reaches back to it)
// up to the last stable offset. Measuring to the LSO rather than the high
// watermark keeps the markers that close transactions at the end of the log
// out of the lag: a consumer that has read everything has lag 0.
func partitionLag(committed *int64, logStart, lso int64) int64 {
	from := logStart
	if committed != nil && *committed > logStart {
		from = *committed
	}
	return max(0, lso-from)
}

// countRecords counts the records a read_committed consumer reads between
// offsets from and to (exclusive): data of committed transactions and
// non-transactional data, not markers and not aborted records. It reads
// the range with control records kept, so it knows when it reached to even
// when the range ends in a marker.
func countRecords(ctx context.Context, newClient ClientFunc, topic string, partition int32, from, to int64) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, countTimeout)
	defer cancel()
	cl, err := newClient(
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: {partition: kgo.NewOffset().At(from)}}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.KeepControlRecords(),
	)
	if err != nil {
		return 0, err
	}
	defer cl.Close()
	var n int64
	for {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return 0, err
		}
		if err := fs.Err0(); err != nil {
			return 0, err
		}
		done := false
		fs.EachRecord(func(r *kgo.Record) {
			if r.Offset >= to {
				done = true
				return
			}
			if !r.Attrs.IsControl() {
				n++
			}
			if r.Offset == to-1 {
				done = true
			}
		})
		if done {
			return n, nil
		}
	}
}
