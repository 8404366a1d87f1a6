package auth

import (
	"crypto/sha256"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klogdev/klog/broker/metadata"
)

// QuotaKind is what a client quota bounds.
type QuotaKind int

// The client quotas a node enforces.
const (
	// ProduceQuota bounds the bytes a client produces per second
	// (producer_byte_rate).
	ProduceQuota QuotaKind = iota
	// FetchQuota bounds the bytes a client fetches per second
	// (consumer_byte_rate).
	FetchQuota
	// RequestQuota bounds the share of a handler's time a client takes,
	// in percent of one second per second (request_percentage).
	RequestQuota
	numQuotaKinds
)

// key is the quota key of the metadata log that sets kind's limit.
func (k QuotaKind) key() string {
	return [...]string{metadata.QuotaProducerByteRate, metadata.QuotaConsumerByteRate, metadata.QuotaRequestPercentage}[k]
}

// DefaultMaxQuotaSensors bounds the rates Quotas keeps at once: about
// half a kilobyte each (a rate's samples, its key of at most two names
// of maxScopeName bytes).
const DefaultMaxQuotaSensors = 10_000

// maxScopeName bounds the bytes of a user or client id a rate is keyed
// by: a longer one (a client id may have 32 KiB) is keyed by its SHA-256.
const maxScopeName = 64

// QuotaConfig is the quota window of a node's Quotas.
type QuotaConfig struct {
	// Samples is quota.window.num, Window quota.window.size.seconds: a
	// rate is measured over Samples windows of Window.
	Samples int
	Window  time.Duration
	// MaxSensors bounds the rates kept at once (DefaultMaxQuotaSensors
	// when 0).
	MaxSensors int
}

// Quotas enforces client quotas as Kafka's ClientQuotaManager does: each
// request's (user, client id) gets the quota of the most specific entity
// that sets one, in Kafka's order
//
//  1. user and client id      5. default user and default client id
//  2. user, default client id 6. default user
//  3. user                    7. client id
//  4. default user, client id 8. default client id
//
// and what it records is measured in the rate of that entity's scope:
// the clients of a user share the rate of a quota set for the user,
// while under a default each user (or client id) has a rate of its own.
// A client over its quota is told to wait the time its rate needs to
// come back to the quota (Record).
//
// Memory is bounded: a rate with no record for a whole quota window holds
// nothing Kafka's would still count, so it is dropped; at most MaxSensors
// rates are kept, each keyed by names of at most maxScopeName bytes (a
// longer one by its hash). What does not fit (a client rotating client
// ids faster than the window forgets them) is measured in one rate per
// kind shared by all of it, which throttles those clients together, never
// less than each alone.
type Quotas struct {
	cfg rateConfig
	max int
	// enabled says, per kind, whether a quota of that kind is set: the
	// request paths look without the lock.
	enabled [numQuotaKinds]atomic.Bool

	mu struct {
		sync.Mutex
		// quotas are the image's client quotas, by kind.
		quotas [numQuotaKinds]map[metadata.QuotaEntity]float64
		// rates are the rates being measured, by scope.
		rates map[quotaScope]*rate
		// overflow holds, per kind, what did not fit in rates.
		overflow [numQuotaKinds]rate
		// swept is when rates were last swept of idle rates (ms).
		swept int64
	}
}

// quotaScope is a rate's scope: a kind and the (user, client id) tags of
// the entity whose quota applies; an empty tag is one the scope does not
// depend on.
type quotaScope struct {
	kind           QuotaKind
	user, clientID string
}

// NewQuotas returns the Quotas of cfg, enforcing none until SetQuotas.
func NewQuotas(cfg QuotaConfig) *Quotas {
	q := &Quotas{cfg: rateConfig{samples: max(cfg.Samples, 1), window: max(cfg.Window.Milliseconds(), 1)}, max: cfg.MaxSensors}
	if q.max <= 0 {
		q.max = DefaultMaxQuotaSensors
	}
	q.mu.rates = map[quotaScope]*rate{}
	return q
}

// SetQuotas makes quotas, the metadata image's, the ones enforced; rates
// measured so far are kept, as Kafka keeps its sensors when a quota
// changes.
func (q *Quotas) SetQuotas(quotas map[metadata.QuotaEntity]map[string]float64) {
	var byKind [numQuotaKinds]map[metadata.QuotaEntity]float64
	for e, values := range quotas {
		if e.IP.Set() {
			continue
		}
		for k := range numQuotaKinds {
			if v, ok := values[k.key()]; ok {
				if byKind[k] == nil {
					byKind[k] = map[metadata.QuotaEntity]float64{}
				}
				byKind[k][e] = v
			}
		}
	}
	q.mu.Lock()
	q.mu.quotas = byKind
	for k := range numQuotaKinds {
		q.enabled[k].Store(len(byKind[k]) > 0)
	}
	q.mu.Unlock()
}

// Enabled reports whether a quota of kind is set for anyone.
func (q *Quotas) Enabled(kind QuotaKind) bool { return q.enabled[kind].Load() }

