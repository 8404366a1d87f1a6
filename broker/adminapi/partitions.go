package adminapi

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/broker/partition"
	"github.com/klogdev/klog/nodeapi"
	"github.com/klogdev/klog/store/log"
)

func (h *handler) partitions(w http.ResponseWriter, r *http.Request) {
	ps := h.node.PartitionStates(r.URL.Query().Get("topic"))
	out := nodeapi.Partitions{NodeID: h.node.ID(), Partitions: make([]nodeapi.Partition, 0, len(ps))}
	for _, p := range ps {
		out.Partitions = append(out.Partitions, partitionOf(p))
	}
	writeJSON(w, out)
}

func (h *handler) partition(w http.ResponseWriter, r *http.Request) {
	if _, _, p, ok := local(w, r, h.node.PartitionState); ok {
		writeJSON(w, partitionOf(p))
	}
}

func (h *handler) segments(w http.ResponseWriter, r *http.Request) {
	topic, index, segs, ok := local(w, r, h.node.Segments)
	if !ok {
		return
	}
	out := nodeapi.Segments{NodeID: h.node.ID(), Topic: topic, Partition: index, Total: len(segs)}
	segs = segs[:min(len(segs), nodeapi.MaxSegments)]
	out.Segments = make([]nodeapi.Segment, 0, len(segs))
	for _, s := range segs {
		out.Segments = append(out.Segments, nodeapi.Segment{
			BaseOffset: s.BaseOffset, LastOffset: s.NextOffset - 1, NextOffset: s.NextOffset, Size: s.Size,
			FirstTimestamp: s.FirstTimestamp, MaxTimestamp: s.MaxTimestamp, Active: s.Active,
			IndexEntries: s.IndexEntries, TimeIndexEntries: s.TimeIndexEntries, AbortedTxns: s.AbortedTxns,
			Created: s.Created.UTC(),
		})
		if s.NextOffset == s.BaseOffset {
			out.Segments[len(out.Segments)-1].LastOffset = -1
		}
	}
	writeJSON(w, out)
}

func (h *handler) index(w http.ResponseWriter, r *http.Request) {
	topic, index, ok := topicPartition(w, r)
	if !ok {
		return
	}
	base, err := strconv.ParseInt(r.PathValue("base"), 10, 64)
	if err != nil || base < 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("segment %q: want a base offset", r.PathValue("base")))
		return
	}
	q := r.URL.Query()
	kind := q.Get("kind")
	if kind == "" {
		kind = nodeapi.IndexOffset
	}
	if kind != nodeapi.IndexOffset && kind != nodeapi.IndexTime {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("kind %q: want offset or time", kind))
		return
	}
	from, ok := intParam(w, q.Get("from"), "from", 0, 0, 1<<31-1)
	if !ok {
		return
	}
	limit, ok := intParam(w, q.Get("limit"), "limit", nodeapi.DefaultIndexLimit, 1, nodeapi.MaxIndexLimit)
	if !ok {
		return
	}
	out := nodeapi.Index{NodeID: h.node.ID(), Topic: topic, Partition: index, BaseOffset: base, Kind: kind, From: from}
	var n int
	if kind == nodeapi.IndexOffset {
		var pg log.IndexPage[log.OffsetIndexEntry]
		pg, err = h.node.OffsetIndex(topic, index, base, from, limit)
		out.Total, n = pg.Total, len(pg.Entries)
		out.Offsets = make([]nodeapi.OffsetEntry, 0, n)
		for _, e := range pg.Entries {
			out.Offsets = append(out.Offsets, nodeapi.OffsetEntry{Offset: base + int64(e.RelativeOffset), Position: int64(e.Position)})
		}
	} else {
		var pg log.IndexPage[log.TimeIndexEntry]
		pg, err = h.node.TimeIndex(topic, index, base, from, limit)
		out.Total, n = pg.Total, len(pg.Entries)
		out.Times = make([]nodeapi.TimeEntry, 0, n)
		for _, e := range pg.Entries {
			out.Times = append(out.Times, nodeapi.TimeEntry{Timestamp: e.Timestamp, Offset: base + int64(e.RelativeOffset)})
		}
	}
	switch {
	case errors.Is(err, broker.ErrUnknownTopic):
		notLocal(w, topic, index)
		return
	case err != nil:
		writeError(w, http.StatusNotFound, err.Error())
		return
	}
	if next := from + n; next < out.Total {
		out.Next = &next
	}
	writeJSON(w, out)
}

