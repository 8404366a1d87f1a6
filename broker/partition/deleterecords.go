package partition

import (
	"fmt"

	"github.com/klogdev/klog/store/log"
)

// DeleteRecordsHighWatermark is the offset DeleteRecords takes as the high
// watermark (Kafka's DeleteRecordsRequest.HIGH_WATERMARK).
const DeleteRecordsHighWatermark = -1

// DeleteRecords raises the leader's log start offset to offset (-1: the
// high watermark), deleting the segments wholly below it, as Kafka's
// Partition.deleteRecordsOnLeader: ErrNotLeader unless this replica leads,
// ErrDeletePolicy when cleanup.policy lacks delete, log.ErrOffsetOutOfRange
// for an offset below 0 or above the high watermark. It returns the offset
// asked for (the high watermark for -1) and the low watermark at once,
// LowWatermark(alive). A lower offset than the log start changes nothing.
func (p *Partition) DeleteRecords(offset int64, alive func(broker int32) bool) (requested, lowWatermark int64, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.mu.closed:
		return -1, -1, ErrClosed
	case !p.leads(p.state.Load()):
		return -1, -1, ErrNotLeader
	case !p.log.Config().CleanupPolicy.Delete():
		return -1, -1, fmt.Errorf("%w: records of partition %s-%d can not be deleted", ErrDeletePolicy, p.topic, p.index)
	}
	hw := p.hw.Load()
	if offset == DeleteRecordsHighWatermark {
		offset = hw
	}
	switch {
	case offset < 0:
		return -1, -1, fmt.Errorf("%w: the offset %d for partition %s-%d is not valid", log.ErrOffsetOutOfRange, offset, p.topic, p.index)
	case offset > hw:
		return -1, -1, fmt.Errorf("%w: cannot increment the log start offset to %d of partition %s-%d since it is larger than the high watermark %d",
			log.ErrOffsetOutOfRange, offset, p.topic, p.index, hw)
	}
	if err := p.log.SetStartOffset(offset); err != nil {
		return -1, -1, err
	}
	return offset, p.lowWatermarkLocked(alive), nil
}

// LowWatermark is the lowest log start offset among this leader and its
// followers on live brokers (alive), as Kafka's
// Partition.lowWatermarkIfLeader: a follower's is the one its last fetch
// reported, -1 before its first fetch under this leader. It returns
// ErrNotLeader unless this replica leads.
func (p *Partition) LowWatermark(alive func(broker int32) bool) (int64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.leads(p.state.Load()) {
		return -1, ErrNotLeader
	}
	return p.lowWatermarkLocked(alive), nil
}

func (p *Partition) lowWatermarkLocked(alive func(broker int32) bool) int64 {
	lw := p.log.StartOffset()
	for _, r := range p.mu.followers {
		if r.LogStartOffset < lw && alive(r.ID) {
			lw = r.LogStartOffset
		}
	}
	return lw
}

// WaitLowWatermark registers ch, as Wait does, to be signalled when the
// low watermark may have moved (a follower's fetch reported a higher log
// start), when the replica stops leading or closes, and at appends. It
// reports false, without registering, when the low watermark has reached
// required already or the replica is closed or no longer leads: the
// caller checks LowWatermark again.
func (p *Partition) WaitLowWatermark(ch chan<- struct{}, required int64, alive func(broker int32) bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.closed || !p.leads(p.state.Load()) || p.lowWatermarkLocked(alive) >= required {
		return false
	}
	p.mu.waiters = append(p.mu.waiters, ch)
	return true
}