// Record counts v (bytes, or percent-seconds of handler time) for the
// client of principal and clientID at now and returns how long it is to
// wait: zero within its quota, else the time Kafka's QuotaUtils.throttleTime
// gives, bounded by one window for the request quota as Kafka bounds it.
// A client no quota applies to is not measured.
func (q *Quotas) Record(kind QuotaKind, principal, clientID string, v float64, now time.Time) time.Duration {
	if !q.Enabled(kind) {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	r, limit, ok := q.rateLocked(kind, principal, clientID, now)
	if !ok {
		return 0
	}
	ms := now.UnixMilli()
	r.record(q.cfg, v, ms)
	t := r.throttleMs(q.cfg, limit, ms)
	if kind == RequestQuota {
		t = min(t, q.cfg.window)
	}
	return time.Duration(t) * time.Millisecond
}

// Unrecord takes back v recorded at now, for a fetch that is answered
// empty because it is throttled.
func (q *Quotas) Unrecord(kind QuotaKind, principal, clientID string, v float64, now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if r, _, ok := q.rateLocked(kind, principal, clientID, now); ok {
		r.record(q.cfg, -v, now.UnixMilli())
	}
}

// MaxInWindow is the most a client may record at once without being
// throttled for it whatever came before (Kafka's
// getMaxValueInQuotaWindow: the quota times samples-1 windows), and
// false when no quota applies.
func (q *Quotas) MaxInWindow(kind QuotaKind, principal, clientID string) (float64, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	_, limit, ok := q.scopeLocked(kind, userOf(principal), clientID)
	if !ok {
		return 0, false
	}
	return limit * float64(q.cfg.samples-1) * float64(q.cfg.window) / 1000, true
}

// Rates is the number of rates being measured, for tests of the bound.
func (q *Quotas) Rates() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.mu.rates)
}

// rateLocked finds, or starts, the rate a record of the client is
// measured in, and the limit it is held to.
func (q *Quotas) rateLocked(kind QuotaKind, principal, clientID string, now time.Time) (*rate, float64, bool) {
	scope, limit, ok := q.scopeLocked(kind, userOf(principal), clientID)
	if !ok {
		return nil, 0, false
	}
	if r, ok := q.mu.rates[scope]; ok {
		return r, limit, true
	}
	ms := now.UnixMilli()
	if len(q.mu.rates) >= q.max || ms-q.mu.swept >= int64(q.cfg.samples)*q.cfg.window {
		q.sweepLocked(ms)
	}
	if len(q.mu.rates) >= q.max {
		return &q.mu.overflow[kind], limit, true
	}
	r := &rate{}
	q.mu.rates[scope] = r
	return r, limit, true
}

// sweepLocked drops the rates with no record for a whole quota window:
// their samples would all be purged, so they measure nothing.
func (q *Quotas) sweepLocked(now int64) {
	q.mu.swept = now
	expire := int64(q.cfg.samples) * q.cfg.window
	for s, r := range q.mu.rates {
		if now-r.lastUsed >= expire {
			delete(q.mu.rates, s)
		}
	}
}

// scopeLocked applies Kafka's precedence (DefaultQuotaCallback's
// quotaMetricTags and quotaLimit) for a user and client id: the scope
// their records are measured in and its limit, or false when no quota of
// kind applies.
func (q *Quotas) scopeLocked(kind QuotaKind, user, clientID string) (quotaScope, float64, bool) {
	quotas := q.mu.quotas[kind]
	if len(quotas) == 0 {
		return quotaScope{}, 0, false
	}
	u, c, d := metadata.Named(user), metadata.Named(clientID), metadata.DefaultName
	// named says which parts of a level name the user or the client id:
	// an empty one matches no entity, as Kafka's names are never empty.
	type level struct {
		e              metadata.QuotaEntity
		named          [2]bool
		user, clientID string
	}
	levels := [...]level{
		{metadata.QuotaEntity{User: u, ClientID: c}, [2]bool{true, true}, user, clientID},
		{metadata.QuotaEntity{User: u, ClientID: d}, [2]bool{true, false}, user, clientID},
		{metadata.QuotaEntity{User: u}, [2]bool{true, false}, user, ""},
		{metadata.QuotaEntity{User: d, ClientID: c}, [2]bool{false, true}, user, clientID},
		{metadata.QuotaEntity{User: d, ClientID: d}, [2]bool{}, user, clientID},
		{metadata.QuotaEntity{User: d}, [2]bool{}, user, ""},
		{metadata.QuotaEntity{ClientID: c}, [2]bool{false, true}, "", clientID},
		{metadata.QuotaEntity{ClientID: d}, [2]bool{}, "", clientID},
	}
	for _, l := range levels {
		if l.named[0] && user == "" || l.named[1] && clientID == "" {
			continue
		}
		if v, ok := quotas[l.e]; ok {
			return quotaScope{kind: kind, user: scopeName(l.user), clientID: scopeName(l.clientID)}, v, true
		}
	}
	return quotaScope{}, 0, false
}

// scopeName is name as a rate's key: itself, or its SHA-256 when longer
// than maxScopeName.
func scopeName(name string) string {
	if len(name) <= maxScopeName {
		return name
	}
	sum := sha256.Sum256([]byte(name))
	return string(sum[:])
}

// userOf is the user name of a principal ("User:alice" is "alice"), the
// name user quotas are set for.
func userOf(principal string) string {
	if _, name, ok := strings.Cut(principal, ":"); ok {
		return name
	}
	return principal
}
