package main

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/scripts/internal/klogproc"
	"github.com/klogdev/klog/scripts/internal/ledger"
)

// scenario is one run: a fresh node, a producer, faults, a read back.
type scenario struct {
	name       string
	bin        string
	fault      fault
	records    int
	partitions int32
	pause      time.Duration
	// opts start the node; topicConfigs are the topic's configs.
	opts         klogproc.Options
	topicConfigs map[string]*string
}

const topic = "chaos"

// run runs the scenario and returns its CHAOS line; an error means it
// could not run to the check.
func (s *scenario) run(ctx context.Context) (string, error) {
	start := time.Now()
	dir, done, err := workDir(s.name)
	if err != nil {
		return "", err
	}
	keep := true
	defer func() { done(keep) }()
	n, err := klogproc.Start(ctx, s.bin, dir, s.opts)
	if err != nil {
		return "", err
	}
	defer n.Stop()
	if err := s.createTopic(ctx, n.Addr()); err != nil {
		return "", err
	}

	led := ledger.New()
	p, err := startProducer(ctx, []string{n.Addr()}, s.partitions, 0, led)
	if err != nil {
		return "", err
	}
	count := faultsPerScenario[s.name]
	var inFlight []string // records sent and not yet answered at each fault
	for i := range count {
		// Each fault comes once a share of the records is acknowledged, so
		// records are in flight around it.
		at := (i + 1) * s.records / (count + 1)
		if err := s.waitAcked(ctx, led, p, at); err != nil {
			p.close()
			return "", fmt.Errorf("before fault %d: %w", i+1, err)
		}
		inFlight = append(inFlight, strconv.FormatInt(p.cl.BufferedProduceRecords(), 10))
		p.resume.fault()
		if err := s.fault(ctx, n, s); err != nil {
			p.close()
			return "", fmt.Errorf("fault %d: %w (%s)", i+1, err, n.LogTail())
		}
	}
	if err := s.waitAcked(ctx, led, p, s.records); err != nil {
		p.close()
		return "", fmt.Errorf("after the faults: %w", err)
	}
	if err := p.stop(ctx); err != nil {
		return "", err
	}
	reads, err := readBack(ctx, []string{n.Addr()}, s.partitions)
	if err != nil {
		return "", err
	}
	rep := led.Check(reads)
	verdict := "PASS"
	if !rep.OK() {
		verdict = "FAIL"
	}
	line := fmt.Sprintf("CHAOS %s %s %s, %s (%d faults with %s records in flight, %d records read, %d produce errors%s, %.1fs)",
		s.name, verdict, rep, p.resume.summary(), count, strings.Join(inFlight, "/"), rep.Read, p.failed.Load(), p.firstError(), time.Since(start).Seconds())
	for _, e := range rep.Examples {
		line += "\n  " + e
	}
	keep = !rep.OK()
	return line, nil
}

// workDir makes a fresh directory for scenario name; done removes it, or
// when keep is set (a failed scenario) keeps it and says where.
func workDir(name string) (dir string, done func(keep bool), err error) {
	dir, err = os.MkdirTemp("", "klog-chaos-")
	if err != nil {
		return "", nil, err
	}
	return dir, func(keep bool) {
		if keep {
			fmt.Fprintf(os.Stderr, "chaos: %s: its directory is kept in %s\n", name, dir)
		} else {
			os.RemoveAll(dir)
		}
	}, nil
}

func (s *scenario) createTopic(ctx context.Context, addr string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr))
	if err != nil {
		return err
	}
	defer cl.Close()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, s.partitions, 1, s.topicConfigs, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	return nil
}

// waitAcked waits until the ledger holds at least n acknowledgements.
func (s *scenario) waitAcked(ctx context.Context, led *ledger.Ledger, p *producer, n int) error {
	err := klogproc.WaitFor(ctx, func() (bool, error) { return led.Acked() >= n, nil })
	if err != nil {
		return fmt.Errorf("%d of %d records acknowledged: %w%s", led.Acked(), n, err, p.firstError())
	}
	return nil
}

// producer writes records numbered per partition, round robin, with an
// idempotent acks=all client seeded with seeds, until stopped, at most
// perSecond records a second (0: as fast as acknowledged); each
// acknowledgement goes to the ledger; extra are more client options.
type producer struct {
	cl     *kgo.Client
	done   chan struct{}
	quit   chan struct{}
	failed atomic.Int64
	mu     sync.Mutex
	first  error
	resume resumes
}

