package group

import (
	"cmp"
	"context"
	"slices"
)

// CommittedOffset is one group's committed offset of one partition.
type CommittedOffset struct {
	Group     string
	Topic     string
	Partition int32
	Offset    int64
}

// CommittedOffsets returns the committed offsets of the groups this
// coordinator serves, by group, topic and partition: at most limit of
// them, truncated set when the limit (or ctx ending) left groups unread or
// offsets out. Each group's are copied on its own actor; ctx bounds the
// whole.
func (c *Coordinator) CommittedOffsets(ctx context.Context, limit int) (out []CommittedOffset, truncated bool) {
	for _, a := range c.rt.Actors() {
		if len(out) >= limit || ctx.Err() != nil {
			return out, true
		}
		var offs []CommittedOffset
		c.run(ctx, a.Key(), false, func(g *group) {
			if g == nil || g.state == stateDead {
				return
			}
			for topic, parts := range g.offsets {
				for p, o := range parts {
					offs = append(offs, CommittedOffset{Group: g.id, Topic: topic, Partition: p, Offset: o.Offset})
				}
			}
		})
		slices.SortFunc(offs, func(x, y CommittedOffset) int {
			return cmp.Or(cmp.Compare(x.Topic, y.Topic), cmp.Compare(x.Partition, y.Partition))
		})
		if room := limit - len(out); len(offs) > room {
			offs, truncated = offs[:room], true
		}
		out = append(out, offs...)
	}
	return out, truncated
}
