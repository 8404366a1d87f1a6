// Package klog is the root of klog's module: a Kafka-compatible event
// streaming broker in one binary (cmd/klog). It holds no code; its test
// enforces the direction of the dependencies between klog's packages,
// which DESIGN.md describes:
//
//   - store/ imports only store/, the standard library and its codecs'
//     modules (storage knows nothing of the node, the tools or the
//     cluster);
//   - broker/partition, broker/controller, broker/metadata and store/ never
//     use kerr: Kafka error codes belong to the request handlers, below
//     them errors are Go sentinels;
//   - nothing under broker/ imports tui, inspect, cmd, supervisor or
//     loadgen;
//   - broker/partition, broker/replica, broker/metadata and broker/config
//     import none of broker/group, broker/txn, broker/controller,
//     broker/coordinator and the broker package itself;
//   - the transport (broker/wire, broker/server) does not import the
//     broker package, whose handlers sit above it;
//   - tui/, inspect/, seed/ and loadgen/ depend on neither broker/ nor
//     store/, not even indirectly: they read a cluster through the Kafka
//     protocol and the admin HTTP API, like any other client; nor does
//     supervisor/, which runs nodes as processes;
//   - only broker/controller uses hashicorp/raft and its bbolt store, and
//     only broker/adminapi the Prometheus library.
//
// Each rule is checked against the real import graph and, with one
// forbidden import added, shown to catch it (imports_test.go).
package klog
