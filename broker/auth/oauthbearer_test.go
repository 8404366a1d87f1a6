package auth_test

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/kafkaconn"
)

// oauthMessage is a client's first OAUTHBEARER message for token, with
// the authorization id and extensions given.
func oauthMessage(token, authzid string, ext ...string) []byte {
	s := "n,"
	if authzid != "" {
		s += "a=" + authzid
	}
	s += ",\x01auth=Bearer " + token + "\x01"
	for _, e := range ext {
		s += e + "\x01"
	}
	return []byte(s + "\x01")
}

// oauthLogin runs one exchange of m with msg: the principal and expiry
// it authenticated, or the error challenge and the failure that the
// client's %x01 then met.
func oauthLogin(t *testing.T, m auth.Mechanism, msg []byte) (principal string, expiry time.Time, challenge string, err error) {
	t.Helper()
	x := m.Start()
	answer, done, err := x.Next(msg)
	switch {
	case err != nil:
		return "", time.Time{}, "", err
	case done:
		if len(answer) != 0 {
			t.Fatalf("a success answered %q", answer)
		}
		return x.Principal(), x.Expiry(), "", nil
	}
	_, done, err = x.Next([]byte{0x01})
	if done || err == nil || !errors.Is(err, auth.ErrAuthenticationFailed) || err.Error() != string(answer) {
		t.Fatalf("after the challenge %q, %%x01 got %v %v; want the challenge as the failure", answer, done, err)
	}
	return "", time.Time{}, string(answer), err
}

func oauthMechanism(t *testing.T, kv ...string) auth.Mechanism {
	t.Helper()
	ms, err := auth.Mechanisms([]string{auth.OAUTHBEARER}, nil, configs(auth.OAUTHBEARER, kv...))
	if err != nil {
		t.Fatal(err)
	}
	return ms[0]
}

const invalidToken = `{"status":"invalid_token"}`

// edited is a copy of claims with the claims of kv, name and value
// pairs, set; a nil value removes the claim.
func edited(claims map[string]any, kv ...any) map[string]any {
	c := map[string]any{}
	for k, v := range claims {
		c[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			delete(c, kv[i].(string))
		} else {
			c[kv[i].(string)] = kv[i+1]
		}
	}
	return c
}

