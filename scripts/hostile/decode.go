package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/scripts/internal/kwire"
)

// The decode attack (issue 26, point 4): requests made of the smallest
// elements their version allows, which decode into many times their size
// (a Metadata v1 request of 10 MiB naming 5 million empty topics decoded
// into about 700 MB). For each API, 20 connections send one such request
// at once, in rounds of at least decodeRound for at least decodeFor,
// while a normal client asks for metadata every 20 ms; first at 10 MiB,
// which a bounded broker can refuse outright, then at 1 MiB, which it may
// have to decode. The bounds hold for the first (issue 26's); the
// second's figures are reported.
var decodeSizes = []struct {
	size   int
	strict bool
}{{10 << 20, true}, {1 << 20, false}}

const (
	decodeConns     = 20
	decodeFor       = 2 * time.Second
	decodeRound     = 250 * time.Millisecond // the shortest round
	decodeAnswerBy  = 5 * time.Second        // each attack request answered or closed
	decodeP99Bound  = 100 * time.Millisecond // the normal client's metadata p99
	decodeTopic     = "hostile-decode"
	metadataEvery   = 20 * time.Millisecond
	metadataTimeout = 5 * time.Second
)

// decodeCases are the array-heavy requests, each of k of its smallest
// elements.
var decodeCases = []struct {
	name  string
	build func(k int) kmsg.Request
}{
	{"metadata", func(k int) kmsg.Request {
		req := kmsg.NewPtrMetadataRequest()
		req.SetVersion(1) // the issue's: 2 bytes an empty topic
		req.Topics = make([]kmsg.MetadataRequestTopic, k)
		for i := range req.Topics {
			req.Topics[i].Topic = kmsg.StringPtr("")
		}
		return req
	}},
	{"deletetopics", func(k int) kmsg.Request {
		req := kmsg.NewPtrDeleteTopicsRequest()
		req.SetVersion(4) // the last version of names only, 1 byte an empty one
		req.TimeoutMillis = 5000
		req.TopicNames = make([]string, k)
		return req
	}},
	{"listoffsets", func(k int) kmsg.Request {
		req := kmsg.NewPtrListOffsetsRequest()
		req.ReplicaID = -1
		req.Topics = make([]kmsg.ListOffsetsRequestTopic, k)
		return req
	}},
	{"offsetfetch", func(k int) kmsg.Request {
		req := kmsg.NewPtrOffsetFetchRequest()
		req.SetVersion(7) // one group, topics by name
		req.Group = "hostile-decode-group"
		req.Topics = make([]kmsg.OffsetFetchRequestTopic, k)
		return req
	}},
	{"describeconfigs", func(k int) kmsg.Request {
		req := kmsg.NewPtrDescribeConfigsRequest()
		req.Resources = make([]kmsg.DescribeConfigsRequestResource, k)
		for i := range req.Resources {
			req.Resources[i].ResourceType = kmsg.ConfigResourceTypeTopic
		}
		return req
	}},
	{"createtopics", func(k int) kmsg.Request {
		req := kmsg.NewPtrCreateTopicsRequest()
		req.TimeoutMillis = 5000
		req.Topics = make([]kmsg.CreateTopicsRequestTopic, k)
		for i := range req.Topics {
			req.Topics[i].NumPartitions, req.Topics[i].ReplicationFactor = -1, -1
		}
		return req
	}},
	{"describegroups", func(k int) kmsg.Request {
		req := kmsg.NewPtrDescribeGroupsRequest()
		req.Groups = make([]string, k)
		return req
	}},
	{"fetch", func(k int) kmsg.Request {
		req := kmsg.NewPtrFetchRequest()
		req.SetVersion(12) // the last version that names topics
		req.ReplicaID, req.MaxWaitMillis, req.MaxBytes = -1, 0, 1<<20
		t := kmsg.NewFetchRequestTopic()
		t.Topic = decodeTopic
		t.Partitions = make([]kmsg.FetchRequestTopicPartition, k)
		for i := range t.Partitions {
			p := &t.Partitions[i]
			p.Default()
			p.Partition, p.PartitionMaxBytes = int32(i), 1<<20
		}
		req.Topics = append(req.Topics, t)
		return req
	}},
}

// decodeTarget is the broker the attack runs against: its address, the
// versions it serves, and its memory when its process is known (nil
// when not: Kafka's JVM without its pid).
type decodeTarget struct {
	addr     string
	versions map[int16]int16
	sampler  *sampler
}

// decodeResult is what the attack measured.
type decodeResult struct {
	order    []string            // the attacks, API and size, in the order run
	outcomes map[string][]string // per attack, one per request: answered, closed, timeout
	slowest  map[string]time.Duration
	metadata []string // the normal client's latencies, per size
	fails    []string
	unmet    []string // bounds not met at a size whose bounds are only reported
}

