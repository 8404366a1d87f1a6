package main

import (
	"context"
	"sync"
	"time"
)

// probes is the tier, in the order of issue 9's findings.
var probes = []probe{
	{name: "slowloris", item: "1: frames that stall or claim 100 MiB; idle; max.connections",
		opts: nodeOpts{configs: memoryConfigs}, run: func(p *run) {
			p.during(func(ctx context.Context) { slowloris(ctx, p, true) })
			maxConns(p)
			p.checkRSS()
		}},
	{name: "amplification", item: "2: 1 MiB requests repeating one item",
		run: func(p *run) {
			p.during(func(ctx context.Context) { amplification(ctx, p, true) })
			p.checkRSS()
		}},
	{name: "slow-readers", item: "3: pipelined fetches never read; disconnected long polls",
		run: func(p *run) {
			p.during(func(ctx context.Context) { slowReaders(ctx, p, true) })
			p.checkRSS()
		}},
	{name: "producer-state", item: "4: 600,000 invented producer ids, restart, expiry",
		run: producerState},
	// Creating 6,000 partitions and recovering them after a SIGKILL each
	// take half a minute alone and 50 to 70 s or more each at load 15-20
	// (an under-load run ran out of 90 s in the restart): the bound leaves
	// room for both under load.
	{name: "descriptors", item: "5: 6,000 partitions under ulimit -n 512, restart",
		opts: nodeOpts{ulimitN: fdLimit}, run: descriptors, timeout: 330 * time.Second},
	{name: "write-txn-markers", item: "6: client-sent WriteTxnMarkers for another's transaction",
		run: writeTxnMarkers},
	{name: "txn-batch-no-id", item: "7: transactional batch without transactional id",
		run: txnBatch},
	{name: "txn-offset-ghost", item: "8: TxnOffsetCommit from an invented producer",
		run: txnOffset},
	{name: "internal-topic", item: "9: client CreateTopics of internal topics",
		run: internalTopic},
	{name: "garbage-batches", item: "10: garbage and lying compressed batches, bombs",
		run: func(p *run) {
			p.during(func(ctx context.Context) { garbage(ctx, p, true) })
			p.checkRSS()
		}},
	{name: "fetch-max-bytes", item: "11: one fetch fills across partitions",
		run: fetchMax},
	{name: "log-flood", item: "12: bad requests do not flood the log",
		run: logFlood},
	{name: "decode-bound", item: "issue 26.4: 20 x 10 MiB array-heavy requests of each API",
		run: decodeProbe},
	{name: "sasl-logins", item: "issue 30: bad SASL logins, a login flood beside a SCRAM producer",
		opts: nodeOpts{secure: true}, run: func(p *run) {
			p.during(func(context.Context) { saslLogins(p) })
		}},
	{name: "tls-handshakes", item: "issue 30: TLS handshakes that never finish",
		opts: nodeOpts{secure: true}, run: func(p *run) {
			p.during(func(context.Context) { tlsHandshakes(p) })
		}},
	{name: "all-memory", item: "1-3, 10 together: peak RSS under 512 MB, client served",
		opts: nodeOpts{configs: memoryConfigs}, run: func(p *run) {
			p.during(func(ctx context.Context) {
				var wg sync.WaitGroup
				wg.Go(func() { slowloris(ctx, p, false) })
				wg.Go(func() { amplification(ctx, p, false) })
				wg.Go(func() { slowReaders(ctx, p, false) })
				wg.Go(func() { garbage(ctx, p, false) })
				wg.Wait()
			})
			p.checkRSS()
		}},
}
