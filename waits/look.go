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
	"github.com/twmb/franz-go/pkg/kmsg"
)

// lookTimeout bounds one look at the metadata; lookEvery is the least time
// between the starts of two looks.
const (
	lookTimeout = 2 * time.Second
	lookEvery   = 2 * time.Second
)

// look is what the last look at the metadata saw.
type look struct {
	at        time.Time
	err       error            // the Metadata request failed
	brokers   map[int32]string // node id → host:port
	topicErrs map[string]error // the topics listed, with their errors
	parts     map[topicPartition]partState
}

// partState is a partition as the metadata shows it.
type partState struct {
	leader int32
	isr    []int32
	err    error
}

// looker runs the looks at the metadata, one at a time.
type looker struct {
	cl   *kgo.Client
	busy chan struct{} // holds a token while a look runs
	last time.Time
}

func newLooker(cl *kgo.Client) *looker {
	return &looker{cl: cl, busy: make(chan struct{}, 1)}
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
	wt.mu.Lock()
	broker := wt.answering
	wt.mu.Unlock()
	mctx, cancel := context.WithTimeout(ctx, lookTimeout)
	l, err := lk.metadata(mctx, broker, topics)
	cancel()
	if ctx.Err() != nil {
		return
	}
	wt.mu.Lock()
	if err != nil && wt.look.err == nil && !wt.look.at.IsZero() {
		// A look that failed (its broker is down, say) keeps what
		// the last one saw: the partitions' state has no newer
		// source.
		l = wt.look
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
	rcs, err := kadm.NewClient(lk.cl).DescribeTopicConfigs(cctx, need...)
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

// metadata asks broker (any broker when it is negative) for the metadata
// of topics. It asks a broker rather than the client's metadata cache,
// which can be seconds old, and preferably one that answered lately:
// another may be down.
func (lk *looker) metadata(ctx context.Context, broker int32, topics []string) (look, error) {
	req := kmsg.NewPtrMetadataRequest()
	for _, t := range topics {
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(t)
		req.Topics = append(req.Topics, rt)
	}
	var r kmsg.Requestor = lk.cl
	if broker >= 0 {
		r = lk.cl.Broker(int(broker))
	}
	l := look{at: time.Now(), brokers: make(map[int32]string), topicErrs: make(map[string]error), parts: make(map[topicPartition]partState)}
	resp, err := req.RequestWith(ctx, r)
	if err != nil {
		l.err = err
		return l, err
	}
	for _, b := range resp.Brokers {
		l.brokers[b.NodeID] = net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port)))
	}
	for _, t := range resp.Topics {
		if t.Topic == nil {
			continue
		}
		l.topicErrs[*t.Topic] = kerr.ErrorForCode(t.ErrorCode)
		for _, p := range t.Partitions {
			l.parts[topicPartition{*t.Topic, p.Partition}] = partState{leader: p.Leader, isr: p.ISR, err: kerr.ErrorForCode(p.ErrorCode)}
		}
	}
	return l, nil
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
	terr, ok := l.topicErrs[tp.topic]
	switch {
	case !ok:
		return wt.unknownReason("looking at the metadata")
	case terr != nil:
		return fmt.Sprintf("topic %s: %s", tp.topic, errText(terr))
	case tp.partition < 0:
		return "the client has not loaded the partitions of " + tp.topic
	}
	p, ok := l.parts[tp]
	switch {
	case !ok:
		return "the metadata does not list it"
	case p.leader < 0:
		if p.err != nil {
			return fmt.Sprintf("no leader (%s)", errText(p.err))
		}
		return "no leader"
	case p.err != nil && !errors.Is(p.err, kerr.ReplicaNotAvailable):
		return errText(p.err)
	}
	addr := l.brokers[p.leader]
	if err := wt.unreachable(addr); err != nil {
		return fmt.Sprintf("leader %d at %s unreachable: %s", p.leader, addr, errText(err))
	}
	if !wt.o.AcksAll {
		return fmt.Sprintf("leader %d at %s has not acknowledged", p.leader, addr)
	}
	if n, ok := wt.minISR[tp.topic]; ok && len(p.isr) < n {
		return fmt.Sprintf("NOT_ENOUGH_REPLICAS (min.insync.replicas %d, in sync %d: %s)", n, len(p.isr), ids(p.isr))
	}
	var gone []string
	var why error
	for _, id := range p.isr {
		if err := wt.unreachable(l.brokers[id]); err != nil && id != p.leader {
			gone = append(gone, strconv.Itoa(int(id)))
			why = err
		}
	}
	if len(gone) > 0 {
		return fmt.Sprintf("leader %d waits for in-sync replicas %s (unreachable: %s)", p.leader, strings.Join(gone, ","), errText(why))
	}
	return fmt.Sprintf("leader %d at %s has not acknowledged (in sync %s)", p.leader, addr, ids(p.isr))
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
