package inspect

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// QuotaEntityPart is one part of the entity client quotas are set for:
// its type ("user", "client-id", "ip") and its name, or Default for the
// type's default.
type QuotaEntityPart struct {
	Type    string `json:"type"`
	Name    string `json:"name,omitempty"`
	Default bool   `json:"default,omitempty"`
}

// String is "type=name", or "type=<default>".
func (p QuotaEntityPart) String() string {
	if p.Default {
		return p.Type + "=<default>"
	}
	return p.Type + "=" + p.Name
}

// QuotaEntity is whom client quotas apply to, its parts in the order
// user, client-id, ip.
type QuotaEntity []QuotaEntityPart

// String is the parts joined by ", ".
func (e QuotaEntity) String() string {
	parts := make([]string, len(e))
	for i, p := range e {
		parts[i] = p.String()
	}
	return strings.Join(parts, ", ")
}

// ClientQuota is one entity's client quotas.
type ClientQuota struct {
	Entity QuotaEntity        `json:"entity"`
	Values map[string]float64 `json:"values"`
}

// QuotaValue formats a quota value as Kafka's tools print it: whole
// numbers without a fraction.
func QuotaValue(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func (e QuotaEntity) kadm() kadm.ClientQuotaEntity {
	out := make(kadm.ClientQuotaEntity, 0, len(e))
	for _, p := range e {
		c := kadm.ClientQuotaEntityComponent{Type: p.Type}
		if !p.Default {
			c.Name = &p.Name
		}
		out = append(out, c)
	}
	return out
}

// ListClientQuotas describes the client quotas whose entity has every
// part of filter (a name or the default; all quotas when filter is
// empty), and, when strict, no other part. They are ordered by entity.
func ListClientQuotas(ctx context.Context, adm *kadm.Client, filter QuotaEntity, strict bool) ([]ClientQuota, error) {
	comps := make([]kadm.DescribeClientQuotaComponent, 0, len(filter))
	for _, p := range filter {
		c := kadm.DescribeClientQuotaComponent{Type: p.Type, MatchType: kmsg.QuotasMatchTypeExact, MatchName: &p.Name}
		if p.Default {
			c.MatchType, c.MatchName = kmsg.QuotasMatchTypeDefault, nil
		}
		comps = append(comps, c)
	}
	described, err := adm.DescribeClientQuotas(ctx, strict, comps)
	if err != nil {
		return nil, fmt.Errorf("describe client quotas: %w", err)
	}
	order := map[string]int{"user": 0, "client-id": 1, "ip": 2}
	out := make([]ClientQuota, 0, len(described))
	for _, d := range described {
		q := ClientQuota{Values: map[string]float64{}}
		for _, c := range d.Entity {
			p := QuotaEntityPart{Type: c.Type, Default: c.Name == nil}
			if c.Name != nil {
				p.Name = *c.Name
			}
			q.Entity = append(q.Entity, p)
		}
		slices.SortFunc(q.Entity, func(a, b QuotaEntityPart) int { return order[a.Type] - order[b.Type] })
		for _, v := range d.Values {
			q.Values[v.Key] = v.Value
		}
		out = append(out, q)
	}
	slices.SortFunc(out, func(a, b ClientQuota) int { return strings.Compare(a.Entity.String(), b.Entity.String()) })
	return out, nil
}

// AlterClientQuotas sets the quota keys of set and removes those of
// remove for entity, in one AlterClientQuotas. The error is the broker's
// answer when it refused, with its message.
func AlterClientQuotas(ctx context.Context, adm *kadm.Client, entity QuotaEntity, set map[string]float64, remove []string) error {
	entry := kadm.AlterClientQuotaEntry{Entity: entity.kadm()}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		entry.Ops = append(entry.Ops, kadm.AlterClientQuotaOp{Key: k, Value: set[k]})
	}
	for _, k := range remove {
		entry.Ops = append(entry.Ops, kadm.AlterClientQuotaOp{Key: k, Remove: true})
	}
	res, err := adm.AlterClientQuotas(ctx, []kadm.AlterClientQuotaEntry{entry})
	switch {
	case err != nil:
		return fmt.Errorf("alter client quotas of %s: %w", entity, err)
	case len(res) == 0:
		return fmt.Errorf("alter client quotas of %s: %w", entity, ErrNoResponse)
	case res[0].Err != nil:
		return fmt.Errorf("client quotas of %s: %s", entity, ErrorText(res[0].Err, res[0].ErrMessage))
	}
	return nil
}
