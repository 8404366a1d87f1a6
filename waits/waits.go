// Package waits says what a klog client (klog produce, klog consume) is
// waiting for and why, once a wait passes Threshold: records a partition
// has not acknowledged, a group session that is lost, a broker that cannot
// be reached.
//
// It learns what the client waits for from franz-go's hooks (records
// buffered, partitioned and finished; connections and requests that
// failed; group sessions that broke) and, while records wait, from a
// bounded look at the cluster's metadata (one Metadata request at a time,
// each bounded by lookTimeout, and one DescribeConfigs per topic for
// min.insync.replicas), which names the leader's state. It never reads
// franz-go's log lines.
package waits

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Threshold is how long a wait lasts before it is reported.
const Threshold = 2 * time.Second

// maxRepeat bounds the time between two reports of a wait that lasts: a
// wait is reported when it passes Threshold, then each time its length
// doubles, and at least every maxRepeat.
const maxRepeat = 15 * time.Second

// maxLines bounds the lines of one report; the rest are counted.
const maxLines = 5

// tick is how often the watcher looks at what waits.
const tick = 250 * time.Millisecond

// Options configure a Watcher.
type Options struct {
	// Group is the consumer group the client is a member of, if any.
	Group string
	// AcksAll tells that the producer asks for acks from every in-sync
	// replica, so min.insync.replicas matters.
	AcksAll bool
	// Brokers reports brokers that stay unreachable as waits of their
	// own; a producer leaves them out, its partitions' waits name them.
	Brokers bool
	// GiveUp, when positive, is how long records may wait on a
	// partition without any being delivered before OnGiveUp is called,
	// once.
	GiveUp   time.Duration
	OnGiveUp func()
}

// Watcher follows one franz-go client and writes what it waits for to its
// writer, one line per wait ("klog: waiting 2.1s for orders/0 (1 record):
// no leader"), and when a reported wait ends. Opts gives it the client's
// events; Run (or Start) reports.
type Watcher struct {
	w   io.Writer
	o   Options
	now func() time.Time

	// What the hooks count, by topic, and the clock they read, in
	// milliseconds after epoch.
	topics    atomic.Pointer[map[string]*topicWait]
	lastTopic atomic.Pointer[topicWait]
	epoch     time.Time
	clock     atomic.Int64

	mu        sync.Mutex
	brokers   map[string]*brokerWait // by host:port
	group     groupWait
	look      look
	answering int32                     // the node id of a broker that answered lately, -1 if none
	minISR    map[string]int            // min.insync.replicas by topic
	reported  map[string]time.Duration  // wait key → elapsed at its last report
	reasons   map[topicPartition]string // the last reason reported for each partition
	gaveUp    bool
}

// topicPartition names a partition; a partition of -1 holds the records
// of a topic not yet given a partition.
type topicPartition struct {
	topic     string
	partition int32
}

func (tp topicPartition) String() string {
	if tp.partition < 0 {
		return tp.topic
	}
	return fmt.Sprintf("%s/%d", tp.topic, tp.partition)
}

// brokerWait is a broker whose connections or requests fail: since the
// first failure after the last success.
type brokerWait struct {
	since, last time.Time
	err         error
	reported    bool
}

// groupWait is a lost group session: since the first error after the last
// assignment.
type groupWait struct {
	since    time.Time
	err      error
	reported bool
}

// New returns a Watcher writing to w.
func New(w io.Writer, o Options) *Watcher {
	wt := &Watcher{
		w:         w,
		o:         o,
		now:       time.Now,
		epoch:     time.Now(),
		brokers:   make(map[string]*brokerWait),
		minISR:    make(map[string]int),
		reported:  make(map[string]time.Duration),
		reasons:   make(map[topicPartition]string),
		answering: -1,
	}
	wt.topics.Store(new(map[string]*topicWait))
	return wt
}

// Opts are the client options the Watcher needs: its hooks and, for a
// group member, the callback that tells a session is back.
func (wt *Watcher) Opts() []kgo.Opt {
	opts := []kgo.Opt{kgo.WithHooks(hooks{wt})}
	if wt.o.Group != "" {
		opts = append(opts, kgo.OnPartitionsAssigned(func(context.Context, *kgo.Client, map[string][]int32) { wt.assigned() }))
	}
	return opts
}

// Run reports waits until ctx ends, looking at cl's cluster when records
// wait.
func (wt *Watcher) Run(ctx context.Context, cl *kgo.Client) {
	t := time.NewTicker(clockTick)
	defer t.Stop()
	lk := newLooker(cl)
	wt.setClock(wt.now())
	for i := 1; ; i++ {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if i%int(tick/clockTick) != 0 {
			wt.setClock(wt.now())
			continue
		}
		if topics := wt.report(); len(topics) > 0 {
			lk.start(ctx, wt, topics)
		}
	}
}

// Start runs Run in a goroutine of its own; stop ends it and returns once
// it has ended, so nothing is written after stop.
func (wt *Watcher) Start(ctx context.Context, cl *kgo.Client) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		wt.Run(ctx, cl)
	}()
	return func() { cancel(); <-done }
}

// Reason says why records of a partition (-1: of the topic, not yet
// partitioned) waited when it was last reported, "" if it never was.
func (wt *Watcher) Reason(topic string, partition int32) string {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	return wt.reasons[topicPartition{topic, partition}]
}

