package telemetry

import (
	"cmp"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klogdev/klog/broker/errmsg"
	"github.com/klogdev/klog/store/log/record"
)

// Bounds of what the receiver keeps.
const (
	// MaxBytes is telemetry.max.bytes' default: the largest compressed
	// payload a client may push.
	MaxBytes = 1 << 20
	// maxDecoded bounds what one payload may decompress to.
	maxDecoded = 8 * MaxBytes
	// MaxClients is how many client instances the receiver keeps; past
	// it, the one heard from longest ago is forgotten.
	MaxClients = 1024
	// MaxSeries is how many series one client instance may have; a push
	// naming more has the rest dropped (and counted).
	MaxSeries = 2000
	// minExpiry is the least time a client instance is kept after its
	// last request; it is kept three push intervals when that is longer.
	minExpiry = time.Minute
)

// acceptedCompression is what clients may compress a push with, in
// Kafka's order of preference: zstd, lz4, gzip, snappy.
var acceptedCompression = []int8{4, 3, 1, 2}

// Client is what identifies a client's requests: its connection's
// attributes, which subscriptions match.
type Client struct {
	ClientID        string
	SoftwareName    string
	SoftwareVersion string
	// Remote is the connection's host:port.
	Remote string
}

// Answer is GetTelemetrySubscriptions' answer, or its error.
type Answer struct {
	Err              error
	InstanceID       [16]byte
	SubscriptionID   int32
	Compression      []int8
	PushIntervalMs   int32
	MaxBytes         int32
	DeltaTemporality bool
	Metrics          []string
}

// instance is one client instance's state.
type instance struct {
	id             [16]byte
	client         Client
	version        uint64 // of the subscriptions it was matched against
	subscriptionID int32
	intervalMs     int32
	metrics        []string
	lastGet        time.Time
	lastPush       time.Time
	lastSeen       time.Time
	terminating    bool
	series         map[string]*Series
	dropped        int64 // series not kept: MaxSeries
	pushes         int64
}

// Series is one metric of one client instance, as pushed.
type Series struct {
	Name  string
	Attrs string
	Kind  Kind
	// Value is a gauge's last value, a counter's total, a histogram's
	// sum of observations.
	Value float64
	// Count is a histogram's number of observations.
	Count uint64
	At    time.Time
}

// Receiver keeps the subscriptions and the client instances that asked
// for theirs, and what they pushed. It is safe for concurrent use.
type Receiver struct {
	now func() time.Time
	dec record.Decompressor

	mu      sync.Mutex
	subs    []Subscription
	version uint64
	clients map[[16]byte]*instance
}

// NewReceiver returns a receiver with no subscriptions; now is its clock
// (time.Now when nil).
func NewReceiver(now func() time.Time) *Receiver {
	if now == nil {
		now = time.Now
	}
	return &Receiver{now: now, clients: map[[16]byte]*instance{}}
}

// Close frees the decompressor.
func (r *Receiver) Close() { r.dec.Close() }

// SetSubscriptions replaces the subscriptions; each client instance is
// matched against them again at its next request.
func (r *Receiver) SetSubscriptions(subs []Subscription) {
	subs = slices.Clone(subs)
	SortSubscriptions(subs)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.subs = subs
	r.version++
}

// Subscriptions answers GetTelemetrySubscriptions for a client instance
// (a zero id asks for a new one). A client asking again within its push
// interval is THROTTLING_QUOTA_EXCEEDED, unless the subscriptions changed
// since it last asked.
func (r *Receiver) Subscriptions(id [16]byte, c Client) Answer {
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if id == ([16]byte{}) {
		id = r.newID()
	}
	in := r.instanceLocked(id, c, now)
	last := in.lastGet
	if in.lastPush.After(last) {
		last = in.lastPush
	}
	if !last.IsZero() && now.Sub(last) < time.Duration(in.intervalMs)*time.Millisecond {
		return Answer{Err: errmsg.With(kerr.ThrottlingQuotaExceeded, fmt.Sprintf("Request from the client [%s] arrived before the next push interval time", uuid(id)))}
	}
	in.lastGet = now
	return Answer{
		InstanceID:       id,
		SubscriptionID:   in.subscriptionID,
		Compression:      acceptedCompression,
		PushIntervalMs:   in.intervalMs,
		MaxBytes:         MaxBytes,
		DeltaTemporality: true,
		Metrics:          slices.Clone(in.metrics),
	}
}