// TestOAuthBearerUnsecured checks Kafka's unsecured validator: unsigned
// tokens with exp, iat and the principal claim, its JAAS options, and
// the error challenge of a refused one.
func TestOAuthBearerUnsecured(t *testing.T) {
	m := oauthMechanism(t, "sasl.jaas.config", `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required
		unsecuredValidatorRequiredScope="read write" unsecuredValidatorAllowableClockSkewMs="2000";`)
	now := time.Now()
	exp := now.Add(time.Hour).Truncate(time.Second)
	good := map[string]any{"sub": "alice", "iat": now.Unix(), "exp": exp.Unix(), "scope": []string{"read", "write", "x"}}
	with := func(kv ...any) map[string]any { return edited(good, kv...) }
	p, e, _, err := oauthLogin(t, m, oauthMessage(kafkaconn.UnsecuredJWT(good), "", "traceId=abc 1"))
	if err != nil || p != "User:alice" || !e.Equal(exp) {
		t.Fatalf("a good token: %q %v %v; want User:alice until %v", p, e, err, exp)
	}
	if p, _, _, err := oauthLogin(t, m, oauthMessage(kafkaconn.UnsecuredJWT(good), "alice")); err != nil || p != "User:alice" {
		t.Errorf("the token's principal as authorization id: %q %v", p, err)
	}
	for _, tc := range []struct {
		name   string
		token  string
		answer string
	}{
		{"expired", kafkaconn.UnsecuredJWT(with("exp", now.Add(-3*time.Second).Unix(), "iat", now.Add(-time.Hour).Unix())), invalidToken},
		{"no exp", kafkaconn.UnsecuredJWT(with("exp", nil)), invalidToken},
		{"issued in the future", kafkaconn.UnsecuredJWT(with("iat", now.Add(time.Minute).Unix())), invalidToken},
		{"exp before iat", kafkaconn.UnsecuredJWT(with("iat", exp.Unix()+1, "exp", exp.Unix())), invalidToken},
		{"no principal", kafkaconn.UnsecuredJWT(with("sub", nil)), invalidToken},
		{"blank principal", kafkaconn.UnsecuredJWT(with("sub", " ")), invalidToken},
		{"principal not a string", kafkaconn.UnsecuredJWT(with("sub", 7)), invalidToken},
		{"missing scope", kafkaconn.UnsecuredJWT(with("scope", "read")), `{"status":"insufficient_scope", "scope":"[read, write]"}`},
		{"no scope", kafkaconn.UnsecuredJWT(with("scope", nil)), `{"status":"insufficient_scope", "scope":"[read, write]"}`},
		{"signed", kafkaconn.UnsecuredJWT(good) + "c2ln", invalidToken},
		{"another algorithm", strings.Replace(kafkaconn.UnsecuredJWT(good), "eyJhbGciOiJub25lIn0", "eyJhbGciOiJIUzI1NiJ9", 1), invalidToken},
		{"two parts", "eyJhbGciOiJub25lIn0.e30", invalidToken},
		{"not JSON", "eyJhbGciOiJub25lIn0.bm90.", invalidToken},
		{"oversized", "eyJhbGciOiJub25lIn0." + strings.Repeat("A", 70<<10) + ".", invalidToken},
	} {
		_, _, answer, err := oauthLogin(t, m, oauthMessage(tc.token, ""))
		if answer != tc.answer {
			t.Errorf("%s: challenge %q (%v), want %q", tc.name, answer, err, tc.answer)
		}
		if auth.FailureReason(err) == "" {
			t.Errorf("%s: no reason for the log", tc.name)
		}
	}
	// Within the clock skew allowed, an expired token still serves.
	if _, _, _, err := oauthLogin(t, m, oauthMessage(kafkaconn.UnsecuredJWT(with("exp", now.Add(-time.Second).Unix(), "iat", now.Add(-time.Hour).Unix())), "")); err != nil {
		t.Errorf("expired a second ago, 2s of skew allowed: %v", err)
	}
	// Malformed messages fail at once, as Kafka's SaslException.
	invalidCreds := "Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER"
	for name, msg := range map[string][]byte{
		"no GS2 header":        []byte("\x01auth=Bearer x\x01\x01"),
		"channel binding":      []byte("y,,\x01auth=Bearer x\x01\x01"),
		"no auth":              []byte("n,,\x01k=v\x01\x01"),
		"basic scheme":         []byte("n,,\x01auth=Basic eA==\x01\x01"),
		"bad token characters": []byte("n,,\x01auth=Bearer a b\x01\x01"),
		"bad extension":        oauthMessage("x", "", "k1=v"),
		"unterminated":         []byte("n,,\x01auth=Bearer x\x01"),
		"empty":                nil,
	} {
		if _, _, _, err := oauthLogin(t, m, msg); err == nil || err.Error() != invalidCreds {
			t.Errorf("%s: %v, want %q", name, err, invalidCreds)
		}
	}
	if _, _, _, err := oauthLogin(t, m, oauthMessage(kafkaconn.UnsecuredJWT(good), "bob")); err == nil ||
		err.Error() != "Authentication failed: Client requested an authorization id (bob) that is different from the token's principal name (alice)" {
		t.Errorf("another authorization id: %v", err)
	}
	// After the error challenge, a new token is not another try.
	x := m.Start()
	if _, done, err := x.Next(oauthMessage("eyJhbGciOiJub25lIn0.e30.", "")); done || err != nil {
		t.Fatalf("a refused token: %v %v, want a challenge", done, err)
	}
	if _, done, err := x.Next(oauthMessage(kafkaconn.UnsecuredJWT(good), "")); done || err == nil || err.Error() != invalidToken {
		t.Errorf("a second token after the challenge: %v %v, want the exchange failed", done, err)
	}
}

