package kafkaconn

// OAUTHBEARER's client side: a token given as it is (--sasl-oauth-token),
// or the unsecured token Kafka's OAuthBearerLoginModule makes from its
// JAAS options (OAuthBearerUnsecuredLoginCallbackHandler), for a broker
// with Kafka's unsecured validator:
//
//	unsecuredLoginStringClaim_<name>="value"   a string claim (sub at least)
//	unsecuredLoginNumberClaim_<name>="1.5"     a number claim
//	unsecuredLoginListClaim_<name>=",a,b"      a list claim, its first character the separator
//	unsecuredLoginExtension_<name>="value"     a SASL extension
//	unsecuredLoginPrincipalClaimName="sub"     the claim that must name the principal
//	unsecuredLoginLifetimeSeconds="3600"       exp, from now
//
// or from librdkafka's sasl.oauthbearer.config for its unsecured JWT
// (enable.sasl.oauthbearer.unsecure.jwt), space-separated name=value:
// principal, principalClaimName, scope (comma-separated), scopeClaimName,
// lifeSeconds, extension_<name>.
//
// The token is made again for each connection, so that a long-lived
// client's connections never present an expired one.

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
)

// The options of OAuthBearerLoginModule's unsecured login.
const (
	loginStringClaim = "unsecuredLoginStringClaim_"
	loginNumberClaim = "unsecuredLoginNumberClaim_"
	loginListClaim   = "unsecuredLoginListClaim_"
	loginExtension   = "unsecuredLoginExtension_"
)

// unsecuredLogin is an unsecured login's JAAS options.
type unsecuredLogin map[string]string

// auth makes the login's token, valid from now, and its extensions.
func (l unsecuredLogin) auth(now time.Time) (oauth.Auth, error) {
	claims := map[string]any{}
	ext := map[string]string{}
	for k, v := range l {
		var name string
		var val any = v
		switch {
		case strings.HasPrefix(k, loginStringClaim):
			name = k[len(loginStringClaim):]
		case strings.HasPrefix(k, loginNumberClaim):
			name = k[len(loginNumberClaim):]
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return oauth.Auth{}, fmt.Errorf("%s: %q is not a number", k, v)
			}
			val = n
		case strings.HasPrefix(k, loginListClaim):
			name = k[len(loginListClaim):]
			val = []string{}
			if len(v) > 1 {
				val = strings.Split(v[1:], v[:1])
			}
		case strings.HasPrefix(k, loginExtension):
			ext[k[len(loginExtension):]] = v
			continue
		default:
			continue
		}
		if name == "iat" || name == "exp" {
			return oauth.Auth{}, fmt.Errorf("%s: the %s claim is set from the time", k, name)
		}
		if name != "" {
			claims[name] = val
		}
	}
	principal := strings.TrimSpace(l["unsecuredLoginPrincipalClaimName"])
	if principal == "" {
		principal = "sub"
	}
	if s, _ := claims[principal].(string); strings.TrimSpace(s) == "" {
		return oauth.Auth{}, fmt.Errorf("OAuthBearerLoginModule without %s%s: give the token with --sasl-oauth-token", loginStringClaim, principal)
	}
	lifetime := int64(3600)
	if v, ok := l["unsecuredLoginLifetimeSeconds"]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return oauth.Auth{}, fmt.Errorf("unsecuredLoginLifetimeSeconds: %q is not a number of seconds", v)
		}
		lifetime = n
	}
	claims["iat"] = float64(now.UnixMilli()) / 1000
	claims["exp"] = now.Unix() + lifetime
	return oauth.Auth{Token: UnsecuredJWT(claims), Extensions: ext}, nil
}

// UnsecuredJWT is the unsigned JWS ("alg":"none", no signature) of
// claims, as Kafka's unsecured login makes and its unsecured validator
// takes.
func UnsecuredJWT(claims map[string]any) string {
	body, _ := json.Marshal(claims)
	enc := base64.RawURLEncoding.EncodeToString
	return enc([]byte(`{"alg":"none"}`)) + "." + enc(body) + "."
}

// oauthMechanism is OAUTHBEARER with s's token: the unsecured login's,
// made anew for each connection, when the token is the one it made.
func (s *Settings) oauthMechanism() sasl.Mechanism {
	if s.oauthLogin == nil || s.OAuthToken != s.oauthLoginToken {
		return oauth.Auth{Token: s.OAuthToken}.AsMechanism()
	}
	login := maps.Clone(s.oauthLogin)
	return oauth.Oauth(func(context.Context) (oauth.Auth, error) { return login.auth(time.Now()) })
}

// setOAuthLogin sets the unsecured login l, from origin, and the token it
// makes now.
func (s *Settings) setOAuthLogin(l unsecuredLogin, origin string) error {
	a, err := l.auth(time.Now())
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrSettings, origin, err)
	}
	s.set("sasl-oauth-token", a.Token, origin)
	s.oauthLogin, s.oauthLoginToken = l, a.Token
	return nil
}

// librdkafkaLogin is the unsecured login of librdkafka's
// sasl.oauthbearer.config.
func librdkafkaLogin(v string) (unsecuredLogin, error) {
	opts := map[string]string{}
	for _, f := range strings.Fields(v) {
		k, val, ok := strings.Cut(f, "=")
		if !ok {
			return nil, fmt.Errorf("sasl.oauthbearer.config: %q is not name=value", f)
		}
		opts[k] = val
	}
	principalClaim, scopeClaim := cmp.Or(opts["principalClaimName"], "sub"), cmp.Or(opts["scopeClaimName"], "scope")
	l := unsecuredLogin{"unsecuredLoginPrincipalClaimName": principalClaim}
	for k, val := range opts {
		switch {
		case k == "principal":
			l[loginStringClaim+principalClaim] = val
		case k == "scope":
			l[loginListClaim+scopeClaim] = "," + val
		case k == "lifeSeconds":
			l["unsecuredLoginLifetimeSeconds"] = val
		case strings.HasPrefix(k, "extension_"):
			l[loginExtension+k[len("extension_"):]] = val
		case k != "principalClaimName" && k != "scopeClaimName":
			return nil, fmt.Errorf("sasl.oauthbearer.config: unknown name %q (principal, principalClaimName, scope, scopeClaimName, lifeSeconds, extension_<name>)", k)
		}
	}
	return l, nil
}