func partitionOf(s partition.Snapshot) nodeapi.Partition {
	p := nodeapi.Partition{
		Topic: s.Topic, Partition: s.Index, Role: "follower",
		Leader: s.Leader.Leader, LeaderEpoch: s.Leader.Epoch,
		Replicas: nonNil(s.Leader.Replicas), ISR: nonNil(s.Leader.ISR),
		LogStartOffset: s.LogStartOffset, LastStableOffset: s.LastStableOffset,
		HighWatermark: s.HighWatermark, LogEndOffset: s.LogEndOffset,
	}
	if !s.IsLeader {
		return p
	}
	p.Role = "leader"
	p.Followers = make([]nodeapi.Follower, 0, len(s.Followers))
	for _, f := range s.Followers {
		out := nodeapi.Follower{
			ID: f.ID, LogEndOffset: f.LogEndOffset, Lag: -1,
			CaughtUp: f.CaughtUp(s.LogEndOffset, s.TakenMs, s.ReplicaLagTimeMaxMs),
			InISR:    slices.Contains(s.Leader.ISR, f.ID),
		}
		if f.LogEndOffset >= 0 {
			out.Lag = s.LogEndOffset - f.LogEndOffset
			out.LastFetch = unixMilliOrNil(f.LastFetchMs)
		}
		out.LastCaughtUp = unixMilliOrNil(f.LastCaughtUpMs)
		p.Followers = append(p.Followers, out)
	}
	return p
}

// topicPartition reads the path's {topic} and {partition}, answering 400
// for a partition that is not a number.
func topicPartition(w http.ResponseWriter, r *http.Request) (string, int32, bool) {
	v := r.PathValue("partition")
	p, err := strconv.ParseInt(v, 10, 32)
	if err != nil || p < 0 {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("partition %q: want a partition number", v))
		return "", 0, false
	}
	return r.PathValue("topic"), int32(p), true
}

// local reads r's {topic} and {partition} and what get has of that local
// replica, answering 400 for a bad partition and 404 when get has none.
func local[T any](w http.ResponseWriter, r *http.Request, get func(string, int32) (T, bool)) (string, int32, T, bool) {
	var v T
	topic, index, ok := topicPartition(w, r)
	if !ok {
		return "", 0, v, false
	}
	if v, ok = get(topic, index); !ok {
		notLocal(w, topic, index)
	}
	return topic, index, v, ok
}

func notLocal(w http.ResponseWriter, topic string, partition int32) {
	writeError(w, http.StatusNotFound, fmt.Sprintf("no local replica of %s/%d", topic, partition))
}

// intParam parses the query parameter name (v) as an integer in [lo, hi],
// def when absent, answering 400 for anything else.
func intParam(w http.ResponseWriter, v, name string, def, lo, hi int) (int, bool) {
	if v == "" {
		return def, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%s %q: want a number from %d to %d", name, v, lo, hi))
		return 0, false
	}
	return n, true
}

func nonNil(s []int32) []int32 {
	if s == nil {
		return []int32{}
	}
	return slices.Clone(s)
}

func unixMilliOrNil(ms int64) *time.Time {
	if ms <= 0 {
		return nil
	}
	return utcOrNil(time.UnixMilli(ms))
}

// utcOrNil is t in UTC, nil when zero.
func utcOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}