// TestOAuthBearerUnsecuredOptions checks the validator's claim names and
// Kafka's unsecured login token, which it takes.
func TestOAuthBearerUnsecuredOptions(t *testing.T) {
	m := oauthMechanism(t, "sasl.jaas.config", `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required
		unsecuredValidatorPrincipalClaimName="user" unsecuredValidatorScopeClaimName="roles" unsecuredValidatorRequiredScope="admin";`)
	now := time.Now()
	tok := kafkaconn.UnsecuredJWT(map[string]any{"user": "carol", "sub": "x", "roles": "admin", "iat": float64(now.UnixMilli()) / 1000, "exp": now.Unix() + 60})
	if p, _, _, err := oauthLogin(t, m, oauthMessage(tok, "")); err != nil || p != "User:carol" {
		t.Errorf("claims user and roles: %q %v", p, err)
	}
	for _, bad := range []string{
		`org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredValidatorAllowableClockSkewMs="-1";`,
		`org.apache.kafka.common.security.plain.PlainLoginModule required;`,
	} {
		if _, err := auth.Mechanisms([]string{auth.OAUTHBEARER}, nil, configs(auth.OAUTHBEARER, "sasl.jaas.config", bad)); err == nil {
			t.Errorf("JAAS config %s accepted", bad)
		}
	}
	if _, err := auth.Mechanisms([]string{auth.OAUTHBEARER}, nil, configs(auth.OAUTHBEARER, "sasl.server.callback.handler.class", "com.example.Mine")); err == nil {
		t.Error("an unknown callback handler class accepted")
	}
}

// TestOAuthBearerJWKS checks the JWKS validator against an issuer's key
// set: signed tokens with the expected issuer and audience are taken,
// anything else is refused with invalid_token, and an unknown kid
// fetches the set again at most once per rate limit.
func TestOAuthBearerJWKS(t *testing.T) {
	iss := testkit.NewJWTIssuer(t)
	m := oauthMechanism(t, "sasl.oauthbearer.jwks.endpoint.url", iss.URL,
		"sasl.oauthbearer.expected.issuer", "https://issuer.test", "sasl.oauthbearer.expected.audience", "kafka, other")
	if n := iss.Fetches.Load(); n != 0 {
		t.Errorf("%d fetches before any token", n)
	}
	now := time.Now()
	base := map[string]any{"sub": "svc", "iss": "https://issuer.test", "aud": []string{"kafka"}, "iat": now.Unix(), "exp": now.Unix() + 600, "scope": "a b"}
	claims := func(kv ...any) map[string]any { return edited(base, kv...) }
	for _, kid := range []string{"rsa-1", "ec-1"} {
		p, e, _, err := oauthLogin(t, m, oauthMessage(iss.Sign(t, kid, claims()), ""))
		if err != nil || p != "User:svc" || e.Unix() != now.Unix()+600 {
			t.Errorf("a token signed by %s: %q %v %v", kid, p, e, err)
		}
	}
	if n := iss.Fetches.Load(); n != 1 {
		t.Errorf("%d fetches for two tokens, want 1", n)
	}
	good := iss.Sign(t, "rsa-1", claims())
	parts := strings.Split(good, ".")
	tampered := parts[0] + "." + strings.Split(iss.Sign(t, "rsa-1", claims("sub", "admin")), ".")[1] + "." + parts[2]
	for _, tc := range []struct{ name, token string }{
		{"wrong issuer", iss.Sign(t, "rsa-1", claims("iss", "https://evil.test"))},
		{"no issuer", iss.Sign(t, "rsa-1", claims("iss", nil))},
		{"wrong audience", iss.Sign(t, "rsa-1", claims("aud", "web"))},
		{"no audience", iss.Sign(t, "rsa-1", claims("aud", nil))},
		{"expired", iss.Sign(t, "ec-1", claims("exp", now.Unix()-60))},
		{"not yet valid", iss.Sign(t, "ec-1", claims("nbf", now.Unix()+600))},
		{"no iat", iss.Sign(t, "ec-1", claims("iat", nil))},
		{"no sub", iss.Sign(t, "ec-1", claims("sub", nil))},
		{"repeated scope", iss.Sign(t, "ec-1", claims("scope", []string{"a", "a"}))},
		{"bad signature", tampered},
		{"unknown kid", iss.Sign(t, "rsa-9", claims())},
		{"unsecured", kafkaconn.UnsecuredJWT(claims())},
	} {
		if _, _, answer, err := oauthLogin(t, m, oauthMessage(tc.token, "")); answer != invalidToken {
			t.Errorf("%s: %q %v, want %s", tc.name, answer, err, invalidToken)
		}
	}
	// Unknown kids fetch the set again at most once per rate limit
	// (10s), which the first fetch began.
	for range 20 {
		oauthLogin(t, m, oauthMessage(iss.Sign(t, "rsa-8", claims()), ""))
	}
	if n := iss.Fetches.Load(); n != 1 {
		t.Errorf("%d fetches after 21 tokens with unknown kids within 10s, want 1", n)
	}
}

