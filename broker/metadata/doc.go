// Package metadata owns klog's cluster metadata: an immutable Image of the
// cluster (brokers, topics, partitions with replicas, leaders, ISR and
// epochs, topic config overrides, dynamic broker configs, client metrics
// resources, producer-ID allocation, users' SCRAM credentials, delegation
// tokens, client quotas, finalized feature levels) and the records that
// change it. Image.Apply is the metadata state machine: it is
// deterministic, never mutates its receiver, and returns a new image that
// shares every unchanged map, topic and slice with the old one.
//
// # Record encoding
//
// A record is one JSON object, the envelope:
//
//	{"v":1,"type":"CreateTopic","data":{...}}
//
// v is the version of the payload layout of that record type, type names the
// record type, and data is the payload. Decode rejects unknown types,
// versions newer than it knows, unknown fields and trailing bytes; a change
// to a payload's fields bumps its version, and a newer node decodes every
// older version. Topic IDs are written as 22-character unpadded URL-safe
// base64, the form clients and tools show.
//
// JSON because metadata is small and rarely written (a record per admin
// operation), so readability of the Raft log and snapshots when debugging
// matters more than bytes, and because adding a field needs no new codec.
// The snapshot of an image (EncodeImage) uses the same envelope with type
// "Image".
//
// # Record kinds
//
// Each kind of record is one type (record_cluster.go, record_topic.go,
// record_partition.go, record_scram.go, record_token.go, record_quota.go,
// record_feature.go) that holds its payload, names itself in the
// encoding (Type) and applies itself to an image (apply); recordKinds in
// record.go lists them for Decode. A new kind is a new type and a row
// there; nothing else switches on the kind.
//
// The package imports nothing from klog; it must never import the
// controller, Raft or storage.
package metadata
