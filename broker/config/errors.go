package config

import "errors"

// ErrUnknownConfig is returned when a config name is not defined for the
// entity it is set on (a topic or a broker).
var ErrUnknownConfig = errors.New("unknown config")

// ErrInvalidValue is returned when a config value cannot be parsed as the
// config's type or is outside its valid range or set of values.
var ErrInvalidValue = errors.New("invalid config value")

// ErrBinding is returned when a typed settings field is bound to a config
// it cannot hold: one of another type, in another unit, or without a value.
// It is a programming error, caught when the defaults are resolved.
var ErrBinding = errors.New("config bound to a field that cannot hold it")

// ErrReadOnly is returned when a broker config that cannot change while
// the broker runs is set dynamically.
var ErrReadOnly = errors.New("read-only config")

// ErrInvalidSubscription is returned for a client metrics resource
// (subscription) Kafka refuses as a bad request rather than a bad value:
// an empty name, a config name it does not define, an interval outside
// its range.
var ErrInvalidSubscription = errors.New("invalid client metrics subscription")
