package controller

import (
	"context"
	"fmt"
	"math"

	"github.com/klogdev/klog/broker/errmsg"
	"github.com/klogdev/klog/broker/metadata"
)

// QuotaAlteration is one entity's part of AlterClientQuotas: its quota
// keys set (Value) or removed (Value nil), in the request's order.
type QuotaAlteration struct {
	Entity metadata.QuotaEntity
	Ops    []QuotaOp
}

// QuotaOp sets Key to Value, or removes it when Value is nil.
type QuotaOp struct {
	Key   string
	Value *float64
}

// AlterClientQuotas checks each alteration as Kafka's
// ClientQuotaControlManager does and commits the changes of those that
// pass, together, unless validateOnly. It returns one error per
// alteration (nil: applied), ErrInvalidRequest with Kafka's message, and
// an error that is the whole request's when nothing could be committed.
// Only changes are written: a value set to what it is, or the removal of
// a key that is not set, writes nothing.
func (c *Controller) AlterClientQuotas(ctx context.Context, alts []QuotaAlteration, validateOnly bool) ([]error, error) {
	if err := c.CatchUp(ctx); err != nil {
		return nil, err
	}
	img := c.Image()
	errs := make([]error, len(alts))
	rec := &metadata.ClientQuotaRecord{}
	for i, a := range alts {
		changes, err := quotaChanges(img, a)
		if err != nil {
			errs[i] = err
			continue
		}
		rec.Changes = append(rec.Changes, changes...)
	}
	if validateOnly || len(rec.Changes) == 0 {
		return errs, nil
	}
	res, err := c.propose(ctx, rec)
	if err == nil {
		err = res.err
	}
	if err != nil {
		return nil, err
	}
	return errs, nil
}

// quotaChanges checks one entity's alteration against img and returns
// the changes it makes.
func quotaChanges(img *metadata.Image, a QuotaAlteration) ([]metadata.QuotaChange, error) {
	e := a.Entity
	if err := metadata.CheckQuotaEntity(e); err != nil {
		msg := "Invalid empty client quota entity"
		switch {
		case e.IP.Set() && (e.User.Set() || e.ClientID.Set()):
			msg = "Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId"
		case e.IP.Set():
			msg = e.IP.Name + " is not a valid IP or resolvable host."
		}
		return nil, invalidQuota(err, msg)
	}
	seen := map[string]bool{}
	for _, op := range a.Ops {
		if seen[op.Key] {
			return nil, invalidQuota(fmt.Errorf("quota key %q twice for %s", op.Key, e), "Ignoring duplicate entity "+KafkaQuotaEntity(e))
		}
		seen[op.Key] = true
	}
	current := img.ClientQuotas[e]
	var changes []metadata.QuotaChange
	for _, op := range a.Ops {
		if op.Value == nil {
			if _, ok := current[op.Key]; ok {
				changes = append(changes, metadata.QuotaChange{Entity: e, Key: op.Key})
			}
			continue
		}
		if err := checkQuotaValue(e, op.Key, *op.Value); err != nil {
			return nil, err
		}
		if v, ok := current[op.Key]; !ok || v != *op.Value {
			changes = append(changes, metadata.QuotaChange{Entity: e, Key: op.Key, Value: op.Value})
		}
	}
	return changes, nil
}

// checkQuotaValue checks a quota key and the value it is set to, with
// Kafka's messages (ClientQuotaControlManager.validateQuotaKeyValue).
func checkQuotaValue(e metadata.QuotaEntity, key string, v float64) error {
	integral, ok := metadata.QuotaKeyIntegral(e, key)
	switch {
	case !ok:
		return invalidQuota(fmt.Errorf("%q is not a quota key of %s", key, e), "Invalid configuration key "+key)
	case v <= 0 || math.IsNaN(v):
		return invalidQuota(fmt.Errorf("quota %s of %s is %v", key, e, v), "Quota "+key+" must be greater than 0")
	case math.IsInf(v, 1):
		return invalidQuota(fmt.Errorf("quota %s of %s is infinite", key, e), "Proposed value for "+key+" is too large for a LONG.")
	case !integral:
		return nil
	case v > math.MaxInt64:
		return invalidQuota(fmt.Errorf("quota %s of %s is %v", key, e, v), "Proposed value for "+key+" is too large for a LONG.")
	case math.Abs(math.Mod(v, 1)) > 1e-6:
		return invalidQuota(fmt.Errorf("quota %s of %s is %v, not a whole number", key, e, v), key+" cannot be a fractional value.")
	}
	return nil
}

// invalidQuota is ErrInvalidRequest for err, with Kafka's message msg on
// the wire.
func invalidQuota(err error, msg string) error {
	return errmsg.With(fmt.Errorf("%w: %w", ErrInvalidRequest, err), msg)
}

// KafkaQuotaEntity names e as Kafka's ClientQuotaEntity prints itself in
// its error messages.
func KafkaQuotaEntity(e metadata.QuotaEntity) string {
	s := "ClientQuotaEntity(entries={"
	first := true
	add := func(kind string, q metadata.QuotaName) {
		if !q.Set() {
			return
		}
		if !first {
			s += ", "
		}
		first = false
		name := "null"
		if !q.Default {
			name = q.Name
		}
		s += kind + "=" + name
	}
	add("user", e.User)
	add("client-id", e.ClientID)
	add("ip", e.IP)
	return s + "})"
}