// TestOAuthBearerJWKSRotation checks that a key added to the set is
// found by the token naming it once the rate limit
// (min(sasl.oauthbearer.jwks.endpoint.refresh.ms, 10s), at least 1s)
// allows a fetch,
// and that audience-less tokens serve when no audience is expected.
func TestOAuthBearerJWKSRotation(t *testing.T) {
	iss := testkit.NewJWTIssuer(t)
	m := oauthMechanism(t, "sasl.oauthbearer.jwks.endpoint.url", iss.URL, "sasl.oauthbearer.jwks.endpoint.refresh.ms", "50",
		"sasl.oauthbearer.sub.claim.name", "client_id")
	now := time.Now()
	c := map[string]any{"client_id": "app", "iat": now.Unix(), "exp": now.Unix() + 600}
	if p, _, _, err := oauthLogin(t, m, oauthMessage(iss.Sign(t, "rsa-1", c), "")); err != nil || p != "User:app" {
		t.Fatalf("%q %v", p, err)
	}
	iss.AddKey(t, "rsa-2", false)
	testkit.WaitFor(t, "a token of the new key to be taken", func() (bool, string) {
		_, _, answer, _ := oauthLogin(t, m, oauthMessage(iss.Sign(t, "rsa-2", c), ""))
		return answer == "", answer
	})
	c["aud"] = "kafka"
	if _, _, answer, _ := oauthLogin(t, m, oauthMessage(iss.Sign(t, "rsa-1", c), "")); answer != invalidToken {
		t.Errorf("a token with an audience, none expected: %q, want refused as Kafka does", answer)
	}
}

// TestOAuthBearerJWKSFile checks a key set read from a file:// URL, at
// start: a missing or malformed file fails it.
func TestOAuthBearerJWKSFile(t *testing.T) {
	iss := testkit.NewJWTIssuer(t)
	path := filepath.Join(t.TempDir(), "jwks.json")
	if err := os.WriteFile(path, iss.JWKS(), 0o600); err != nil {
		t.Fatal(err)
	}
	fileURL := (&url.URL{Scheme: "file", Path: path}).String()
	m := oauthMechanism(t, "sasl.oauthbearer.jwks.endpoint.url", fileURL)
	now := time.Now()
	if p, _, _, err := oauthLogin(t, m, oauthMessage(iss.Sign(t, "ec-1", map[string]any{"sub": "f", "iat": now.Unix(), "exp": now.Unix() + 60}), "")); err != nil || p != "User:f" {
		t.Errorf("%q %v", p, err)
	}
	if iss.Fetches.Load() != 0 {
		t.Error("the file's set was fetched over HTTP")
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}`), 0o600)
	for _, u := range []string{"file://" + filepath.Join(t.TempDir(), "missing.json"), "file://" + bad, "ftp://x/jwks"} {
		if _, err := auth.Mechanisms([]string{auth.OAUTHBEARER}, nil, configs(auth.OAUTHBEARER, "sasl.oauthbearer.jwks.endpoint.url", u)); err == nil {
			t.Errorf("JWKS %s accepted", u)
		}
	}
}

// TestOAuthBearerJWKSConcurrent checks that the first tokens, validated
// at once, wait for one fetch of the key set and are all taken.
func TestOAuthBearerJWKSConcurrent(t *testing.T) {
	iss := testkit.NewJWTIssuer(t)
	m := oauthMechanism(t, "sasl.oauthbearer.jwks.endpoint.url", iss.URL)
	now := time.Now()
	msg := oauthMessage(iss.Sign(t, "rsa-1", map[string]any{"sub": "c", "iat": now.Unix(), "exp": now.Unix() + 60}), "")
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			x := m.Start()
			_, done, err := x.Next(msg)
			if err == nil && !done {
				err = errors.New("refused")
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if n := iss.Fetches.Load(); n != 1 {
		t.Errorf("%d fetches for 8 tokens at once, want 1", n)
	}
}