// decodeAttack runs the attack against t, one API and size at a time.
// The requests of a size are encoded first, so that encoding them, which
// takes this process a while, does not count in the normal client's
// latencies.
func decodeAttack(ctx context.Context, t decodeTarget) *decodeResult {
	res := &decodeResult{outcomes: map[string][]string{}, slowest: map[string]time.Duration{}}
	for _, sz := range decodeSizes {
		unmet := func(format string, args ...any) {
			if sz.strict {
				res.fails = append(res.fails, fmt.Sprintf(format, args...))
			} else {
				res.unmet = append(res.unmet, fmt.Sprintf(format, args...))
			}
		}
		type attack struct {
			name  string
			frame []byte
		}
		var attacks []attack
		for _, c := range decodeCases {
			name := fmt.Sprintf("%s-%dm", c.name, sz.size>>20)
			frame, err := encodeCase(t, sz.size, c.build)
			if err != nil {
				res.fails = append(res.fails, fmt.Sprintf("%s: %v", name, err))
				continue
			}
			attacks = append(attacks, attack{name, frame})
		}
		runtime.GC()
		sctx, cancel := context.WithCancel(ctx)
		var lat []time.Duration
		var failed int
		var wg sync.WaitGroup
		wg.Go(func() { lat, failed = metadataLatencies(sctx, t) })
		for _, a := range attacks {
			res.order = append(res.order, a.name)
			for start := time.Now(); time.Since(start) < decodeFor && ctx.Err() == nil; {
				round := time.After(decodeRound)
				outs, slowest := sendAll(t, a.frame)
				<-round
				res.outcomes[a.name] = append(res.outcomes[a.name], outs...)
				res.slowest[a.name] = max(res.slowest[a.name], slowest)
			}
			if s := res.slowest[a.name]; s > decodeAnswerBy {
				unmet("%s: slowest answer or close after %.1fs, bound %v", a.name, s.Seconds(), decodeAnswerBy)
			}
		}
		cancel()
		wg.Wait()
		var p99, worst time.Duration
		if len(lat) > 0 {
			slices.Sort(lat)
			p99, worst = lat[(len(lat)*99)/100], lat[len(lat)-1]
		}
		res.metadata = append(res.metadata, fmt.Sprintf("normal metadata during %d MiB: p99 %dms max %dms of %d, %d failed",
			sz.size>>20, p99.Milliseconds(), worst.Milliseconds(), len(lat), failed))
		if p99 > decodeP99Bound {
			unmet("normal metadata p99 %v during %d MiB, bound %v", p99, sz.size>>20, decodeP99Bound)
		}
		if failed > 0 {
			unmet("%d normal metadata requests failed during %d MiB", failed, sz.size>>20)
		}
	}
	return res
}

// encodeCase frames the request build makes of about size bytes, at the
// version t will be sent.
func encodeCase(t decodeTarget, size int, build func(k int) kmsg.Request) ([]byte, error) {
	req, err := fitTo(t.versions, size, build)
	if err != nil {
		return nil, err
	}
	r, err := kwire.Dial(t.addr, "hostile", t.versions)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return r.Encode(req)
}

// sendAll sends frame on decodeConns connections at once and returns,
// for each, whether it was answered, closed or neither within twice
// decodeAnswerBy, and the slowest of those that ended.
func sendAll(t decodeTarget, frame []byte) (outcomes []string, slowest time.Duration) {
	var mu sync.Mutex
	var wg sync.WaitGroup
	for range decodeConns {
		wg.Go(func() {
			start := time.Now()
			out := sendOne(t, frame)
			took := time.Since(start)
			if out == "timeout" {
				took = 2 * decodeAnswerBy
			}
			mu.Lock()
			defer mu.Unlock()
			outcomes = append(outcomes, out)
			slowest = max(slowest, took)
		})
	}
	wg.Wait()
	sort.Strings(outcomes)
	return outcomes, slowest
}

// sendOne sends frame on a connection of its own and waits for an answer
// (a response frame, not decoded) or the connection's close.
func sendOne(t decodeTarget, frame []byte) string {
	c, err := net.DialTimeout("tcp", t.addr, decodeAnswerBy)
	if err != nil {
		return "dial-failed"
	}
	defer c.Close()
	// The broker may stop reading (its request memory is taken) or close
	// before the whole request is in: the answer is read meanwhile.
	go func() {
		_ = c.SetWriteDeadline(time.Now().Add(2 * decodeAnswerBy))
		_, _ = c.Write(frame)
	}()
	_ = c.SetReadDeadline(time.Now().Add(2 * decodeAnswerBy))
	var size [4]byte
	_, err = io.ReadFull(c, size[:])
	if err == nil {
		_, err = io.CopyN(io.Discard, c, int64(binary.BigEndian.Uint32(size[:])))
	}
	var ne net.Error
	switch {
	case err == nil:
		return "answered"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "closed"
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	default:
		return "error"
	}
}

