// Command protodiff sends the same corpus of Kafka requests to klog and to
// a reference broker (Apache Kafka 4.4, scripts/kafka/kafka.sh) and
// compares their responses field by field.
//
//	go run ./scripts/kafka/protodiff -klog HOST:PORT -kafka HOST:PORT
//
// Each case sets up its own state (topics, producers, groups named with
// the run's unique suffix) on both brokers identically, in parallel, then
// sends its requests over a hand-framed connection (scripts/internal/kwire:
// no client retries, sharding or rewriting) at one version both brokers
// serve. The responses are encoded to JSON and walked; ids, timestamps,
// node ids, hosts, ports and throttle times are normalised (see
// normalised in diff.go). Error codes are compared like any field; error
// messages are listed apart and do not fail the run unless -messages.
//
// It prints a table of mismatches (case, field path, klog value, kafka
// value) and a summary, and exits 1 on any mismatch not in the expected
// list (expected.go, each entry with its reason), 2 on a usage or setup
// error.
package main

import (
	"flag"
	"fmt"
	"os"
	"regexp"
	"time"
)

func main() {
	os.Exit(run())
}

func run() int {
	klogAddr := flag.String("klog", "", "klog's bootstrap address host:port (required)")
	kafkaAddr := flag.String("kafka", "", "the reference broker's address host:port (required)")
	only := flag.String("case", "", "run only the cases whose name matches this regular expression")
	messages := flag.Bool("messages", false, "fail on error message differences too")
	verbose := flag.Bool("v", false, "print every case on stderr with the versions it sent")
	dump := flag.Bool("dump", false, "with -v, also print both brokers' normalised responses of each case")
	list := flag.Bool("list", false, "list the cases and exit")
	destructive := flag.Bool("destructive", false, "also run the cases that delete internal topics (__consumer_offsets), last: for brokers used by nothing else")
	flag.Parse()
	if *list {
		for _, c := range corpus(*destructive) {
			fmt.Println(c.name)
		}
		return 0
	}
	if *klogAddr == "" || *kafkaAddr == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: protodiff -klog HOST:PORT -kafka HOST:PORT [-case RE] [-messages] [-destructive] [-v]")
		return 2
	}
	var filter *regexp.Regexp
	if *only != "" {
		var err error
		if filter, err = regexp.Compile(*only); err != nil {
			fmt.Fprintf(os.Stderr, "protodiff: -case: %v\n", err)
			return 2
		}
	}
	suffix := fmt.Sprintf("%x", time.Now().UnixNano()%(1<<32))
	klog, kafka, err := connectBoth(*klogAddr, *kafkaAddr, suffix)
	if err != nil {
		fmt.Fprintf(os.Stderr, "protodiff: %v\n", err)
		return 2
	}
	defer klog.close()
	defer kafka.close()

	var results []result
	for _, c := range corpus(*destructive) {
		if filter != nil && !filter.MatchString(c.name) {
			continue
		}
		res := runCase(c, klog, kafka)
		if *verbose {
			fmt.Fprintf(os.Stderr, "protodiff: %-40s %s %d field(s) differ\n", c.name, res.versions, len(res.diffs))
			if *dump {
				fmt.Fprintf(os.Stderr, "  klog:  %s\n  kafka: %s\n", res.klogTree, res.kafkaTree)
			}
		}
		results = append(results, res)
	}
	return report(os.Stdout, results, *messages)
}
