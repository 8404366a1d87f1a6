package auth

// OAUTHBEARER (RFC 7628), as Kafka's OAuthBearerSaslServer serves it. The
// client's first message is
//
//	n,[a=authzid],\x01auth=Bearer <token>\x01[key=value\x01...]\x01
//
// (key=value pairs are SASL extensions, accepted as Kafka's validators
// accept them). The token is checked by the listener's validator:
//
//   - unsecured (Kafka's OAuthBearerUnsecuredValidatorCallbackHandler, the
//     default): an unsigned JWS ("alg":"none"), see unsecured.go;
//   - JWKS (Kafka's OAuthBearerValidatorCallbackHandler): a JWT signed by
//     a key of sasl.oauthbearer.jwks.endpoint.url, see jwks.go.
//
// A valid token authenticates User:<its principal claim> until its exp,
// which bounds the session's lifetime (KIP-368). An invalid one is
// answered, as RFC 7628 and Kafka do, with an error challenge
// {"status":"invalid_token"} (or "insufficient_scope" with the scope
// required); the client answers it with a single %x01 and the exchange
// fails with that JSON as the message. Kafka reads any other answer as a
// new first message; klog fails the exchange there too, so that each
// rejected token pays connection.failed.authentication.delay.ms.
//
// Bounds: a first message over maxOAuthMessage bytes is an invalid token
// without being parsed; at most maxOAuthExtensions extensions.

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// OAUTHBEARER is the mechanism's name.
const OAUTHBEARER = "OAUTHBEARER"

// Bounds of a client's first message: the token with its framing and
// extensions, and the extensions it may carry.
const (
	maxOAuthMessage    = 64 << 10
	maxOAuthExtensions = 32
)

// tokenValidator checks an OAUTHBEARER token at now: the token it
// authenticates, or the JSON error challenge Kafka answers with and why
// it failed (for the node's log).
type tokenValidator interface {
	validate(token string, now time.Time) (oauthToken, *tokenError)
}

// oauthToken is a validated token: whom it names and when it lapses.
type oauthToken struct {
	principal string
	expiry    time.Time
}

// tokenError is a token a validator refused: the error challenge sent to
// the client (RFC 7628's JSON) and the reason, for the node's log.
type tokenError struct {
	status string // invalid_token, insufficient_scope
	scope  string // the scope required, for insufficient_scope
	reason string
}

// invalidToken is a refused token whose challenge is Kafka's
// {"status":"invalid_token"}.
func invalidToken(format string, args ...any) *tokenError {
	return &tokenError{status: "invalid_token", reason: fmt.Sprintf(format, args...)}
}

// challenge is the error challenge as Kafka's OAuthBearerSaslServer
// writes it.
func (e *tokenError) challenge() string {
	s := `{"status":"` + e.status + `"`
	if e.scope != "" {
		s += `, "scope":"` + e.scope + `"`
	}
	return s + "}"
}

// The callback handler classes that pick an OAUTHBEARER validator
// (sasl.server.callback.handler.class), Kafka's; the JWKS one also by its
// older package's name.
const (
	unsecuredValidatorClass = "org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler"
	jwksValidatorClass      = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
	jwksValidatorClassOld   = "org.apache.kafka.common.security.oauthbearer.secured.OAuthBearerValidatorCallbackHandler"
)

// newOAuthBearer makes OAUTHBEARER with the validator config picks:
// sasl.server.callback.handler.class when set, else JWKS when
// sasl.oauthbearer.jwks.endpoint.url is set (Kafka would validate
// unsecured tokens there: klog does not let a configured key set go
// unused), else unsecured, with the options of the mechanism's JAAS
// config.
func newOAuthBearer(config func(name string) string) (*oauthMechanism, error) {
	handler := strings.TrimSpace(config("sasl.server.callback.handler.class"))
	jwksURL := strings.TrimSpace(config("sasl.oauthbearer.jwks.endpoint.url"))
	m := &oauthMechanism{now: time.Now}
	switch {
	case handler == unsecuredValidatorClass || handler == "" && jwksURL == "":
		var opts map[string]string
		if jaas := config("sasl.jaas.config"); strings.TrimSpace(jaas) != "" {
			var err error
			if opts, err = parseJAAS(jaas, oauthLoginModule); err != nil {
				return nil, err
			}
		}
		v, err := newUnsecuredValidator(opts)
		if err != nil {
			return nil, fmt.Errorf("JAAS config: %w", err)
		}
		m.validator = v
	case handler == jwksValidatorClass || handler == jwksValidatorClassOld || handler == "":
		v, err := newJWKSValidator(config)
		if err != nil {
			return nil, err
		}
		m.validator = v
	default:
		return nil, fmt.Errorf("sasl.server.callback.handler.class %s: klog validates tokens with %s or %s", handler, unsecuredValidatorClass, jwksValidatorClass)
	}
	return m, nil
}

