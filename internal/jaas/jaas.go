// Package jaas reads one login module entry of a Kafka sasl.jaas.config
// value, for klog's listeners (the broker's PLAIN users, OAUTHBEARER
// options) and for klog as a client (SCRAM and PLAIN credentials):
//
//	org.apache.kafka.common.security.scram.ScramLoginModule required
//	    username="alice" password="secret";
//
// the module's name, a control flag, options name=value (values quoted,
// with backslash escapes, or bare words) and ';', which Kafka requires
// too.
package jaas

import (
	"errors"
	"fmt"
	"strings"
)

// Parse returns the login module of s and its options.
func Parse(s string) (module string, opts map[string]string, err error) {
	toks, err := tokens(s)
	if err != nil {
		return "", nil, err
	}
	if n := len(toks); n == 0 || toks[n-1] != ";" {
		return "", nil, errors.New("want `LoginModule required key=\"value\" ...;`: no ';' at the end")
	}
	toks = toks[:len(toks)-1]
	if len(toks) < 2 || toks[0] == "=" || toks[0] == ";" {
		return "", nil, errors.New("want `LoginModule required key=\"value\" ...;`")
	}
	switch toks[1] {
	case "required", "requisite", "sufficient", "optional":
	default:
		return "", nil, fmt.Errorf("%q is not a control flag (required, requisite, sufficient, optional)", toks[1])
	}
	opts = map[string]string{}
	rest := toks[2:]
	for i := 0; i < len(rest); i += 3 {
		if i+2 >= len(rest) || rest[i+1] != "=" || rest[i] == "=" || rest[i] == ";" || rest[i+2] == "=" || rest[i+2] == ";" {
			return "", nil, errors.New("options must be name=value")
		}
		opts[rest[i]] = strings.TrimPrefix(rest[i+2], "\x00")
	}
	return toks[0], opts, nil
}

// tokens splits s into words, '=', ';' and quoted values; a quoted
// value's token starts with NUL, so that no quoted value reads as '=' or
// ';'.
func tokens(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '=' || c == ';':
			toks = append(toks, string(c))
			i++
		case c == '"':
			var b strings.Builder
			b.WriteByte(0)
			for i++; ; i++ {
				if i >= len(s) {
					return nil, errors.New("unterminated quoted value")
				}
				if s[i] == '\\' && i+1 < len(s) {
					i++
				} else if s[i] == '"' {
					break
				}
				b.WriteByte(s[i])
			}
			toks = append(toks, b.String())
			i++
		default:
			j := i
			for j < len(s) && !strings.ContainsRune(" \t\r\n=;\"", rune(s[j])) {
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks, nil
}
