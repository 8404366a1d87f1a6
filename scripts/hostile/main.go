// Command hostile is klog's hostile-client tier: one bounded probe for
// each finding of issue 9 (memory, descriptors, transactions a client can
// wedge, garbage accepted, log floods) and for issue 30's bad logins and
// stalled TLS handshakes, each against its own "klog up" process. A probe attacks with raw Kafka requests (kmsg-encoded, framed
// by hand), samples the node's VmRSS, VmHWM and open descriptors from
// /proc while it runs, checks that a normal franz-go client can produce
// (acks=all) and read back throughout, and prints one line:
//
//	PROBE <name> PASS|FAIL peak_rss=..MB fds=.. codes=.. acked_survived=yes|no detail=...
//
// A probe fails if its bound is not met or the node died. scripts/hostile/run.sh
// builds klog and runs the tier; scripts/test.sh runs it as its "hostile"
// stage.
//
//	go run ./scripts/hostile -klog PATH [-probe name,name] [-list]
//	go run ./scripts/hostile -bootstrap HOST:PORT [-pid PID]
//
// The second form runs the decode-bound attack against a broker it did
// not start (scripts/test.sh's reference stage: Kafka 4.4) and prints
// the same figures, its memory only when its pid is given.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"
)

func main() {
	bin := flag.String("klog", "", "klog binary to run (required)")
	only := flag.String("probe", "", "comma-separated probe names (default all)")
	list := flag.Bool("list", false, "list the probes and exit")
	bootstrap := flag.String("bootstrap", "", "run the decode-bound attack against this broker instead (the Kafka reference), reporting its bounds without enforcing them")
	pid := flag.Int("pid", 0, "with -bootstrap, the broker's process, whose memory is sampled")
	flag.Parse()
	if *bootstrap != "" {
		line, ok := decodeReference(context.Background(), *bootstrap, *pid)
		fmt.Println(line)
		if !ok {
			os.Exit(1)
		}
		return
	}
	os.Exit(run1(*bin, *only, *list))
}

func run1(bin, only string, list bool) int {
	if list {
		for _, p := range probes {
			fmt.Printf("%-14s %s\n", p.name, p.item)
		}
		return 0
	}
	if bin == "" {
		fmt.Fprintln(os.Stderr, "hostile: -klog PATH is required")
		return 2
	}
	selected := probes
	if only != "" {
		selected = nil
		for _, name := range strings.Split(only, ",") {
			i := slices.IndexFunc(probes, func(p probe) bool { return p.name == name })
			if i < 0 {
				fmt.Fprintf(os.Stderr, "hostile: %v: %s\n", errUnknownProbe, name)
				return 2
			}
			selected = append(selected, probes[i])
		}
	}
	root, err := os.MkdirTemp("", "klog-hostile-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile:", err)
		return 1
	}
	start := time.Now()
	failed := 0
	for _, pr := range selected {
		line, pass := runProbe(context.Background(), bin, root, pr)
		fmt.Println(line)
		if !pass {
			failed++
		}
	}
	os.Remove(root) // empty unless a failed probe kept its logs
	fmt.Printf("hostile: %d probes, %d failed, %.0fs\n", len(selected), failed, time.Since(start).Seconds())
	if failed > 0 {
		return 1
	}
	return 0
}
