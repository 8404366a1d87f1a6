package auth

// The unsecured validator, Kafka's OAuthBearerUnsecuredValidatorCallbackHandler
// for development: the token is an unsigned JWS (header "alg":"none",
// empty signature) taken at its word. Its options are those of the
// listener's OAUTHBEARER JAAS config
// (listener.name.<l>.oauthbearer.sasl.jaas.config, OAuthBearerLoginModule):
//
//	unsecuredValidatorPrincipalClaimName  the claim naming the principal (sub)
//	unsecuredValidatorScopeClaimName      the claim holding the scope (scope)
//	unsecuredValidatorRequiredScope       space-separated scope every token must have
//	unsecuredValidatorAllowableClockSkewMs clock skew allowed to iat and exp (0)
//
// The token must have exp (a number) and the principal claim (a non-blank
// string); iat, when present, must not be after now, exp must not be
// passed and must be after iat (the clock skew allowed to each); the
// scope claim, a string (one scope) or a list, must hold every required
// scope, else the challenge is insufficient_scope with the scope
// required, as Kafka's.

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The login module of an OAUTHBEARER JAAS config.
const oauthLoginModule = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"

type unsecuredValidator struct {
	principalClaim, scopeClaim string
	requiredScope              []string
	skew                       time.Duration
}

// newUnsecuredValidator reads the validator's options from the JAAS
// config's.
func newUnsecuredValidator(opts map[string]string) (*unsecuredValidator, error) {
	v := &unsecuredValidator{principalClaim: "sub", scopeClaim: "scope"}
	if s := strings.TrimSpace(opts["unsecuredValidatorPrincipalClaimName"]); s != "" {
		v.principalClaim = s
	}
	if s := strings.TrimSpace(opts["unsecuredValidatorScopeClaimName"]); s != "" {
		v.scopeClaim = s
	}
	for _, s := range strings.Split(opts["unsecuredValidatorRequiredScope"], " ") {
		if s == "" {
			continue
		}
		for i := 0; i < len(s); i++ {
			if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
				return nil, fmt.Errorf("unsecuredValidatorRequiredScope: invalid scope %q", s)
			}
		}
		v.requiredScope = append(v.requiredScope, s)
	}
	if s := strings.TrimSpace(opts["unsecuredValidatorAllowableClockSkewMs"]); s != "" {
		ms, err := strconv.ParseInt(s, 10, 32)
		if err != nil || ms < 0 {
			return nil, fmt.Errorf("unsecuredValidatorAllowableClockSkewMs: %q is not a non-negative number of milliseconds", s)
		}
		v.skew = time.Duration(ms) * time.Millisecond
	}
	return v, nil
}

func (v *unsecuredValidator) validate(token string, now time.Time) (oauthToken, *tokenError) {
	if strings.Contains(token, "..") {
		return oauthToken{}, invalidToken("malformed compact serialization contains '..'")
	}
	t, err := parseJWS(token)
	if err != nil {
		return oauthToken{}, invalidToken("%v", err)
	}
	switch alg, _, err := t.header.str("alg"); {
	case err != nil || alg != "none":
		return oauthToken{}, invalidToken("an unsecured JWS must have 'none' for an algorithm")
	case len(t.signature) != 0:
		return oauthToken{}, invalidToken("an unsecured JWS must not contain a digital signature")
	}
	scope, _, err := t.claims.strings(v.scopeClaim)
	if err != nil {
		return oauthToken{}, invalidToken("%v", err)
	}
	exp, ok, err := t.claims.number("exp")
	if err != nil || !ok {
		return oauthToken{}, invalidToken("no expiration time (exp) in the JWT")
	}
	principal, _, err := t.claims.str(v.principalClaim)
	if err != nil || strings.TrimSpace(principal) == "" {
		return oauthToken{}, invalidToken("no principal name in JWT claim %s", v.principalClaim)
	}
	iat, hasIat, err := t.claims.number("iat")
	if err != nil {
		return oauthToken{}, invalidToken("%v", err)
	}
	if err := checkTimes(now, numericDate(exp), numericDate(iat), hasIat, v.skew); err != nil {
		return oauthToken{}, invalidToken("%v", err)
	}
	for _, want := range v.requiredScope {
		if !hasScope(scope, want) {
			return oauthToken{}, &tokenError{status: "insufficient_scope", scope: javaList(v.requiredScope),
				reason: fmt.Sprintf("the token's scope %v lacks the required scope %s", scope, want)}
		}
	}
	return oauthToken{principal: principal, expiry: numericDate(exp)}, nil
}

// checkTimes checks an unsecured token's times at now with skew allowed:
// iat, when present, not after now; exp not passed; exp after iat.
func checkTimes(now, exp, iat time.Time, hasIat bool, skew time.Duration) error {
	if hasIat && iat.After(now.Add(skew)) {
		return fmt.Errorf("issued at %v, after now (%v) plus the clock skew allowed (%v)", iat, now, skew)
	}
	if err := checkExpiry(now, exp, skew); err != nil {
		return err
	}
	if hasIat && !exp.After(iat) {
		return fmt.Errorf("expiration time %v is not after issued at %v", exp, iat)
	}
	return nil
}

// hasScope reports whether scope holds want, each compared trimmed as
// Kafka does.
func hasScope(scope []string, want string) bool {
	for _, s := range scope {
		if strings.TrimSpace(s) == want {
			return true
		}
	}
	return false
}

// checkExpiry fails a token whose exp, with skew allowed, has passed.
func checkExpiry(now, exp time.Time, skew time.Duration) error {
	if !now.Add(-skew).Before(exp) {
		return fmt.Errorf("expired at %v: now (%v) less the clock skew allowed (%v) is on or after it", exp, now, skew)
	}
	return nil
}
