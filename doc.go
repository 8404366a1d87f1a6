// Package klog is the root of klog's module: a Kafka-compatible event
// streaming broker in one binary (cmd/klog). It holds no code; its test
// enforces the direction of the dependencies between klog's packages,
// which DESIGN.md describes:
//
//   - store/ never imports broker/ (storage knows nothing of the node);
//   - broker/partition, broker/controller, broker/metadata and store/ never
//     use kerr: Kafka error codes belong to the request handlers, below
//     them errors are Go sentinels;
//   - tui/ and inspect/ depend on neither broker/ nor store/, not even
//     indirectly: they read a cluster through the Kafka protocol and the
//     admin HTTP API, like any other client;
//   - only broker/controller uses hashicorp/raft and its bbolt store.
package klog
