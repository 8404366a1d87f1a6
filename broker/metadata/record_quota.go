package metadata

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"net"
	"slices"
	"strings"
)

// QuotaEntity names whom a client quota applies to, as Kafka's
// ClientQuotaEntity: a user, a client id or both (or an IP address alone),
// each part either a name or the default of its kind. A part that is
// absent is its zero value; a name is never empty.
type QuotaEntity struct {
	User     QuotaName `json:"user,omitzero"`
	ClientID QuotaName `json:"clientID,omitzero"`
	IP       QuotaName `json:"ip,omitzero"`
}

// QuotaName is one part of a QuotaEntity: a name, or Default for the
// default of its kind (Kafka's null entity name).
type QuotaName struct {
	Name    string `json:"name,omitempty"`
	Default bool   `json:"default,omitempty"`
}

// Named returns the QuotaName of name.
func Named(name string) QuotaName { return QuotaName{Name: name} }

// DefaultName is the QuotaName of a kind's default.
var DefaultName = QuotaName{Default: true}

// Set reports whether the part is present.
func (q QuotaName) Set() bool { return q.Default || q.Name != "" }

// String is the name, or "<default>".
func (q QuotaName) String() string {
	if q.Default {
		return "<default>"
	}
	return q.Name
}

// String names the entity as Kafka's tools print it, for errors and logs:
// "user=alice, client-id=<default>".
func (e QuotaEntity) String() string {
	var parts []string
	for _, p := range []struct {
		kind string
		name QuotaName
	}{{"user", e.User}, {"client-id", e.ClientID}, {"ip", e.IP}} {
		if p.name.Set() {
			parts = append(parts, p.kind+"="+p.name.String())
		}
	}
	return strings.Join(parts, ", ")
}

// Quota keys of a user or client-id entity, and the one of an IP entity
// (Kafka's QuotaConfig).
const (
	QuotaProducerByteRate       = "producer_byte_rate"
	QuotaConsumerByteRate       = "consumer_byte_rate"
	QuotaRequestPercentage      = "request_percentage"
	QuotaControllerMutationRate = "controller_mutation_rate"
	QuotaConnectionCreationRate = "connection_creation_rate"
)

// QuotaKeyIntegral reports whether key is a quota key of entity's kind,
// and whether its values are whole numbers (a LONG or INT in Kafka's
// config definitions) rather than a DOUBLE.
func QuotaKeyIntegral(e QuotaEntity, key string) (integral, ok bool) {
	if e.IP.Set() {
		return true, key == QuotaConnectionCreationRate
	}
	switch key {
	case QuotaProducerByteRate, QuotaConsumerByteRate:
		return true, true
	case QuotaRequestPercentage, QuotaControllerMutationRate:
		return false, true
	}
	return false, false
}

// CheckQuotaEntity checks that e is an entity a quota may be set for: not
// empty, and an IP (a literal address, or the default) only alone.
func CheckQuotaEntity(e QuotaEntity) error {
	switch {
	case e == QuotaEntity{}:
		return fmt.Errorf("%w: empty client quota entity", ErrInvalidRecord)
	case e.IP.Set() && (e.User.Set() || e.ClientID.Set()):
		return fmt.Errorf("%w: client quota entity %s combines an ip with a user or client id", ErrInvalidRecord, e)
	case e.IP.Name != "" && net.ParseIP(e.IP.Name) == nil:
		return fmt.Errorf("%w: client quota entity ip %q is not an IP address", ErrInvalidRecord, e.IP.Name)
	}
	return nil
}

// QuotaChange is one quota key of one entity set to Value, or removed when
// Value is nil.
type QuotaChange struct {
	Entity QuotaEntity `json:"entity"`
	Key    string      `json:"key"`
	Value  *float64    `json:"value,omitempty"`
}

// ClientQuotaRecord changes client quotas (Kafka's ClientQuotaRecord, of
// which Kafka writes one per key in one atomic batch): every change of
// one AlterClientQuotas, applied together or not at all.
type ClientQuotaRecord struct {
	Changes []QuotaChange `json:"changes"`
}

// Type returns "ClientQuota".
func (*ClientQuotaRecord) Type() string { return "ClientQuota" }

// apply applies the record to img (see Image.Apply).
func (r *ClientQuotaRecord) apply(img *Image) (*Image, error) {
	if len(r.Changes) == 0 {
		return nil, fmt.Errorf("%w: client quota record without changes", ErrInvalidRecord)
	}
	n := img.shallowCopy()
	n.ClientQuotas = maps.Clone(img.ClientQuotas)
	if n.ClientQuotas == nil {
		n.ClientQuotas = map[QuotaEntity]map[string]float64{}
	}
	copied := map[QuotaEntity]bool{}
	for _, c := range r.Changes {
		if err := CheckQuotaEntity(c.Entity); err != nil {
			return nil, err
		}
		if _, ok := QuotaKeyIntegral(c.Entity, c.Key); !ok {
			return nil, fmt.Errorf("%w: %q is not a quota key of %s", ErrInvalidRecord, c.Key, c.Entity)
		}
		if c.Value != nil && (*c.Value <= 0 || math.IsInf(*c.Value, 0) || math.IsNaN(*c.Value)) {
			return nil, fmt.Errorf("%w: quota %s of %s is %v, not a positive number", ErrInvalidRecord, c.Key, c.Entity, *c.Value)
		}
		if !copied[c.Entity] {
			copied[c.Entity] = true
			n.ClientQuotas[c.Entity] = maps.Clone(img.ClientQuotas[c.Entity])
		}
		values := n.ClientQuotas[c.Entity]
		if c.Value == nil {
			delete(values, c.Key)
		} else {
			if values == nil {
				values = map[string]float64{}
				n.ClientQuotas[c.Entity] = values
			}
			values[c.Key] = *c.Value
		}
		if len(values) == 0 {
			delete(n.ClientQuotas, c.Entity)
		}
	}
	return n, nil
}

// compareQuotaEntities orders entities by user, then client id, then IP;
// in each, absent first, then the default, then names.
func compareQuotaEntities(a, b QuotaEntity) int {
	part := func(q QuotaName) (int, string) {
		switch {
		case !q.Set():
			return 0, ""
		case q.Default:
			return 1, ""
		}
		return 2, q.Name
	}
	for _, p := range [][2]QuotaName{{a.User, b.User}, {a.ClientID, b.ClientID}, {a.IP, b.IP}} {
		ka, na := part(p[0])
		kb, nb := part(p[1])
		if c := cmp.Or(cmp.Compare(ka, kb), strings.Compare(na, nb)); c != 0 {
			return c
		}
	}
	return 0
}

// SortedQuotaEntities returns every entity with client quotas, ordered.
func (img *Image) SortedQuotaEntities() []QuotaEntity {
	return slices.SortedFunc(maps.Keys(img.ClientQuotas), compareQuotaEntities)
}
