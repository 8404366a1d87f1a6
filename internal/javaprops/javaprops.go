// Package javaprops reads Java's properties format, the one Kafka's
// config files use: client configs (--command-config) and the files of
// Kafka's FileConfigProvider.
package javaprops

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Property is one key and value of a Java properties file.
type Property struct {
	Key, Value string
}

// Parse reads text in Java's properties format: "#" and "!"
// comments, key=value, key:value or "key value", a trailing backslash
// continuing a line, and the escapes \t \n \r \f \\ and \uXXXX.
func Parse(text string) ([]Property, error) {
	var out []Property
	lines := strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeftFunc(lines[i], unicode.IsSpace)
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		no := i + 1
		for endsContinued(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeftFunc(lines[i], unicode.IsSpace)
		}
		k, v := splitProperty(line)
		key, err := unescape(k)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", no, err)
		}
		value, err := unescape(v)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", no, err)
		}
		out = append(out, Property{Key: key, Value: value})
	}
	return out, nil
}

// endsContinued reports whether line ends in an odd number of
// backslashes.
func endsContinued(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitProperty splits a logical line at its first unescaped "=", ":" or
// white space.
func splitProperty(line string) (key, value string) {
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\':
			i++
		case c == '=' || c == ':' || unicode.IsSpace(rune(c)):
			value = strings.TrimLeftFunc(line[i+1:], unicode.IsSpace)
			if unicode.IsSpace(rune(c)) && value != "" && (value[0] == '=' || value[0] == ':') {
				value = strings.TrimLeftFunc(value[1:], unicode.IsSpace)
			}
			return line[:i], strings.TrimRightFunc(value, unicode.IsSpace)
		}
	}
	return line, ""
}

// unescape resolves the escapes of a properties key or value.
func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if i+5 > len(s) {
				return "", fmt.Errorf("malformed \\u escape in %q", s)
			}
			r, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
			if err != nil {
				return "", fmt.Errorf("malformed \\u escape in %q", s)
			}
			b.WriteRune(rune(r))
			i += 4
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}