// metadataLatencies asks t for the metadata of one topic every
// metadataEvery until ctx is done, on one connection (a new one after a
// failure), and returns each request's round trip and how many failed.
func metadataLatencies(ctx context.Context, t decodeTarget) (lat []time.Duration, failed int) {
	var r *kwire.Conn
	defer func() {
		if r != nil {
			r.Close()
		}
	}()
	tick := time.NewTicker(metadataEvery)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return lat, failed
		case <-tick.C:
		}
		if r == nil {
			var err error
			if r, err = kwire.Dial(t.addr, "hostile-normal", t.versions); err != nil {
				failed++
				continue
			}
		}
		req := kmsg.NewPtrMetadataRequest()
		rt := kmsg.NewMetadataRequestTopic()
		rt.Topic = kmsg.StringPtr(decodeTopic)
		req.Topics = append(req.Topics, rt)
		start := time.Now()
		if _, _, err := r.Do(req, metadataTimeout); err != nil {
			failed++
			lat = append(lat, time.Since(start))
			r.Close()
			r = nil
			continue
		}
		lat = append(lat, time.Since(start))
	}
}

// codes is the outcomes of each API, as the PROBE line's codes field.
func (res *decodeResult) codes() string {
	var parts []string
	for _, name := range res.order {
		outs := res.outcomes[name]
		count := map[string]int{}
		for _, o := range outs {
			count[o]++
		}
		var each []string
		for o, n := range count {
			each = append(each, fmt.Sprintf("%s*%d", o, n))
		}
		sort.Strings(each)
		parts = append(parts, name+"="+strings.Join(each, "+"))
	}
	return strings.Join(parts, ",")
}

// details is the attack's figures, as the PROBE line's detail field.
func (res *decodeResult) details() []string {
	var d []string
	var slow []string
	for _, name := range res.order {
		slow = append(slow, fmt.Sprintf("%s %.1fs", name, res.slowest[name].Seconds()))
	}
	d = append(d, "slowest answer or close: "+strings.Join(slow, " "))
	d = append(d, res.metadata...)
	for _, u := range res.unmet {
		d = append(d, "unmet (reported only): "+u)
	}
	return d
}

// decodeProbe is the decode attack as a probe of the tier, against its
// own klog node, with the normal client producing throughout.
func decodeProbe(p *run) {
	if err := createTopic(p.ctx, p.n, decodeTopic, 1, nil); err != nil {
		p.failf("%v", err)
		return
	}
	var res *decodeResult
	p.during(func(ctx context.Context) {
		res = decodeAttack(ctx, decodeTarget{addr: p.n.Addr(), versions: p.n.versions, sampler: p.n.sampler()})
	})
	for _, f := range res.fails {
		p.failf("%s", f)
	}
	p.codeText("decode", res.codes())
	for _, d := range res.details() {
		p.notef("%s", d)
	}
	p.checkRSS()
}

// decodeReference runs the decode attack against a broker this tier did
// not start (the Kafka 4.4 reference of scripts/test.sh), whose process
// is pid when known (0: its memory is not measured), and returns the
// same PROBE line as the tier's. Its bounds are reported, not enforced:
// the line says REFERENCE, and only an attack that could not run fails.
func decodeReference(ctx context.Context, addr string, pid int) (line string, ok bool) {
	start := time.Now()
	versions, err := kwire.Versions(addr, "hostile")
	if err != nil {
		return fmt.Sprintf("PROBE decode-bound REFERENCE addr=%s detail=%v", addr, err), false
	}
	t := decodeTarget{addr: addr, versions: versions}
	var exited chan struct{}
	if pid > 0 {
		exited = make(chan struct{})
		t.sampler = startSampler(pid, exited)
	}
	if err := createTopicAt(ctx, addr, decodeTopic, 1, nil); err != nil {
		return fmt.Sprintf("PROBE decode-bound REFERENCE addr=%s detail=%v", addr, err), false
	}
	res := decodeAttack(ctx, t)
	rss, fds := "n/a", "n/a"
	if t.sampler != nil {
		close(exited)
		rss = fmt.Sprintf("%.0fMB", t.sampler.peakMB())
		fds = fmt.Sprint(t.sampler.peakFDs())
	}
	status := "PASS"
	if len(res.fails) > 0 || (t.sampler != nil && t.sampler.peakMB() >= rssBoundMB) {
		status = "FAIL"
	}
	detail := append(res.fails, res.details()...)
	detail = append(detail, fmt.Sprintf("took %.1fs", time.Since(start).Seconds()))
	return fmt.Sprintf("PROBE decode-bound REFERENCE(%s) addr=%s peak_rss=%s fds=%s codes=%s detail=%s",
		status, addr, rss, fds, res.codes(), strings.Join(detail, "; ")), true
}
