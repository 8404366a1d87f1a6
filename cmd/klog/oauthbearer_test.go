package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/kafkaconn"
)

// oauthNode starts a klog node with a PLAINTEXT listener and a
// SASL_PLAINTEXT one offering OAUTHBEARER with configs (the listener's
// own, by name after listener.name.sasl_plaintext.), and returns the
// SASL_PLAINTEXT address.
func oauthNode(t *testing.T, kv ...string) string {
	t.Helper()
	opts := []brokertest.Option{
		brokertest.Config("listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"),
		brokertest.Config("listener.name.sasl_plaintext.sasl.enabled.mechanisms", "OAUTHBEARER"),
	}
	for i := 0; i+1 < len(kv); i += 2 {
		opts = append(opts, brokertest.Config("listener.name.sasl_plaintext."+kv[i], kv[i+1]))
	}
	c := brokertest.New(t, opts...)
	return c.Nodes()[0].Broker().ListenerAddr("SASL_PLAINTEXT").String()
}

// TestOAuthBearerCommands: klog's commands authenticate with OAUTHBEARER
// to a klog node with Kafka's unsecured validator, with a token given by
// flag or environment, and with the unsecured token Kafka's login module
// makes from a JAAS config given by -X or --command-config, or from
// librdkafka's sasl.oauthbearer.config; a token the
// node refuses ends the command with exit 1 and the node's error.
func TestOAuthBearerCommands(t *testing.T) {
	addr := oauthNode(t, "oauthbearer.sasl.jaas.config",
		`org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredValidatorRequiredScope="kafka";`)
	now := time.Now()
	token := kafkaconn.UnsecuredJWT(map[string]any{"sub": "alice", "iat": now.Unix(), "exp": now.Unix() + 600, "scope": "kafka"})
	roundTrip(t, nil, "-b", addr, "--sasl-mechanism", "OAUTHBEARER", "--sasl-oauth-token", token)
	roundTrip(t, map[string]string{"KLOG_BROKERS": addr, "KLOG_SASL_MECHANISM": "OAUTHBEARER", "KLOG_SASL_OAUTH_TOKEN": token})

	jaas := `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="bob" unsecuredLoginListClaim_scope=",kafka,other" unsecuredLoginExtension_traceId="t1";`
	roundTrip(t, nil, "-b", addr, "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanism=OAUTHBEARER", "-X", "sasl.jaas.config="+jaas)
	// librdkafka's unsecured JWT.
	roundTrip(t, nil, "-b", addr, "-X", "sasl.mechanisms=OAUTHBEARER", "-X", "enable.sasl.oauthbearer.unsecure.jwt=true",
		"-X", "sasl.oauthbearer.config=principal=carol scope=kafka extension_traceId=t2")
	props := filepath.Join(t.TempDir(), "client.properties")
	text := "bootstrap.servers=" + addr + "\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\nsasl.jaas.config=" + jaas + "\n"
	if err := os.WriteFile(props, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, nil, "--command-config", props)

	noScope := strings.Replace(jaas, `unsecuredLoginListClaim_scope=",kafka,other"`, "", 1)
	r := klogRun(t, addr, "", "-X", "sasl.mechanism=OAUTHBEARER", "-X", "sasl.jaas.config="+noScope, "topic", "list")
	if r.code != 1 || !strings.Contains(r.stderr, `{"status":"insufficient_scope", "scope":"[kafka]"}`) {
		t.Fatalf("a token without the required scope: exit %d\n%s", r.code, r.stderr)
	}
}

// TestOAuthBearerCommandsJWKS: a klog command authenticates with a signed
// token to a node validating against an issuer's JWKS, and one signed by
// a key outside it is refused.
func TestOAuthBearerCommandsJWKS(t *testing.T) {
	iss := testkit.NewJWTIssuer(t)
	addr := oauthNode(t, "oauthbearer.sasl.oauthbearer.jwks.endpoint.url", iss.URL, "sasl.oauthbearer.expected.audience", "kafka")
	now := time.Now()
	claims := map[string]any{"sub": "svc", "aud": "kafka", "iat": now.Unix(), "exp": now.Unix() + 600}
	roundTrip(t, nil, "-b", addr, "--sasl-mechanism", "OAUTHBEARER", "--sasl-oauth-token", iss.Sign(t, "ec-1", claims))
	r := klogRun(t, addr, "", "--sasl-mechanism", "OAUTHBEARER", "--sasl-oauth-token", iss.Sign(t, "other", claims), "topic", "list")
	if r.code != 1 || !strings.Contains(r.stderr, `{"status":"invalid_token"}`) {
		t.Fatalf("a token of a key outside the JWKS: exit %d\n%s", r.code, r.stderr)
	}
}
