// Package config owns klog's configuration definitions: every topic-level
// config with its broker-level default key, every broker-only config, their
// types, defaults and one-line docs, and the resolution rules that turn a
// topic's overrides plus the broker's static settings into effective values.
//
// Names, types and defaults are Kafka's, so tools that read or write configs
// (kafka-configs, kadm, kcat) see what they expect. Resolution follows one
// order: a topic override, then the broker's static value (given at start,
// e.g. -X log.retention.hours=1), then the default. Some topic configs have
// several broker keys in different units (retention.ms from log.retention.ms,
// log.retention.minutes or log.retention.hours); the first one set wins and
// its value is converted to the topic config's unit.
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
