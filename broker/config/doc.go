// Package config owns klog's configuration definitions: every topic-level
// config with its broker-level default key, every broker-only config, their
// types, defaults and one-line docs, and the resolution rules that turn a
// topic's overrides plus the broker's static settings into effective values.
//
// Names, types and defaults are Kafka's, so tools that read or write configs
// (kafka-configs, kadm, kcat) see what they expect. Resolution follows one
// order: a topic override, then the broker's dynamic per-broker value
// (DYNAMIC_BROKER_CONFIG), then the dynamic cluster-wide default
// (DYNAMIC_DEFAULT_BROKER_CONFIG), then the broker's static value (given at
// start, e.g. -X log.retention.hours=1), then the default. Some topic
// configs have several broker keys in different units (retention.ms from
// log.retention.ms, log.retention.minutes or log.retention.hours); the
// first one set wins and its value is converted to the topic config's
// unit.
//
// Dynamic broker configs live in the metadata log (the controller commits
// them, as topic overrides, in one config record; every node's image has
// them): Broker.WithDynamic puts them over a node's static settings and
// returns a new Broker, which the node swaps in whole and with which it
// resolves its topics again, so a change applies live. Which broker
// configs are dynamic is Kafka's DynamicLogConfig list: the first broker
// key of every topic config (log.retention.ms, log.segment.bytes,
// log.cleanup.policy, min.insync.replicas, message.max.bytes,
// compression.type, log.flush.interval.ms, ...), and of the broker-only
// configs those Kafka reconfigures and klog reads at each use
// (max.connections, max.connections.per.ip, producer.id.expiration.ms).
// The other units (log.retention.hours) and every other broker-only config
// are read-only (Def.ReadOnly), and setting one is refused in Kafka's words
// (ValidateDynamicBroker). A name klog does not define is stored and
// described as Kafka does (of unknown type, so sensitive and read-only).
//
// Synonyms are listed in Kafka's order (ConfigHelper): every synonym's
// dynamic per-broker value, then every dynamic default, every static value
// and every default, starting at the first entry of the config itself (for
// a topic config, of its first broker key: a topic whose retention comes
// from log.retention.hours alone lists no synonym, as in Kafka). The
// default broker resource (the empty name) describes only the dynamic
// defaults that are set.
//
// Two views come out of resolution. By name (TopicValues, BrokerValues,
// TopicValue), with sources and synonyms, for DescribeConfigs and the admin
// APIs; and typed (Settings for the broker, Topic for a topic), Go values
// that request paths read instead of names. The typed view is bound to the
// names in one place (settings.go), and every binding is checked against
// the definitions when it is resolved: ParseBroker fails on a binding to an
// unknown name or to a config the field cannot hold, so a typo never reads
// as zero.
//
// The package is pure data and functions: it imports nothing from klog
// (kmsg only for the numbering of config sources and types).
package config