// newJWKSValidator makes the JWKS validator of the sasl.oauthbearer.*
// configs.
func newJWKSValidator(config func(name string) string) (*jwksValidator, error) {
	jwksURL := strings.TrimSpace(config("sasl.oauthbearer.jwks.endpoint.url"))
	if jwksURL == "" {
		return nil, fmt.Errorf("%s needs sasl.oauthbearer.jwks.endpoint.url", jwksValidatorClass)
	}
	num := func(name string, def int64) (int64, error) {
		s := strings.TrimSpace(config(name))
		if s == "" {
			return def, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("%s: %q is not a non-negative number", name, s)
		}
		return n, nil
	}
	refresh, err := num("sasl.oauthbearer.jwks.endpoint.refresh.ms", 3600000)
	if err != nil {
		return nil, err
	}
	skew, err := num("sasl.oauthbearer.clock.skew.seconds", 30)
	if err != nil {
		return nil, err
	}
	keys, err := newKeySet(jwksURL, time.Duration(refresh)*time.Millisecond)
	if err != nil {
		return nil, err
	}
	v := &jwksValidator{keys: keys, issuer: strings.TrimSpace(config("sasl.oauthbearer.expected.issuer")),
		subClaim: "sub", scopeClaim: "scope", skew: time.Duration(skew) * time.Second}
	for _, a := range strings.Split(config("sasl.oauthbearer.expected.audience"), ",") {
		if a = strings.TrimSpace(a); a != "" {
			v.audience = append(v.audience, a)
		}
	}
	if s := strings.TrimSpace(config("sasl.oauthbearer.sub.claim.name")); s != "" {
		v.subClaim = s
	}
	if s := strings.TrimSpace(config("sasl.oauthbearer.scope.claim.name")); s != "" {
		v.scopeClaim = s
	}
	return v, nil
}

type oauthMechanism struct {
	validator tokenValidator
	now       func() time.Time
}

func (m *oauthMechanism) Name() string { return OAUTHBEARER }

func (m *oauthMechanism) Start() Exchange { return &oauthExchange{m: m} }

type oauthExchange struct {
	m *oauthMechanism
	// refused is the error challenge sent, with why: the next message
	// ends the exchange.
	refused *tokenError
	ended   bool
	token   oauthToken // set once authenticated
}

func (x *oauthExchange) Principal() string {
	if x.token.principal == "" {
		return ""
	}
	return "User:" + x.token.principal
}

func (x *oauthExchange) Expiry() time.Time { return x.token.expiry }

func (x *oauthExchange) Next(msg []byte) ([]byte, bool, error) {
	switch {
	case x.ended:
		return nil, false, invalidCredentials(OAUTHBEARER, "a message after the exchange ended")
	case x.refused != nil:
		x.ended = true
		if !bytes.Equal(msg, []byte{0x01}) {
			return nil, false, refused(x.refused.challenge(), x.refused.reason+"; then a message other than %x01")
		}
		return nil, false, refused(x.refused.challenge(), x.refused.reason)
	}
	if len(msg) > maxOAuthMessage {
		x.refused = invalidToken("a first message of %d bytes, over %d", len(msg), maxOAuthMessage)
		return []byte(x.refused.challenge()), false, nil
	}
	x.ended = true
	first, err := parseOAuthFirst(msg)
	if err != nil {
		return nil, false, invalidCredentials(OAUTHBEARER, err.Error())
	}
	tok, terr := x.m.validator.validate(first.token, x.m.now())
	if terr != nil {
		x.ended, x.refused = false, terr
		return []byte(terr.challenge()), false, nil
	}
	if first.authzid != "" && first.authzid != tok.principal {
		return nil, false, refused(fmt.Sprintf("Authentication failed: Client requested an authorization id (%s) that is different from the token's principal name (%s)",
			first.authzid, tok.principal), "authorization id "+first.authzid+" is not the token's principal "+tok.principal)
	}
	x.token = tok
	return nil, true, nil
}

