package config

import "errors"

// ErrUnknownConfig is returned when a config name is not defined for the
// entity it is set on (a topic or a broker).
var ErrUnknownConfig = errors.New("unknown config")

// ErrInvalidValue is returned when a config value cannot be parsed as the
// config's type or is outside its valid range or set of values.
var ErrInvalidValue = errors.New("invalid config value")
