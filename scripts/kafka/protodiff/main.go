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
// normalised in diff.go), and so are clock readings (numbers of 13 digits
// or more) inside error messages. Error codes are compared like any field; error
// messages are listed apart and do not fail the run unless -messages.
//
// With -nodes 3 it runs the cluster corpus instead (cases_cluster.go):
// replication answers of klog up -n 3 and kafka.sh start --nodes 3, whose
// bootstrap lists -klog and -kafka then take. It kills a follower on each
// side and starts it again, with the commands -klog-node and -kafka-node
// name (each is run with "kill ID" or "start ID" appended):
//
//	go run ./scripts/kafka/protodiff -nodes 3 -klog "$KLOG_BROKERS" -kafka "$BROKERS" \
//		-klog-node "klog node --data-dir DIR" -kafka-node "scripts/kafka/kafka.sh node --dir KAFKA_RUN_DIR"
//
// With -authz it runs the authorization corpus instead (cases_authz.go):
// both brokers run with authz.properties (the StandardAuthorizer, PLAIN
// users admin and alice on a SASL_PLAINTEXT listener named SASL), whose
// addresses -klog-sasl and -kafka-sasl take (kafka.sh start --sasl
// authz.properties prints SASL_BROKERS; klog up -X for each line):
//
//	go run ./scripts/kafka/protodiff -authz -klog HOST:PORT -kafka HOST:PORT \
//		-klog-sasl HOST:PORT -kafka-sasl HOST:PORT
//
// It prints a table of mismatches (case, field path, klog value, kafka
// value) and a summary, and exits 1 on any mismatch not in the expected
// list (expected.go, each entry with its reason), 2 on a usage or setup
// error.
package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
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
	nodes := flag.Int("nodes", 1, "1: the single-node corpus; 3: the cluster corpus, against 3-node clusters")
	klogNode := flag.String("klog-node", "", `with -nodes 3, the command that kills or starts one klog node, run with "kill ID" or "start ID" appended (e.g. "klog node --data-dir DIR")`)
	kafkaNode := flag.String("kafka-node", "", `with -nodes 3, the same for Kafka (e.g. "scripts/kafka/kafka.sh node --dir DIR")`)
	authz := flag.Bool("authz", false, "run the authorization corpus, as User:alice on the SASL listeners of -klog-sasl and -kafka-sasl (brokers configured with authz.properties)")
	klogSASL := flag.String("klog-sasl", "", "with -authz, klog's SASL_PLAINTEXT listener host:port")
	kafkaSASL := flag.String("kafka-sasl", "", "with -authz, the reference broker's SASL_PLAINTEXT listener host:port")
	flag.Parse()
	if *nodes != 1 && *nodes != 3 {
		fmt.Fprintln(os.Stderr, "protodiff: -nodes must be 1 or 3")
		return 2
	}
	entries := corpusFor(*nodes, *destructive, *authz)
	if *list {
		for _, c := range entries {
			if c.step {
				fmt.Println("(step) " + c.name)
			} else {
				fmt.Println(c.name)
			}
		}
		return 0
	}
	if *klogAddr == "" || *kafkaAddr == "" || flag.NArg() > 0 || (*nodes == 3 && (*klogNode == "" || *kafkaNode == "")) ||
		(*authz && (*klogSASL == "" || *kafkaSASL == "" || *nodes != 1)) {
		fmt.Fprintln(os.Stderr, "usage: protodiff -klog HOST:PORT -kafka HOST:PORT [-case RE] [-messages] [-destructive] [-v]")
		fmt.Fprintln(os.Stderr, "       protodiff -nodes 3 -klog HOST:PORT,... -kafka HOST:PORT,... -klog-node CMD -kafka-node CMD [-case RE] [-messages] [-v]")
		fmt.Fprintln(os.Stderr, "       protodiff -authz -klog HOST:PORT -kafka HOST:PORT -klog-sasl HOST:PORT -kafka-sasl HOST:PORT [-case RE] [-messages] [-v]")
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
	klog.nodeCmd, kafka.nodeCmd = strings.Fields(*klogNode), strings.Fields(*kafkaNode)
	klog.saslAddr, kafka.saslAddr = *klogSASL, *kafkaSASL
	if *authz {
		if err := errors.Join(runBoth(klog, kafka, (*side).warmTransactions)); err != nil {
			fmt.Fprintf(os.Stderr, "protodiff: %v\n", err)
			return 2
		}
	}

	var results []result
	for _, c := range entries {
		if !c.step && filter != nil && !filter.MatchString(c.name) {
			continue
		}
		res := runCase(c.testCase, klog, kafka)
		if c.step {
			// A step is no case: it shows only when it failed.
			if res.setupErr != nil {
				results = append(results, res)
			}
			if *verbose {
				fmt.Fprintf(os.Stderr, "protodiff: %-40s step done (%v)\n", c.name, res.setupErr)
			}
			continue
		}
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

// corpusFor is the corpus of -nodes and -authz: the single-node cases,
// the cluster scenario with its steps, or the authorization cases.
func corpusFor(nodes int, destructive, authz bool) []clusterStep {
	if nodes == 3 {
		return clusterCorpus()
	}
	cases := corpus(destructive)
	if authz {
		cases = append(saslCases(), authzCases()...)
	}
	var out []clusterStep
	for _, c := range cases {
		out = append(out, clusterStep{testCase: c})
	}
	return out
}
