package broker_test

import (
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/oauth"

	"github.com/klogdev/klog/broker/wire"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/kafkaconn"
)

// oauthLogin dials addr over TLS and authenticates with OAUTHBEARER and
// token; it returns the connection's error, nil when it authenticated
// and then served a Metadata.
func oauthLogin(t *testing.T, pki *testPKI, addr, token string) error {
	t.Helper()
	ctx := testkit.Context(t)
	c, err := wire.Dial(ctx, addr, wire.DialConfig{ClientID: "test", Timeout: 5 * time.Second, MaxFrame: 1 << 20,
		TLS:  func() (*tls.Config, error) { return pki.clientTLS(pkix.Name{}), nil },
		SASL: oauth.Auth{Token: token}.AsMechanism()})
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Do(ctx, kmsg.NewPtrMetadataRequest(), 5*time.Second)
	return err
}

// refusedWith reports whether err is Kafka's SASL_AUTHENTICATION_FAILED
// carrying the error challenge want.
func refusedWith(err error, want string) bool {
	return errors.Is(err, kerr.SaslAuthenticationFailed) && strings.Contains(err.Error(), want)
}

// authenticateV1 authenticates c with a SaslHandshake v1 for mechanism
// and one SaslAuthenticate v1 carrying token, and returns its answer.
func authenticateV1(t *testing.T, c *wire.Conn, mechanism, token string) *kmsg.SASLAuthenticateResponse {
	t.Helper()
	ctx := testkit.Context(t)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, mechanism
	if _, err := c.Do(ctx, hs, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 1, []byte(token)
	resp, err := c.Do(ctx, auth, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return resp.(*kmsg.SASLAuthenticateResponse)
}

// TestOAuthBearerUnsecuredLogin checks OAUTHBEARER with Kafka's default
// validator on a SASL_SSL listener configured as Kafka's are: a franz-go
// client with an unsecured token authenticates as its sub and produces,
// the session lasts until the token's exp, and an expired token, one
// without the required scope and an oversized one are refused with
// Kafka's error challenge.
func TestOAuthBearerUnsecuredLogin(t *testing.T) {
	seen := &principals{}
	pki, configs := saslNode(t, seen,
		"listener.name.sasl_ssl.sasl.enabled.mechanisms", "OAUTHBEARER",
		"listener.name.sasl_ssl.oauthbearer.sasl.jaas.config",
		`org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredValidatorRequiredScope="kafka";`)
	n := startSecure(t, configs, seen)
	ctx := testkit.Context(t)
	addr := n.ListenerAddr("SASL_SSL").String()
	now := time.Now()
	token := func(exp time.Time, scope string) string {
		return kafkaconn.UnsecuredJWT(map[string]any{"sub": "alice", "iat": now.Unix() - 60, "exp": exp.Unix(), "scope": scope})
	}

	cl, err := kgo.NewClient(kgo.SeedBrokers(addr), kgo.DialTLSConfig(pki.clientTLS(pkix.Name{})),
		kgo.SASL(oauth.Auth{Token: token(now.Add(time.Hour), "kafka")}.AsMechanism()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "oauth", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce with a good token: %v", err)
	}
	if p := seen.of("SASL_SSL", kmsg.Produce); p != "User:alice" {
		t.Errorf("principal %q, want User:alice", p)
	}

	for _, tc := range []struct{ name, token, want string }{
		{"expired", token(now.Add(-time.Minute), "kafka"), `{"status":"invalid_token"}`},
		{"without the required scope", token(now.Add(time.Hour), "other"), `{"status":"insufficient_scope", "scope":"[kafka]"}`},
		{"oversized", token(now.Add(time.Hour), strings.Repeat("k", 100<<10)), `{"status":"invalid_token"}`},
		{"signed", token(now.Add(time.Hour), "kafka") + "c2ln", `{"status":"invalid_token"}`},
	} {
		if err := oauthLogin(t, pki, addr, tc.token); !refusedWith(err, tc.want) {
			t.Errorf("%s: %v, want SASL_AUTHENTICATION_FAILED with %s", tc.name, err, tc.want)
		}
	}

	// The session lasts until the token's exp (KIP-368).
	exp := now.Add(90 * time.Second)
	ar := authenticateV1(t, dialSASL(t, pki, n.ListenerAddr("SASL_SSL")), "OAUTHBEARER", "n,,\x01auth=Bearer "+token(exp, "kafka")+"\x01\x01")
	if left := time.Until(exp); ar.ErrorCode != 0 || ar.SessionLifetimeMillis > exp.Sub(now).Milliseconds() || ar.SessionLifetimeMillis < left.Milliseconds()-5000 {
		t.Errorf("SaslAuthenticate answered %+v, want a session lifetime of about %v (the token's exp)", ar, left)
	}
}

// TestOAuthBearerSessionCappedByReauth checks that
// connections.max.reauth.ms shortens a token's session, the sooner of
// the two as Kafka reckons it.
func TestOAuthBearerSessionCappedByReauth(t *testing.T) {
	pki, configs := saslNode(t, nil, "sasl.enabled.mechanisms", "OAUTHBEARER", "listener.name.sasl_ssl.connections.max.reauth.ms", "5000")
	n := startSecure(t, configs, nil)
	tok := kafkaconn.UnsecuredJWT(map[string]any{"sub": "bob", "exp": time.Now().Unix() + 3600})
	if ar := authenticateV1(t, dialSASL(t, pki, n.ListenerAddr("SASL_SSL")), "OAUTHBEARER", "n,,\x01auth=Bearer "+tok+"\x01\x01"); ar.ErrorCode != 0 || ar.SessionLifetimeMillis != 5000 {
		t.Errorf("SaslAuthenticate answered %+v, want session_lifetime_ms 5000", ar)
	}
}

// TestOAuthBearerJWKSLogin checks OAUTHBEARER with Kafka's JWKS
// validator against an issuer's key set served over HTTP, configured
// with Kafka's keys (per listener and mechanism, and broker-wide): signed
// tokens of the expected issuer and audience authenticate as their sub;
// a wrong issuer or audience, an unknown kid and a bad signature are
// refused with invalid_token.
func TestOAuthBearerJWKSLogin(t *testing.T) {
	iss := testkit.NewJWTIssuer(t)
	seen := &principals{}
	pki, configs := saslNode(t, seen,
		"listener.name.sasl_ssl.sasl.enabled.mechanisms", "OAUTHBEARER,PLAIN",
		"listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class", "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler",
		"listener.name.sasl_ssl.oauthbearer.sasl.oauthbearer.jwks.endpoint.url", iss.URL,
		"listener.name.sasl_ssl.sasl.oauthbearer.expected.audience", "kafka",
		"sasl.oauthbearer.expected.issuer", "https://issuer.test")
	n := startSecure(t, configs, seen)
	addr := n.ListenerAddr("SASL_SSL").String()
	now := time.Now()
	claims := map[string]any{"sub": "svc", "iss": "https://issuer.test", "aud": "kafka", "iat": now.Unix(), "exp": now.Unix() + 600}
	with := func(k string, v any) map[string]any {
		c := map[string]any{k: v}
		for name, val := range claims {
			if name != k {
				c[name] = val
			}
		}
		return c
	}
	for _, kid := range []string{"rsa-1", "ec-1"} {
		if err := oauthLogin(t, pki, addr, iss.Sign(t, kid, claims)); err != nil {
			t.Fatalf("a token signed by %s: %v", kid, err)
		}
	}
	if p := seen.of("SASL_SSL", kmsg.Metadata); p != "User:svc" {
		t.Errorf("principal %q, want User:svc", p)
	}
	good := strings.Split(iss.Sign(t, "rsa-1", claims), ".")
	forged := strings.Split(iss.Sign(t, "rsa-1", with("sub", "admin")), ".")
	for _, tc := range []struct{ name, token string }{
		{"wrong issuer", iss.Sign(t, "rsa-1", with("iss", "https://evil.test"))},
		{"wrong audience", iss.Sign(t, "ec-1", with("aud", "web"))},
		{"unknown kid", iss.Sign(t, "rsa-7", claims)},
		{"bad signature", good[0] + "." + forged[1] + "." + good[2]},
		{"unsecured", kafkaconn.UnsecuredJWT(claims)},
	} {
		if err := oauthLogin(t, pki, addr, tc.token); !refusedWith(err, `{"status":"invalid_token"}`) {
			t.Errorf("%s: %v, want SASL_AUTHENTICATION_FAILED with invalid_token", tc.name, err)
		}
	}
	if n := iss.Fetches.Load(); n != 1 {
		t.Errorf("the key set was fetched %d times, want once", n)
	}
}

// TestOAuthBearerConfigErrors checks that a node does not start with an
// OAUTHBEARER it cannot validate with.
func TestOAuthBearerConfigErrors(t *testing.T) {
	pki := newTestPKI(t)
	pki.pemKeystore("server.pem", pkix.Name{CommonName: "node"})
	base := withConfigs(pki.serverConfigs("server.pem"), "listeners", "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
		"sasl.enabled.mechanisms", "OAUTHBEARER")
	for _, kv := range [][]string{
		{"listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class", "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"},
		{"listener.name.sasl_ssl.oauthbearer.sasl.server.callback.handler.class", "com.example.Validator"},
		{"sasl.oauthbearer.jwks.endpoint.url", "file:///nonexistent/jwks.json"},
		{"listener.name.sasl_ssl.oauthbearer.sasl.jaas.config", "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredValidatorAllowableClockSkewMs=\"x\";"},
	} {
		if err := startErr(t, withConfigs(base, kv...)); err == nil {
			t.Errorf("%s=%s: the node started", kv[0], kv[1])
		}
	}
}
