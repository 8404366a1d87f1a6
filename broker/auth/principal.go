package auth

import (
	"crypto/x509"
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// ErrNoPrincipalRule is a certificate subject no rule of
// ssl.principal.mapping.rules maps: the TLS connection fails, as Kafka's
// SslPrincipalMapper refuses it.
var ErrNoPrincipalRule = errors.New("no ssl.principal.mapping.rules rule applies")

// PrincipalRules map a TLS client certificate's subject to a principal
// name, as Kafka's ssl.principal.mapping.rules: a comma-separated list of
// RULE:pattern/replacement/ with an optional L or U after it (lower or
// upper case the result), and DEFAULT (the subject as it is). The first
// rule whose pattern matches the whole subject decides.
type PrincipalRules struct {
	rules []principalRule
	text  string
}

type principalRule struct {
	isDefault   bool
	pattern     *regexp.Regexp
	replacement string
	lower       bool
	upper       bool
}

// ruleSyntax finds one rule and its separator at the start of the rules
// left: DEFAULT, or RULE:pattern/replacement/ (a '/' inside the pattern
// or replacement escaped as "\/") and the flags, then a comma or the end.
var ruleSyntax = regexp.MustCompile(`^\s*(?:(DEFAULT)|RULE:((?:\\.|[^\\/])*)/((?:\\.|[^\\/])*)/([LU]?)([^,]*)|([^,]*?))\s*(?:,\s*|$)`)

// ParsePrincipalRules parses ssl.principal.mapping.rules.
func ParsePrincipalRules(s string) (*PrincipalRules, error) {
	pr := &PrincipalRules{text: s}
	rest := strings.TrimSpace(s)
	if rest == "" {
		rest = "DEFAULT"
	}
	for rest != "" {
		m := ruleSyntax.FindStringSubmatch(rest)
		if m == nil || m[0] == "" {
			return nil, fmt.Errorf("invalid rule: %s", rest)
		}
		rest = rest[len(m[0]):]
		switch {
		case m[1] != "":
			pr.rules = append(pr.rules, principalRule{isDefault: true})
		case m[6] != "" || strings.TrimSpace(m[5]) != "":
			return nil, fmt.Errorf("invalid rule: %s", strings.TrimSpace(m[0]))
		default:
			re, err := regexp.Compile("^(?:" + unescapeSlash(m[2]) + ")$")
			if err != nil {
				return nil, fmt.Errorf("invalid rule pattern %q: %w", m[2], err)
			}
			pr.rules = append(pr.rules, principalRule{pattern: re, replacement: javaReplacement(unescapeSlash(m[3])), lower: m[4] == "L", upper: m[4] == "U"})
		}
	}
	return pr, nil
}

// unescapeSlash turns the rules' "\/" into "/".
func unescapeSlash(s string) string { return strings.ReplaceAll(s, `\/`, "/") }

// javaReplacement makes a Java replacement string ($1, \$ for a dollar)
// one for regexp.Expand (${1}, $$).
var javaGroupRef = regexp.MustCompile(`\\.|\$(\d)`)

func javaReplacement(s string) string {
	return javaGroupRef.ReplaceAllStringFunc(s, func(ref string) string {
		if ref[0] == '\\' {
			if ref[1] == '$' {
				return "$$"
			}
			return ref[1:]
		}
		return "${" + ref[1:] + "}"
	})
}

// Map returns the principal name of subject, a distinguished name in
// RFC 2253 form ("CN=alice,OU=eng,O=example").
func (pr *PrincipalRules) Map(subject string) (string, error) {
	for _, r := range pr.rules {
		if r.isDefault {
			return subject, nil
		}
		m := r.pattern.FindStringSubmatchIndex(subject)
		if m == nil {
			continue
		}
		out := string(r.pattern.ExpandString(nil, r.replacement, subject, m))
		switch {
		case r.lower:
			out = strings.ToLower(out)
		case r.upper:
			out = strings.ToUpper(out)
		}
		return out, nil
	}
	return "", fmt.Errorf("%w to %s (rules %s)", ErrNoPrincipalRule, subject, pr.text)
}

// CertificatePrincipal is the principal of a TLS connection whose client
// presented cert, as Kafka's DefaultKafkaPrincipalBuilder makes it:
// User: and the certificate subject mapped by rules; without a
// certificate (nil), User:ANONYMOUS.
func CertificatePrincipal(cert *x509.Certificate, rules *PrincipalRules) (string, error) {
	if cert == nil {
		return "User:ANONYMOUS", nil
	}
	name, err := rules.Map(cert.Subject.String())
	if err != nil {
		return "", err
	}
	return "User:" + name, nil
}
