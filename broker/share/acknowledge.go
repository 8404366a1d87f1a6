package share

import (
	"fmt"
	"time"
)

// ValidateAcks checks acknowledgement batches in themselves, as Kafka 4.4
// does before it looks at any record: each batch's first offset at most
// its last, batches in order without overlap, one type for the batch or
// one per offset, each a known type (Renew only when renew allows it). It
// returns an error wrapping ErrInvalidAcks that says what is wrong.
func ValidateAcks(batches []AckBatch, renew bool) error {
	prevLast := int64(-1)
	for i, b := range batches {
		switch {
		case b.First < 0 || b.Last < b.First:
			return fmt.Errorf("%w: batch %d: last offset %d before first offset %d", ErrInvalidAcks, i, b.Last, b.First)
		case i > 0 && b.First <= prevLast:
			return fmt.Errorf("%w: batch %d: first offset %d not after the previous batch's last offset %d", ErrInvalidAcks, i, b.First, prevLast)
		case len(b.Types) != 1 && int64(len(b.Types)) != b.Last-b.First+1:
			return fmt.Errorf("%w: batch %d: %d acknowledge types for %d offsets", ErrInvalidAcks, i, len(b.Types), b.Last-b.First+1)
		}
		for _, t := range b.Types {
			if t < AckGap || t > AckRenew || t == AckRenew && !renew {
				return fmt.Errorf("%w: batch %d: unknown acknowledge type %d", ErrInvalidAcks, i, t)
			}
		}
		prevLast = b.Last
	}
	return nil
}

// Acknowledge applies member's acknowledgements, all of them or none:
// every offset named must be a record the member holds (Acquired by it,
// its lock not lapsed: Expire runs first), or the whole call fails with
// ErrInvalidRecordState and changes nothing. Batches must have passed
// ValidateAcks.
func (p *Partition) Acknowledge(member string, now time.Time, batches []AckBatch) error {
	for _, b := range batches {
		if err := p.held(member, b.First, b.Last); err != nil {
			return err
		}
	}
	for _, b := range batches {
		for off := b.First; off <= b.Last; off++ {
			r := &p.records[off-p.start]
			switch b.typeAt(off) {
			case AckAccept:
				r.state, r.member, r.deadline = Acknowledged, "", time.Time{}
			case AckRelease:
				p.release(r)
			case AckReject, AckGap:
				r.state, r.member, r.deadline = Archived, "", time.Time{}
			case AckRenew:
				r.deadline = now.Add(p.cfg.LockDuration)
			}
		}
	}
	p.advanceStart()
	return nil
}

// held checks that member holds every record of first..last.
func (p *Partition) held(member string, first, last int64) error {
	if first < p.start || last >= p.End() {
		return fmt.Errorf("%w: offsets %d-%d are outside the in-flight records %d-%d", ErrInvalidRecordState, first, last, p.start, p.End()-1)
	}
	for off := first; off <= last; off++ {
		r := p.records[off-p.start]
		switch {
		case r.state != Acquired:
			return fmt.Errorf("%w: offset %d is %s", ErrInvalidRecordState, off, r.state)
		case r.member != member:
			return fmt.Errorf("%w: offset %d is held by another member", ErrInvalidRecordState, off)
		}
	}
	return nil
}
