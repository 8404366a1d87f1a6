package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// rssBoundMB is the memory target: peak RSS of the node under
// every memory probe, alone or together.
const rssBoundMB = 512

// probe is one entry of the tier: the finding of issue 9 it checks, how
// its node starts, and the attack with its bounds.
type probe struct {
	name string
	item string // the issue 9 finding(s)
	opts nodeOpts
	run  func(p *run)
	// timeout bounds the whole probe, node start to stop; 0 is
	// probeTimeout. It only ends a stuck run: what a probe judges are
	// its own bounds.
	timeout time.Duration
}

// probeTimeout bounds a probe that sets no timeout of its own.
const probeTimeout = 90 * time.Second

// run is one probe being run: its node, its normal client and its report.
type run struct {
	ctx context.Context
	n   *node
	c   *canary

	mu struct {
		sync.Mutex
		fails   []string
		codes   []string
		details []string
	}
}

// failf records a bound that was not met.
func (p *run) failf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.fails = append(p.mu.fails, fmt.Sprintf(format, args...))
}

// notef records a figure for the detail field.
func (p *run) notef(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.details = append(p.mu.details, fmt.Sprintf(format, args...))
}

// code records the error code the node answered to what.
func (p *run) code(what string, code int16) {
	p.codeText(what, codeName(code))
}

// codeText records the node's answer to what when it is not one code.
func (p *run) codeText(what, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.mu.codes = append(p.mu.codes, what+"="+text)
}

// codeName is Kafka's name of an error code.
func codeName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	if err := kerr.ErrorForCode(code); err != nil {
		if ke, ok := err.(*kerr.Error); ok {
			return ke.Message
		}
		return err.Error()
	}
	return "NONE"
}

// during runs attack while the normal client keeps producing, and fails
// the probe if the client is not served: every produce must be
// acknowledged, and at least one happens while the attack runs.
func (p *run) during(attack func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(p.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		attack(ctx)
	}()
	served := 0
	for {
		if err := p.c.produce(p.ctx); err != nil {
			p.failf("normal client not served during the attack: %v", err)
		} else {
			served++
		}
		select {
		case <-done:
			cancel()
			if served == 0 {
				p.failf("no produce acknowledged during the attack")
			}
			return
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// runProbe starts a node for pr in a fresh directory under root, runs the
// attack, checks the node survived and served, and returns the PROBE line.
func runProbe(ctx context.Context, bin, root string, pr probe) (line string, pass bool) {
	start := time.Now()
	dir, err := os.MkdirTemp(root, pr.name+"-")
	if err != nil {
		return fmt.Sprintf("PROBE %s FAIL detail=%v", pr.name, err), false
	}
	timeout := pr.timeout
	if timeout == 0 {
		timeout = probeTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p := &run{ctx: ctx}
	n, err := startNode(ctx, bin, dir, pr.opts)
	p.n = n
	if err == nil {
		if p.c, err = newCanary(ctx, n); err == nil {
			err = p.c.produce(ctx)
		}
	}
	acked := "no"
	if err != nil {
		p.failf("node start: %v", err)
	} else {
		pr.run(p)
		switch {
		case n.Died():
			p.failf("node died: %s", n.LogTail())
		case !n.Alive():
			p.failf("node not running at the end")
		default:
			if err := p.c.produce(ctx); err != nil {
				p.failf("normal client not served after the attack: %v", err)
			}
			if err := p.c.verify(ctx); err != nil {
				p.failf("%v", err)
			} else {
				acked = "yes"
			}
		}
	}
	if n != nil {
		n.Stop()
	}
	var peak float64
	var fds int
	if n != nil {
		for _, s := range n.samplers {
			peak = max(peak, s.peakMB())
			fds = max(fds, s.peakFDs())
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	status := "PASS"
	if len(p.mu.fails) > 0 {
		status = "FAIL"
	} else {
		os.RemoveAll(dir) // a failed probe keeps its node's logs
	}
	codes := strings.Join(p.mu.codes, ",")
	if codes == "" {
		codes = "-"
	}
	detail := append(p.mu.fails, p.mu.details...)
	detail = append(detail, fmt.Sprintf("took %.1fs", time.Since(start).Seconds()))
	if status == "FAIL" {
		detail = append(detail, "logs "+dir)
	}
	return fmt.Sprintf("PROBE %s %s peak_rss=%.0fMB fds=%d codes=%s acked_survived=%s detail=%s",
		pr.name, status, peak, fds, codes, acked, strings.Join(detail, "; ")), status == "PASS"
}

// checkRSS fails the probe if the node's peak RSS passed rssBoundMB.
func (p *run) checkRSS() {
	if mb := p.n.sampler().peakMB(); mb >= rssBoundMB {
		p.failf("peak RSS %.0f MB, bound %d MB", mb, rssBoundMB)
	}
}
