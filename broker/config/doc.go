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
// The package is pure data and functions: it imports nothing from klog.
package config