// Push takes a PushTelemetry: checked as Kafka checks it (a terminated
// instance, a push within the interval but the first after a
// GetTelemetrySubscriptions, a stale subscription id, a compression type
// not known, a payload over MaxBytes), then decoded and kept. A payload
// that does not decode is INVALID_RECORD.
func (r *Receiver) Push(id [16]byte, subscriptionID int32, terminating bool, compression int8, payload []byte, c Client) error {
	if id == ([16]byte{}) {
		return errmsg.With(kerr.InvalidRequest, fmt.Sprintf("Invalid request from the client [%s], invalid client instance id", uuid(id)))
	}
	now := r.now()
	r.mu.Lock()
	in := r.instanceLocked(id, c, now)
	err := r.checkPushLocked(in, subscriptionID, terminating, compression, len(payload), now)
	in.terminating = in.terminating || terminating
	r.mu.Unlock()
	if err != nil || len(payload) == 0 {
		return err
	}
	if compression != 0 {
		var derr error
		payload, derr = r.dec.DecompressWithin(record.Compression(compression), payload, maxDecoded)
		if derr != nil {
			return errmsg.With(fmt.Errorf("%w: %w", kerr.InvalidRecord, derr), "")
		}
	}
	samples, err := decode(payload)
	if err != nil {
		return errmsg.With(fmt.Errorf("%w: %w", kerr.InvalidRecord, err), "")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur := r.clients[id]; cur != nil {
		cur.keep(samples, now)
	}
	return nil
}

func (r *Receiver) checkPushLocked(in *instance, subscriptionID int32, terminating bool, compression int8, size int, now time.Time) error {
	id := uuid(in.id)
	if in.terminating {
		return errmsg.With(kerr.InvalidRequest, fmt.Sprintf("Client [%s] sent the previous request with state terminating to TRUE, can not accept any requests after that", id))
	}
	// The first push after a GetTelemetrySubscriptions may come early:
	// clients add jitter to the interval.
	ok := in.lastGet.After(in.lastPush) || now.Sub(in.lastPush) >= time.Duration(in.intervalMs)*time.Millisecond
	if !ok && !terminating {
		return errmsg.With(kerr.ThrottlingQuotaExceeded, fmt.Sprintf("Request from the client [%s] arrived before the next push interval time", id))
	}
	in.lastPush = now
	if subscriptionID != in.subscriptionID {
		return errmsg.With(kerr.UnknownSubscriptionID, fmt.Sprintf("Unknown client subscription id for the client [%s]", id))
	}
	if compression < 0 || compression > 4 {
		return errmsg.With(kerr.UnsupportedCompressionType, fmt.Sprintf("Unknown compression type [%d] is received in telemetry request from [%s]", compression, id))
	}
	if size > MaxBytes {
		return errmsg.With(kerr.TelemetryTooLarge, fmt.Sprintf("Telemetry request from [%s] is larger than the maximum allowed size [%d]", id, MaxBytes))
	}
	return nil
}

// keep adds a push's samples to the instance's series.
func (in *instance) keep(samples []sample, now time.Time) {
	in.pushes++
	for _, s := range samples {
		cur := in.series[s.series]
		if cur == nil {
			if len(in.series) >= MaxSeries {
				in.dropped++
				continue
			}
			cur = &Series{Name: s.name, Attrs: s.attrs, Kind: s.kind}
			in.series[s.series] = cur
		}
		cur.Kind, cur.At = s.kind, now
		if s.delta {
			cur.Value += s.value
			cur.Count += s.count
		} else {
			cur.Value, cur.Count = s.value, s.count
		}
	}
}

// instanceLocked is the instance id, made or matched again as needed,
// after forgetting the instances whose time is up.
func (r *Receiver) instanceLocked(id [16]byte, c Client, now time.Time) *instance {
	r.expireLocked(now)
	in := r.clients[id]
	if in == nil {
		if len(r.clients) >= MaxClients {
			r.evictLocked()
		}
		in = &instance{id: id, series: map[string]*Series{}}
		r.clients[id] = in
		in.version = r.version - 1 // match below
	}
	in.client, in.lastSeen = c, now
	if in.version != r.version {
		in.version = r.version
		in.match(r.subs)
		// A changed subscription is answered at once, as a new
		// instance would be.
		in.lastGet, in.lastPush = time.Time{}, time.Time{}
	}
	return in
}

// match sets the instance's metrics, interval and subscription id from
// the subscriptions that match it.
func (in *instance) match(subs []Subscription) {
	host, port := splitHostPort(in.client.Remote)
	attrs := map[string]string{
		AttrClientInstanceID: uuid(in.id),
		AttrClientID:         in.client.ClientID,
		AttrSoftwareName:     in.client.SoftwareName,
		AttrSoftwareVersion:  in.client.SoftwareVersion,
		AttrSourceAddress:    host,
		AttrSourcePort:       port,
	}
	interval := int32(DefaultIntervalMs)
	var metrics []string
	all := false
	for i := range subs {
		if !subs[i].matches(attrs) {
			continue
		}
		interval = min(interval, subs[i].IntervalMs)
		for _, m := range subs[i].Metrics {
			all = all || m == AllMetrics
			if !slices.Contains(metrics, m) {
				metrics = append(metrics, m)
			}
		}
	}
	if all {
		metrics = []string{AllMetrics}
	}
	slices.Sort(metrics)
	in.metrics, in.intervalMs = metrics, interval
	sum := crc32.Checksum([]byte(strings.Join(metrics, ",")+fmt.Sprint(interval)), crc32.MakeTable(crc32.Castagnoli))
	hi, lo := binary.BigEndian.Uint64(in.id[:8]), binary.BigEndian.Uint64(in.id[8:])
	h := hi ^ lo
	in.subscriptionID = int32(sum) ^ int32(h^(h>>32))
}

func splitHostPort(addr string) (string, string) {
	i := strings.LastIndexByte(addr, ':')
	if i < 0 {
		return addr, ""
	}
	return strings.Trim(addr[:i], "[]"), addr[i+1:]
}

// expireLocked forgets instances not heard from for three push intervals
// (at least minExpiry) and those that said they were terminating.
func (r *Receiver) expireLocked(now time.Time) {
	for id, in := range r.clients {
		ttl := max(3*time.Duration(in.intervalMs)*time.Millisecond, minExpiry)
		if now.Sub(in.lastSeen) > ttl {
			delete(r.clients, id)
		}
	}
}

// evictLocked forgets the instance heard from longest ago.
func (r *Receiver) evictLocked() {
	var oldest *instance
	for _, in := range r.clients {
		if oldest == nil || in.lastSeen.Before(oldest.lastSeen) {
			oldest = in
		}
	}
	if oldest != nil {
		delete(r.clients, oldest.id)
	}
}

func (r *Receiver) newID() [16]byte {
	for {
		var id [16]byte
		_, _ = rand.Read(id[:])
		id[6] = id[6]&0x0f | 0x40
		id[8] = id[8]&0x3f | 0x80
		if _, taken := r.clients[id]; !taken && id != ([16]byte{}) {
			return id
		}
	}
}

// ClientView is one client instance as the admin API shows it.
type ClientView struct {
	InstanceID      string
	ClientID        string
	SoftwareName    string
	SoftwareVersion string
	Remote          string
	SubscriptionID  int32
	PushIntervalMs  int32
	Metrics         []string
	Pushes          int64
	LastPush        time.Time
	Terminating     bool
	DroppedSeries   int64
	Series          []Series
}

// Clients lists the client instances, by client id then instance id,
// each with its series by name.
func (r *Receiver) Clients() []ClientView {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.expireLocked(r.now())
	out := make([]ClientView, 0, len(r.clients))
	for _, in := range r.clients {
		v := ClientView{
			InstanceID: uuid(in.id), ClientID: in.client.ClientID,
			SoftwareName: in.client.SoftwareName, SoftwareVersion: in.client.SoftwareVersion,
			Remote: in.client.Remote, SubscriptionID: in.subscriptionID, PushIntervalMs: in.intervalMs,
			Metrics: slices.Clone(in.metrics), Pushes: in.pushes, LastPush: in.lastPush,
			Terminating: in.terminating, DroppedSeries: in.dropped,
			Series: make([]Series, 0, len(in.series)),
		}
		for _, s := range in.series {
			v.Series = append(v.Series, *s)
		}
		slices.SortFunc(v.Series, func(a, b Series) int { return cmp.Or(cmp.Compare(a.Name, b.Name), cmp.Compare(a.Attrs, b.Attrs)) })
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b ClientView) int {
		return cmp.Or(cmp.Compare(a.ClientID, b.ClientID), cmp.Compare(a.InstanceID, b.InstanceID))
	})
	return out
}

// uuid renders an id as Kafka's Uuid.toString does: URL-safe base64
// without padding.
func uuid(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }
