package waits

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// lookTimeout bounds one look at the metadata; lookEvery is the least time
// between the starts of two looks.
const (
	lookTimeout = 2 * time.Second
	lookEvery   = 2 * time.Second
)

// look is what the last look at the metadata saw.
type look struct {
	at      time.Time
	err     error            // the Metadata request failed
	brokers map[int32]string // node id → host:port
	topics  map[string]kadm.TopicDetail
}

// looker runs the looks at the metadata, one at a time.
type looker struct {
	adm  *kadm.Client
	busy chan struct{} // holds a token while a look runs
	last time.Time
}

func newLooker(cl *kgo.Client) *looker {
	return &looker{adm: kadm.NewClient(cl), busy: make(chan struct{}, 1)}
}

// start begins a look at topics unless one runs or one began less than
// lookEvery ago.
func (lk *looker) start(ctx context.Context, wt *Watcher, topics []string) {
	if time.Since(lk.last) < lookEvery {
		return
	}
	select {
	case lk.busy <- struct{}{}:
	default:
		return
	}
	lk.last = time.Now()
	go func() {
		defer func() { <-lk.busy }()
		lk.run(ctx, wt, topics)
	}()
}

// run looks at the topics' metadata and, with acks from every in-sync
// replica, at each topic's min.insync.replicas once; the requests go one
// after the other.
func (lk *looker) run(ctx context.Context, wt *Watcher, topics []string) {
	// kadm answers Metadata from the client's cache, up to
	// MetadataMinAge (5s) old, unless authorized operations are asked
	// for: those make it ask a broker, which is what a look is for.
	mctx, cancel := context.WithTimeout(kadm.WithAuthorizedOps(ctx), lookTimeout)
	m, err := lk.adm.Metadata(mctx, topics...)
	cancel()
	if ctx.Err() != nil {
		return
	}
	l := look{at: time.Now(), err: err, brokers: make(map[int32]string), topics: m.Topics}
	for _, b := range m.Brokers {
		l.brokers[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
	}
	wt.mu.Lock()
	if err != nil && wt.look.err == nil && !wt.look.at.IsZero() {
		// A look that failed (its broker is down, say) keeps what
		// the last one saw: the partitions' state has no newer
		// source.
		l.brokers, l.topics, l.err = wt.look.brokers, wt.look.topics, nil
	}
	wt.look = l
	var need []string
	for _, t := range topics {
		if _, ok := wt.minISR[t]; !ok && wt.o.AcksAll && err == nil {
			need = append(need, t)
		}
	}
	wt.mu.Unlock()
	if len(need) == 0 {
		return
	}
	cctx, cancel := context.WithTimeout(ctx, lookTimeout)
	defer cancel()
	rcs, err := lk.adm.DescribeTopicConfigs(cctx, need...)
	if err != nil {
		return
	}
	wt.mu.Lock()
	defer wt.mu.Unlock()
	for _, rc := range rcs {
		for _, c := range rc.Configs {
			if c.Key != "min.insync.replicas" || c.Value == nil {
				continue
			}
			if n, err := strconv.Atoi(*c.Value); err == nil {
				wt.minISR[rc.Name] = n
			}
		}
	}
}

// partReason says why records wait on tp, from the last look and the
// brokers' failures; the caller holds mu.
func (wt *Watcher) partReason(tp topicPartition) string {
	l := wt.look
	if l.at.IsZero() {
		return wt.unknownReason("looking at the metadata")
	}
	if l.err != nil {
		return wt.unknownReason("metadata: " + errText(l.err))
	}
	td, ok := l.topics[tp.topic]
	switch {
	case !ok:
		return wt.unknownReason("looking at the metadata")
	case td.Err != nil:
		return fmt.Sprintf("topic %s: %s", tp.topic, errText(td.Err))
	case tp.partition < 0:
		return "the client has not loaded the partitions of " + tp.topic
	}
	p, ok := td.Partitions[tp.partition]
	switch {
	case !ok:
		return "the metadata does not list it"
	case p.Leader < 0:
		if p.Err != nil {
			return fmt.Sprintf("no leader (%s)", errText(p.Err))
		}
		return "no leader"
	case p.Err != nil && !errors.Is(p.Err, kerr.ReplicaNotAvailable):
		return errText(p.Err)
	}
	addr := l.brokers[p.Leader]
	if err := wt.unreachable(addr); err != nil {
		return fmt.Sprintf("leader %d at %s unreachable: %s", p.Leader, addr, errText(err))
	}
	if !wt.o.AcksAll {
		return fmt.Sprintf("leader %d at %s has not acknowledged", p.Leader, addr)
	}
	if n, ok := wt.minISR[tp.topic]; ok && len(p.ISR) < n {
		return fmt.Sprintf("NOT_ENOUGH_REPLICAS (min.insync.replicas %d, in sync %d: %s)", n, len(p.ISR), ids(p.ISR))
	}
	var gone []string
	var why error
	for _, id := range p.ISR {
		if err := wt.unreachable(l.brokers[id]); err != nil && id != p.Leader {
			gone = append(gone, strconv.Itoa(int(id)))
			why = err
		}
	}
	if len(gone) > 0 {
		return fmt.Sprintf("leader %d waits for in-sync replicas %s (unreachable: %s)", p.Leader, strings.Join(gone, ","), errText(why))
	}
	return fmt.Sprintf("leader %d at %s has not acknowledged (in sync %s)", p.Leader, addr, ids(p.ISR))
}

// unknownReason is the reason of a wait the metadata does not explain:
// what is known, and the brokers that cannot be reached; the caller holds
// mu.
func (wt *Watcher) unknownReason(what string) string {
	var gone []string
	var why error
	for addr := range wt.brokers {
		if err := wt.unreachable(addr); err != nil {
			gone = append(gone, addr)
			why = err
		}
	}
	if len(gone) == 0 {
		return what
	}
	return fmt.Sprintf("%s; %s %s unreachable: %s", what, plural(len(gone), "broker"), listNames(gone), errText(why))
}

// groupReason says why the group session is lost; the caller holds mu.
func (wt *Watcher) groupReason() string {
	err := wt.group.err
	var op *net.OpError
	switch {
	case errors.Is(err, kerr.NotCoordinator), errors.Is(err, kerr.CoordinatorNotAvailable), errors.Is(err, kerr.CoordinatorLoadInProgress):
		return fmt.Sprintf("coordinator for group %s is moving (%s)", wt.o.Group, errText(err))
	case errors.As(err, &op) && op.Addr != nil:
		return fmt.Sprintf("coordinator for group %s at %s unreachable: %s", wt.o.Group, op.Addr, errText(err))
	}
	return wt.unknownReason("session lost: " + errText(err))
}

// ids joins node ids with commas.
func ids(ns []int32) string {
	ns = slices.Sorted(slices.Values(ns))
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(int(n))
	}
	return strings.Join(s, ",")
}

// RideThrough tells whether err, an error a poll of a group member
// returned, is one the member rides through: a lost group session that
// franz-go rejoins on its own, as Kafka's consumers do, such as a
// coordinator that moves, a broker that cannot be reached or a cluster
// without quorum. A session error that retrying cannot fix
// (authorization, an invalid group id, a full group, a protocol no member
// shares) and any other error are not.
func RideThrough(err error) bool {
	var gs *kgo.ErrGroupSession
	if !errors.As(err, &gs) {
		return false
	}
	for _, fatal := range []error{
		kerr.GroupAuthorizationFailed, kerr.TopicAuthorizationFailed, kerr.ClusterAuthorizationFailed,
		kerr.SaslAuthenticationFailed, kerr.InvalidGroupID, kerr.GroupMaxSizeReached,
		kerr.InconsistentGroupProtocol, kerr.UnsupportedAssignor, kerr.UnsupportedVersion,
		kerr.InvalidSessionTimeout, kerr.FencedInstanceID,
	} {
		if errors.Is(gs.Err, fatal) {
			return false
		}
	}
	return true
}