// report writes the waits due a report and the ends of reported waits,
// gives up when a partition waited past GiveUp, and returns the topics
// whose waiting records want a look at the metadata.
func (wt *Watcher) report() (lookTopics []string) {
	wt.mu.Lock()
	defer wt.mu.Unlock()
	now := wt.now()
	wt.setClock(now)
	var b strings.Builder
	waits := wt.waits(now)
	lines := 0
	seen := make(map[string]bool)
	for _, w := range waits {
		seen[w.key] = true
		last, ok := wt.reported[w.key]
		due := !ok || w.elapsed >= min(2*last, last+maxRepeat)
		if !due {
			continue
		}
		wt.reported[w.key] = w.elapsed
		if lines++; lines <= maxLines && w.broker {
			fmt.Fprintf(&b, "klog: %s unreachable for %s: %s\n", w.what, round(w.elapsed), w.why)
		} else if lines <= maxLines {
			fmt.Fprintf(&b, "klog: waiting %s for %s: %s\n", round(w.elapsed), w.what, w.why)
		}
	}
	if lines > maxLines {
		fmt.Fprintf(&b, "klog: ... and %d more waits\n", lines-maxLines)
	}
	for k := range wt.reported {
		if !seen[k] {
			delete(wt.reported, k)
		}
	}
	if b.Len() > 0 {
		_, _ = io.WriteString(wt.w, b.String())
	}
	topics := make(map[string]bool)
	wt.eachPart(func(tp topicPartition, pw *partWait) {
		pending, since := pw.load()
		waited := now.Sub(wt.at(since))
		if pending > 0 && waited >= Threshold {
			topics[tp.topic] = true
		}
		if pending > 0 && wt.o.GiveUp > 0 && waited >= wt.o.GiveUp && !wt.gaveUp {
			wt.gaveUp = true
			if wt.o.OnGiveUp != nil {
				go wt.o.OnGiveUp()
			}
		}
	})
	for t := range topics {
		lookTopics = append(lookTopics, t)
	}
	sort.Strings(lookTopics)
	return lookTopics
}

// wait is one line of a report.
type wait struct {
	key     string // what makes it the same wait from one report to the next
	what    string // what waits
	why     string
	elapsed time.Duration
	broker  bool // a broker that cannot be reached, said so
}

// waits returns what waits past Threshold now: partitions sharing a reason
// in one wait, the group's session, and unreachable brokers.
func (wt *Watcher) waits(now time.Time) []wait {
	byWhy := make(map[string]*wait)
	counts := make(map[string]int)
	var names = make(map[string][]string)
	wt.eachPart(func(tp topicPartition, pw *partWait) {
		// The first report waits for a look at the metadata begun
		// once the wait passed Threshold, for at most lookTimeout.
		pending, ms := pw.load()
		since := wt.at(ms)
		waited := now.Sub(since)
		looked := wt.look.at.After(since.Add(Threshold)) || waited >= Threshold+lookTimeout
		if pending == 0 || waited < Threshold || (!pw.reported.Load() && !looked) {
			return
		}
		pw.reported.Store(true)
		why := wt.partReason(tp)
		wt.reasons[tp] = why
		w := byWhy[why]
		if w == nil {
			w = &wait{key: "partitions: " + why, why: why}
			byWhy[why] = w
		}
		w.elapsed = max(w.elapsed, waited)
		counts[why] += pending
		names[why] = append(names[why], tp.String())
	})
	var out []wait
	for why, w := range byWhy {
		w.what = listNames(names[why]) + fmt.Sprintf(" (%d %s)", counts[why], plural(counts[why], "record"))
		out = append(out, *w)
	}
	if g := &wt.group; !g.since.IsZero() && now.Sub(g.since) >= Threshold {
		g.reported = true
		out = append(out, wait{key: "group", what: "group " + wt.o.Group, why: wt.groupReason(), elapsed: now.Sub(g.since)})
	}
	if wt.o.Brokers {
		for addr, bw := range wt.brokers {
			// A broker no longer dialled is no longer waited for.
			if now.Sub(bw.since) < Threshold || now.Sub(bw.last) > maxRepeat {
				continue
			}
			bw.reported = true
			out = append(out, wait{key: "broker " + addr, what: "broker " + addr, why: errText(bw.err), elapsed: now.Sub(bw.since), broker: true})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}

// listNames joins sorted names, at most four of them.
func listNames(names []string) string {
	sort.Strings(names)
	if len(names) > 4 {
		return strings.Join(names[:4], ", ") + fmt.Sprintf(" and %d more", len(names)-4)
	}
	return strings.Join(names, ", ")
}

func plural(n int, s string) string {
	if n == 1 {
		return s
	}
	return s + "s"
}

// round shows a duration in seconds to a tenth: "2.0s".
func round(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }

// ended writes that a reported wait ended, after waited.
func (wt *Watcher) ended(what string, waited time.Duration) {
	fmt.Fprintf(wt.w, "klog: %s after %s\n", what, round(waited))
}

// errText is the short form of a client error: the system call's error
// ("connection refused"), "timed out", or the Kafka error's name.
func errText(err error) string {
	var errno syscall.Errno
	var ke *kerr.Error
	var ne net.Error
	switch {
	case err == nil:
		return "no answer"
	case errors.As(err, &ke):
		return ke.Message
	case errors.As(err, &errno):
		return errno.Error()
	case errors.As(err, &ne) && ne.Timeout():
		return "timed out"
	}
	return err.Error()
}
