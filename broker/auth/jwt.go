package auth

// JWTs as OAUTHBEARER's validators read them: a JWS in compact
// serialization (RFC 7515), base64url(header).base64url(claims).base64url(signature),
// its header and claims JSON objects.

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
)

// jws is a token split into its parts, header and claims decoded.
type jws struct {
	header, claims jsonClaims
	// signingInput is what the signature signs: the token up to its
	// second dot.
	signingInput string
	signature    []byte
}

// parseJWS splits and decodes a JWS in compact serialization.
func parseJWS(token string) (jws, error) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return jws{}, fmt.Errorf("a JWS has 3 dot-separated parts, this token %d", len(parts))
	}
	var t jws
	var err error
	if t.header, err = decodeJSONPart(parts[0]); err != nil {
		return jws{}, fmt.Errorf("header: %w", err)
	}
	if t.claims, err = decodeJSONPart(parts[1]); err != nil {
		return jws{}, fmt.Errorf("claims: %w", err)
	}
	if t.signature, err = decodeBase64URL(parts[2]); err != nil {
		return jws{}, fmt.Errorf("signature: %w", err)
	}
	t.signingInput = parts[0] + "." + parts[1]
	return t, nil
}

// decodeBase64URL decodes base64url, padded or not.
func decodeBase64URL(s string) ([]byte, error) {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, fmt.Errorf("malformed base64url")
	}
	return b, nil
}

// decodeJSONPart decodes a base64url JSON object.
func decodeJSONPart(s string) (jsonClaims, error) {
	b, err := decodeBase64URL(s)
	if err != nil {
		return nil, err
	}
	var c jsonClaims
	if err := json.Unmarshal(b, &c); err != nil || c == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	return c, nil
}

// jsonClaims are a JWT's claims, or its header's parameters, by name.
type jsonClaims map[string]json.RawMessage

// has reports whether the claim is present and not null.
func (c jsonClaims) has(name string) bool {
	v, ok := c[name]
	return ok && string(v) != "null"
}

// str is the string claim name; ok is false when it is absent, an error
// when it is not a string.
func (c jsonClaims) str(name string) (s string, ok bool, err error) {
	if !c.has(name) {
		return "", false, nil
	}
	if err := json.Unmarshal(c[name], &s); err != nil {
		return "", false, fmt.Errorf("the %q claim is not a string", name)
	}
	return s, true, nil
}

// number is the numeric claim name (a NumericDate: seconds, maybe
// fractional).
func (c jsonClaims) number(name string) (n float64, ok bool, err error) {
	if !c.has(name) {
		return 0, false, nil
	}
	if err := json.Unmarshal(c[name], &n); err != nil {
		return 0, false, fmt.Errorf("the %q claim is not a number", name)
	}
	return n, true, nil
}

// strings is the claim name as a list: a string is a list of one, an
// array of strings the list.
func (c jsonClaims) strings(name string) (list []string, ok bool, err error) {
	if !c.has(name) {
		return nil, false, nil
	}
	var s string
	if json.Unmarshal(c[name], &s) == nil {
		return []string{s}, true, nil
	}
	if err := json.Unmarshal(c[name], &list); err != nil {
		return nil, false, fmt.Errorf("the %q claim is neither a string nor a list of strings", name)
	}
	return list, true, nil
}

// numericDate is a NumericDate as a time, to the millisecond as Kafka
// keeps it; dates past the year 30000 (or before -30000) are held there.
func numericDate(seconds float64) time.Time {
	const far = 1e15 // ms
	return time.UnixMilli(int64(math.Max(-far, math.Min(far, math.Round(seconds*1000)))))
}