func startProducer(ctx context.Context, seeds []string, partitions int32, perSecond int, led *ledger.Ledger, extra ...kgo.Opt) (*producer, error) {
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seeds...), kgo.DefaultProduceTopic(topic),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MaxBufferedRecords(5000), kgo.ProducerLinger(2 * time.Millisecond),
		kgo.RetryBackoffFn(func(int) time.Duration { return 50 * time.Millisecond }),
		// kgo retries a REQUEST_TIMED_OUT produce on the same leader
		// without asking for metadata, and asks an isolated leader as
		// readily as any other node (its answer is stale, as Kafka's
		// would be). Metadata at least every second, which kgo takes
		// only with a leader epoch as new as the one it has, finds the
		// leader the other nodes elected.
		kgo.MetadataMinAge(250 * time.Millisecond), kgo.MetadataMaxAge(time.Second)}, extra...)...)
	if err != nil {
		return nil, err
	}
	p := &producer{cl: cl, done: make(chan struct{}), quit: make(chan struct{}), resume: resumes{partitions: int(partitions)}}
	go func() {
		defer close(p.done)
		seqs := make([]int64, partitions)
		// A rate is kept in steps of 10 ms, each allowed perSecond/100
		// records.
		var tick <-chan time.Time
		if perSecond > 0 {
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			tick = t.C
		}
		for i := 0; ; i++ {
			if tick != nil && i%max(perSecond/100, 1) == 0 {
				select {
				case <-p.quit:
					return
				case <-ctx.Done():
					return
				case <-tick:
				}
			}
			select {
			case <-p.quit:
				return
			case <-ctx.Done():
				return
			default:
			}
			part := int32(i) % partitions
			seq := seqs[part]
			seqs[part]++
			r := &kgo.Record{Partition: part, Value: []byte(strconv.FormatInt(seq, 10))}
			cl.Produce(ctx, r, func(r *kgo.Record, err error) {
				if err != nil {
					p.failed.Add(1)
					p.mu.Lock()
					if p.first == nil {
						p.first = err
					}
					p.mu.Unlock()
					return
				}
				led.Ack(r.Partition, seq, r.Offset)
				p.resume.acked(r.Partition)
			})
		}
	}()
	return p, nil
}

// stop ends producing and waits for every record sent to be answered.
func (p *producer) stop(ctx context.Context) error {
	close(p.quit)
	<-p.done
	defer p.cl.Close()
	if err := p.cl.Flush(ctx); err != nil {
		return fmt.Errorf("flush the producer: %w", err)
	}
	return nil
}

// close abandons the producer.
func (p *producer) close() {
	select {
	case <-p.quit:
	default:
		close(p.quit)
	}
	p.cl.Close()
	<-p.done
}

// firstError is ", first: ERR" for the first failed record, or "".
func (p *producer) firstError() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.first == nil {
		return ""
	}
	return ", first: " + p.first.Error()
}

// readBack reads every partition from its start to its end offset.
func readBack(ctx context.Context, seeds []string, partitions int32) ([]ledger.Read, error) {
	admCl, err := kgo.NewClient(kgo.SeedBrokers(seeds...))
	if err != nil {
		return nil, err
	}
	ends, err := kadm.NewClient(admCl).ListEndOffsets(ctx, topic)
	admCl.Close()
	if err != nil {
		return nil, fmt.Errorf("end offsets: %w", err)
	}
	want := make(map[int32]int64)
	starts := make(map[int32]kgo.Offset)
	ends.Each(func(o kadm.ListedOffset) {
		want[o.Partition] = o.Offset
		starts[o.Partition] = kgo.NewOffset().AtStart()
	})
	if len(want) != int(partitions) {
		return nil, fmt.Errorf("end offsets of %d partitions, want %d", len(want), partitions)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(seeds...), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: starts}))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	var reads []ledger.Read
	next := make(map[int32]int64)
	caughtUp := func() bool {
		for p, end := range want {
			if next[p] < end {
				return false
			}
		}
		return true
	}
	for !caughtUp() {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read back: %w (at %v of %v)", err, next, want)
		}
		var ferr error
		fs.EachError(func(_ string, _ int32, err error) { ferr = err })
		if ferr != nil {
			return nil, fmt.Errorf("read back: %w", ferr)
		}
		fs.EachRecord(func(r *kgo.Record) {
			seq, err := strconv.ParseInt(string(r.Value), 10, 64)
			if err != nil {
				seq = -1 // not a record of this producer: reported as lost elsewhere
			}
			reads = append(reads, ledger.Read{Partition: r.Partition, Seq: seq, Offset: r.Offset})
			next[r.Partition] = r.Offset + 1
		})
	}
	return reads, nil
}
