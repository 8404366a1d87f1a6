package broker

// AlterClientQuotas (key 49), versions 0-1.
//
// Each entry sets or removes quota keys of one entity (user, client-id or
// both, each a name or the default; or an IP alone), checked as Kafka's
// ClientQuotaControlManager checks them: an empty entity, an unknown
// entity type, an empty name, an IP combined with another type, a key
// that is not one of the entity's (producer_byte_rate,
// consumer_byte_rate, request_percentage, controller_mutation_rate; an
// IP's connection_creation_rate), a value not above 0 or a fraction of a
// whole-number key get INVALID_REQUEST with Kafka's message, and a key
// named twice refuses its entry. The changes of the entries that pass are
// committed together through the controller; every node enforces them
// when its metadata has them (broker/auth's Quotas). An entity named
// twice is answered once: its first entry is applied and the answer is
// INVALID_REQUEST, as Kafka answers it. An IP must be a literal address:
// klog resolves no host names. IP quotas are stored, not enforced. The
// principal needs ALTER_CONFIGS on the cluster: without it every entry is
// answered CLUSTER_AUTHORIZATION_FAILED and nothing changes, as Kafka
// answers.

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/broker/errmsg"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/wire"
)

func handleAlterClientQuotas(n *Node, ctx context.Context, rc *wire.RequestContext, kreq kmsg.Request) (kmsg.Response, error) {
	req := kreq.(*kmsg.AlterClientQuotasRequest)
	resp := req.ResponseKind().(*kmsg.AlterClientQuotasResponse)
	if !n.authorizeCluster(rc, kmsg.ACLOperationAlterConfigs) {
		for _, e := range req.Entries {
			resp.Entries = append(resp.Entries, alterQuotaAnswer(e.Entity, kerr.ClusterAuthorizationFailed))
		}
		return resp, nil
	}
	// One answer per entity, in the order entities first appear.
	type answer struct {
		entity []kmsg.AlterClientQuotasRequestEntryEntity
		alt    int // index in alts, or -1
		err    error
	}
	var answers []*answer
	byKey := map[string]*answer{}
	var alts []controller.QuotaAlteration
	for _, e := range req.Entries {
		key := quotaEntityKey(e.Entity)
		if a, dup := byKey[key]; dup {
			a.err = errmsg.With(fmt.Errorf("%w: client quota entity named twice", kerr.InvalidRequest), "Ignoring duplicate entity "+kafkaEntityOf(e.Entity))
			continue
		}
		a := &answer{entity: e.Entity, alt: -1}
		byKey[key] = a
		answers = append(answers, a)
		entity, err := parseQuotaEntity(e.Entity)
		if err != nil {
			a.err = err
			continue
		}
		alt := controller.QuotaAlteration{Entity: entity}
		for _, op := range e.Ops {
			qo := controller.QuotaOp{Key: op.Key}
			if !op.Remove {
				qo.Value = new(op.Value)
			}
			alt.Ops = append(alt.Ops, qo)
		}
		a.alt = len(alts)
		alts = append(alts, alt)
	}
	errs, err := n.ctrl.AlterClientQuotas(ctx, alts, req.ValidateOnly)
	for _, a := range answers {
		aerr := a.err
		if aerr == nil && a.alt >= 0 {
			aerr = err
			if err == nil {
				aerr = errs[a.alt]
			}
		}
		resp.Entries = append(resp.Entries, alterQuotaAnswer(a.entity, aerr))
	}
	return resp, nil
}

// alterQuotaAnswer is the answer to the entry of entity.
func alterQuotaAnswer(entity []kmsg.AlterClientQuotasRequestEntryEntity, err error) kmsg.AlterClientQuotasResponseEntry {
	entry := kmsg.NewAlterClientQuotasResponseEntry()
	for _, ent := range entity {
		re := kmsg.NewAlterClientQuotasResponseEntryEntity()
		re.Type, re.Name = ent.Type, ent.Name
		entry.Entity = append(entry.Entity, re)
	}
	entry.ErrorCode, entry.ErrorMessage = errorCode(err), errorMessage(err)
	return entry
}

// parseQuotaEntity makes the entity of an AlterClientQuotas entry, as
// Kafka reads it: a type named twice keeps its last name.
func parseQuotaEntity(parts []kmsg.AlterClientQuotasRequestEntryEntity) (metadata.QuotaEntity, error) {
	var e metadata.QuotaEntity
	for _, p := range parts {
		q := metadata.DefaultName
		if p.Name != nil {
			q = metadata.Named(*p.Name)
		}
		switch p.Type {
		case quotaTypeUser:
			e.User = q
		case quotaTypeClientID:
			e.ClientID = q
		case quotaTypeIP:
			e.IP = q
		default:
			return e, errmsg.Withf(fmt.Errorf("%w: client quota entity type %q", kerr.InvalidRequest, p.Type),
				"Unhandled client quota entity type: %s", p.Type)
		}
	}
	for _, p := range parts {
		if p.Name != nil && *p.Name == "" {
			return e, errmsg.Withf(fmt.Errorf("%w: empty %s name", kerr.InvalidRequest, p.Type), "Empty %s not supported", p.Type)
		}
	}
	return e, nil
}

// quotaEntityKey identifies an entry's entity, whatever the order of its
// parts.
func quotaEntityKey(parts []kmsg.AlterClientQuotasRequestEntryEntity) string {
	byType := map[string]string{}
	for _, p := range parts {
		name := "\x00" // the default
		if p.Name != nil {
			name = "=" + *p.Name
		}
		byType[p.Type] = name
	}
	keys := make([]string, 0, len(byType))
	for t, name := range byType {
		keys = append(keys, t+name)
	}
	slices.Sort(keys)
	return strings.Join(keys, "\x01")
}

// kafkaEntityOf names an entry's entity as Kafka's messages do.
func kafkaEntityOf(parts []kmsg.AlterClientQuotasRequestEntryEntity) string {
	e, err := parseQuotaEntity(parts)
	if err != nil {
		return fmt.Sprint(parts)
	}
	return controller.KafkaQuotaEntity(e)
}