// oauthFirst is a client's first message.
type oauthFirst struct {
	authzid    string
	token      string
	extensions map[string]string
}

// parseOAuthFirst parses a client's first message as Kafka's
// OAuthBearerClientInitialResponse does: the GS2 header without channel
// binding, then key=value pairs each ended by %x01, one of them
// auth=Bearer <token>, then %x01.
func parseOAuthFirst(msg []byte) (oauthFirst, error) {
	var f oauthFirst
	s := string(msg)
	rest, ok := strings.CutPrefix(s, "n,")
	if !ok {
		return f, fmt.Errorf("first message does not start with n, (no channel binding)")
	}
	gs2, rest, ok := strings.Cut(rest, ",")
	if !ok {
		return f, fmt.Errorf("first message without a GS2 header")
	}
	if gs2 != "" {
		z, ok := strings.CutPrefix(gs2, "a=")
		if !ok || !validSASLName(z) {
			return f, fmt.Errorf("first message with a malformed authorization id")
		}
		f.authzid = strings.NewReplacer("=2C", ",", "=3D", "=").Replace(z)
	}
	body, ok := strings.CutPrefix(rest, "\x01")
	if !ok || !strings.HasSuffix(body, "\x01\x01") {
		return f, fmt.Errorf("first message not framed by %%x01")
	}
	pairs := strings.Split(strings.TrimSuffix(body, "\x01\x01"), "\x01")
	if len(pairs) > maxOAuthExtensions+1 {
		return f, fmt.Errorf("first message with %d extensions, over %d", len(pairs)-1, maxOAuthExtensions)
	}
	f.extensions = map[string]string{}
	auth := ""
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || !validExtensionKey(k) || !validExtensionValue(v) {
			return f, fmt.Errorf("first message with a malformed key=value pair")
		}
		if k == "auth" {
			auth = v
			continue
		}
		f.extensions[k] = v
	}
	scheme, token, ok := strings.Cut(auth, " ")
	token = strings.TrimLeft(token, " ")
	if !ok || !strings.EqualFold(scheme, "bearer") || !validBearerToken(token) {
		return f, fmt.Errorf("first message without a valid auth=Bearer <token>")
	}
	f.token = token
	return f, nil
}

// validSASLName reports whether s is RFC 7628's saslname: %x01-7F but
// "," and "=", which are written =2C and =3D.
func validSASLName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '=':
			if !strings.HasPrefix(s[i:], "=2C") && !strings.HasPrefix(s[i:], "=3D") {
				return false
			}
			i += 2
		case c == 0 || c > 0x7f || c == ',':
			return false
		}
	}
	return true
}

// validExtensionKey and validExtensionValue check an extension's key
// and value, RFC 7628's key and value.
func validExtensionKey(k string) bool {
	return allBytes(k, func(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' })
}

func validExtensionValue(v string) bool {
	return allBytes(v, func(c byte) bool { return c >= 0x21 && c <= 0x7e || c == ' ' || c == '\t' || c == '\r' || c == '\n' })
}

// allBytes reports whether s is not empty and each of its bytes ok.
func allBytes(s string, ok func(byte) bool) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !ok(s[i]) {
			return false
		}
	}
	return true
}

// validBearerToken reports whether t is RFC 6750's b64token.
func validBearerToken(t string) bool {
	return allBytes(strings.TrimRight(t, "="), func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-._~+/", c) >= 0
	})
}

// javaList writes a list as Java's List.toString does, "[a, b]": the
// scope of Kafka's insufficient_scope challenge.
func javaList(items []string) string { return "[" + strings.Join(items, ", ") + "]" }
