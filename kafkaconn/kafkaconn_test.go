package kafkaconn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/youmark/pkcs8"

	"github.com/klogdev/klog/devca"
	"github.com/klogdev/klog/internal/jaas"
	"github.com/klogdev/klog/internal/javaprops"
	"github.com/klogdev/klog/internal/testkit"
)

// TestJAASOfAProperty: the sasl.jaas.config value of a client config,
// as a properties file holds it, read by internal/jaas.
func TestJAASOfAProperty(t *testing.T) {
	props, err := javaprops.Parse("sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n" +
		"    username=\"alice\" \\\n    password=\"p\\\\\\\"w\";\n")
	if err != nil || len(props) != 1 {
		t.Fatal(props, err)
	}
	module, opts, err := jaas.Parse(props[0].Value)
	if err != nil {
		t.Fatal(err)
	}
	if module != "org.apache.kafka.common.security.scram.ScramLoginModule" || opts["username"] != "alice" || opts["password"] != `p"w` {
		t.Fatalf("module %q options %q", module, opts)
	}
	for _, bad := range []string{"x", `M required username="open`, "M maybe a=b;"} {
		if _, _, err := jaas.Parse(bad); err == nil {
			t.Errorf("jaas.Parse(%q) took it", bad)
		}
	}
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Flags beat -X, -X beats the environment, the environment beats the
// file; each origin is named.
func TestPrecedence(t *testing.T) {
	file := writeFile(t, "c.properties", "bootstrap.servers=f:1\nsecurity.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"+
		"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=file password=file;\nacks=all\n")
	env := map[string]string{"KLOG_COMMAND_CONFIG": file, "KLOG_SASL_USERNAME": "env", "KLOG_SASL_PASSWORD": "env"}
	s, err := Load(Sources{
		Properties: []string{"sasl.password=x", "sasl.mechanisms=SCRAM-SHA-256"},
		Flags:      map[string]string{"sasl-mechanism": "scram-sha-512"},
		Getenv:     func(k string) string { return env[k] },
	})
	if err != nil {
		t.Fatal(err)
	}
	got := []string{s.Brokers, s.SecurityProtocol, s.Mechanism, s.Username, s.Password}
	want := []string{"f:1", SASLPlaintext, MechanismSCRAMSHA512, "env", "x"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	origins := []string{s.Origin("security-protocol"), s.Origin("sasl-mechanism"), s.Origin("sasl-username"), s.Origin("sasl-password")}
	if !reflect.DeepEqual(origins, []string{file + ": security.protocol", "--sasl-mechanism", "KLOG_SASL_USERNAME", "-X sasl.password"}) {
		t.Fatalf("origins %q", origins)
	}
	if !reflect.DeepEqual(s.Ignored, []string{file + ": acks"}) {
		t.Fatalf("ignored %q", s.Ignored)
	}
	opts, err := s.Opts()
	if err != nil || len(opts) != 1 {
		t.Fatalf("%d options, %v; want SASL's", len(opts), err)
	}
}

func TestSettingsErrors(t *testing.T) {
	for _, c := range []struct {
		src  Sources
		want string
	}{
		{Sources{Flags: map[string]string{"sasl-mechanism": "SCRAM-SHA-512"}}, "--sasl-mechanism SCRAM-SHA-512 needs a username: --sasl-username or KLOG_SASL_USERNAME"},
		{Sources{Flags: map[string]string{"sasl-mechanism": "PLAIN", "sasl-username": "u"}}, "PLAIN needs a password"},
		{Sources{Properties: []string{"sasl.mechanism=GSSAPI"}}, `-X sasl.mechanism "GSSAPI": want PLAIN`},
		{Sources{Properties: []string{"sasl.mechanism=OAUTHBEARER"}}, "OAUTHBEARER needs a token"},
		{Sources{Properties: []string{"security.protocol=SASL_SSL"}}, "needs a SASL mechanism"},
		{Sources{Properties: []string{"security.protocol=TLS"}}, `-X security.protocol "TLS": want PLAINTEXT`},
		{Sources{Properties: []string{"security.protocol=PLAINTEXT", "sasl.mechanism=PLAIN"}}, "use SASL_PLAINTEXT or SASL_SSL"},
		{Sources{Properties: []string{"ssl.keystore.certificate.chain=x"}}, `-X ssl.keystore.certificate.chain: unknown client property "ssl.keystore.certificate.chain"`},
		{Sources{Properties: []string{"enable.ssl.certificate.verification=false"}}, "only with --tls-insecure-skip-verify"},
		{Sources{Properties: []string{"novalue"}}, `-X "novalue": want key=value`},
		{Sources{Properties: []string{"sasl.jaas.config=x.OAuthBearerLoginModule required;"}}, "give the token with --sasl-oauth-token"},
		{Sources{Properties: []string{"sasl.jaas.config=x.KerberosLoginModule required;"}}, "login module x.KerberosLoginModule"},
		{Sources{CommandConfig: "/nonexistent/c.properties"}, "--command-config: open /nonexistent/c.properties"},
	} {
		_, err := Load(c.src)
		if err == nil || !errors.Is(err, ErrSettings) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.src, err, c.want)
		}
	}
}

// The protocol follows from the other settings when none names it.
func TestInferProtocol(t *testing.T) {
	for _, c := range []struct {
		props []string
		want  string
	}{
		{nil, Plaintext},
		{[]string{"ssl.ca.location=x"}, SSL},
		{[]string{"sasl.mechanism=PLAIN", "sasl.username=u", "sasl.password=p"}, SASLPlaintext},
		{[]string{"sasl.mechanism=PLAIN", "sasl.username=u", "sasl.password=p", "ssl.ca.location=x"}, SASLSSL},
	} {
		s, err := Load(Sources{Properties: c.props})
		if err != nil || s.SecurityProtocol != c.want {
			t.Errorf("%q: %v %v, want %s", c.props, s, err, c.want)
		}
	}
}

// The CA and client certificate load from PEM and PKCS12; a bad password
// or a JKS store is an error naming the file.
func TestKeyMaterial(t *testing.T) {
	ca, err := devca.Ensure(t.TempDir(), nil, []int32{1})
	if err != nil {
		t.Fatal(err)
	}
	alice, err := ca.Client("alice")
	if err != nil {
		t.Fatal(err)
	}
	encryptedKey := encryptKey(t, alice.Key, "key-pass")
	for _, props := range [][]string{
		{"ssl.ca.location=" + ca.CA, "ssl.certificate.location=" + alice.Cert, "ssl.key.location=" + alice.Key},
		{"ssl.ca.location=" + ca.CA, "ssl.certificate.location=" + alice.Cert, "ssl.key.location=" + encryptedKey, "ssl.key.password=key-pass"},
		{"ssl.truststore.location=" + ca.Truststore, "ssl.truststore.password=" + ca.Password,
			"ssl.keystore.location=" + alice.Keystore, "ssl.keystore.password=" + ca.Password, "ssl.key.password=" + ca.Password},
		{"ssl.ca.location=" + ca.Nodes[1].Keystore, "ssl.truststore.password=" + ca.Password, "ssl.certificate.location=" + ca.Nodes[1].PEM},
	} {
		s, err := Load(Sources{Properties: props})
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := s.TLSConfig()
		if err != nil {
			t.Fatalf("%q: %v", props, err)
		}
		if cfg.RootCAs == nil || len(cfg.Certificates) != 1 {
			t.Fatalf("%q: roots %v, %d certificates", props, cfg.RootCAs != nil, len(cfg.Certificates))
		}
	}
	for _, c := range []struct {
		props []string
		want  string
	}{
		{[]string{"ssl.truststore.location=" + ca.Truststore, "ssl.truststore.password=wrong"}, "truststore.p12: not PEM, and as PKCS12"},
		{[]string{"ssl.truststore.location=" + ca.Truststore, "ssl.truststore.type=JKS"}, "JKS stores are not supported"},
		{[]string{"ssl.ca.location=" + ca.CA, "ssl.certificate.location=" + alice.Cert}, "give the key with --tls-key"},
		{[]string{"ssl.ca.location=" + ca.CA, "ssl.key.location=" + alice.Key}, "without a certificate"},
		{[]string{"ssl.ca.location=" + ca.CA, "ssl.certificate.location=" + alice.Cert, "ssl.key.location=" + encryptedKey}, "no key password was given"},
		{[]string{"ssl.ca.location=" + ca.CA, "ssl.certificate.location=" + alice.Cert, "ssl.key.location=" + encryptedKey, "ssl.key.password=wrong"}, "decrypting the key"},
	} {
		s, err := Load(Sources{Properties: c.props})
		if err == nil {
			_, err = s.TLSConfig()
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q", c.props, err, c.want)
		}
	}
}

// encryptKey writes the PEM key of path encrypted with password (PKCS#8,
// as openssl pkcs8 -topk8 -v2 aes-256-cbc writes it) and returns the new
// file's path.
func encryptKey(t *testing.T, path, password string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil {
		t.Fatalf("%s: no PEM", path)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	enc, err := pkcs8.MarshalPrivateKey(key, []byte(password), nil)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, "encrypted-key.pem", string(pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: enc})))
}

// An empty ssl.endpoint.identification.algorithm skips the host name
// check but not the chain's.
func TestNoHostnameCheck(t *testing.T) {
	ca, err := devca.Ensure(t.TempDir(), nil, []int32{1})
	if err != nil {
		t.Fatal(err)
	}
	other, err := devca.Ensure(t.TempDir(), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(ca.Nodes[1].PEM, ca.Nodes[1].PEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	dial := func(caFile string, props ...string) error {
		s, err := Load(Sources{Properties: append(props, "ssl.ca.location="+caFile)})
		if err != nil {
			return err
		}
		cfg, err := s.TLSConfig()
		if err != nil {
			return err
		}
		cfg.ServerName = "elsewhere.example"
		c, err := tls.Dial("tcp", ln.Addr().String(), cfg)
		if err == nil {
			c.Close()
		}
		return err
	}
	if err := dial(ca.CA); err == nil {
		t.Fatal("a certificate without the name dialed was taken")
	}
	if err := dial(ca.CA, "ssl.endpoint.identification.algorithm="); err != nil {
		t.Fatalf("without the host name check: %v", err)
	}
	if err := dial(other.CA, "ssl.endpoint.identification.algorithm="); err == nil {
		t.Fatal("without the host name check, another CA's certificate was taken")
	}
}

// OAUTHBEARER takes a token from the flag, or makes the unsecured one
// Kafka's login module makes for a subject.
func TestOAuthBearer(t *testing.T) {
	s, err := Load(Sources{Properties: []string{"sasl.mechanism=OAUTHBEARER",
		`sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="alice";`}})
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(s.OAuthToken, ".")
	if len(parts) != 3 || parts[2] != "" {
		t.Fatalf("token %q: want header.claims.", s.OAuthToken)
	}
	claims, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil || !strings.Contains(string(claims), `"sub":"alice"`) {
		t.Fatalf("claims %s, %v", claims, err)
	}
	if opts, err := s.Opts(); err != nil || len(opts) != 1 {
		t.Fatalf("%d options, %v", len(opts), err)
	}
	s, err = Load(Sources{Flags: map[string]string{"sasl-mechanism": "OAUTHBEARER", "sasl-oauth-token": "tok"}})
	if err != nil || s.OAuthToken != "tok" || s.SecurityProtocol != SASLPlaintext {
		t.Fatalf("%+v, %v", s, err)
	}
}

// The unsecured token takes the claims, lifetime and extensions of
// Kafka's OAuthBearerLoginModule options, and is made anew for each
// connection.
func TestUnsecuredLogin(t *testing.T) {
	now := time.Unix(1700000000, 500e6)
	l := unsecuredLogin{"unsecuredLoginStringClaim_user": "carol", "unsecuredLoginPrincipalClaimName": "user",
		"unsecuredLoginNumberClaim_level": "2.5", "unsecuredLoginListClaim_scope": "|a|b", "unsecuredLoginListClaim_none": "|",
		"unsecuredLoginLifetimeSeconds": "60", "unsecuredLoginExtension_traceId": "t1", "other": "x"}
	a, err := l.auth(now)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(a.Token, ".")
	body, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var claims map[string]any
	if err := json.Unmarshal(body, &claims); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"user": "carol", "level": 2.5, "scope": []any{"a", "b"}, "none": []any{}, "iat": 1700000000.5, "exp": float64(1700000060)}
	if !reflect.DeepEqual(claims, want) || !reflect.DeepEqual(a.Extensions, map[string]string{"traceId": "t1"}) {
		t.Fatalf("claims %v extensions %v;\nwant %v", claims, a.Extensions, want)
	}
	for _, bad := range []unsecuredLogin{
		{"unsecuredLoginStringClaim_sub": "a", "unsecuredLoginNumberClaim_exp": "1"},
		{"unsecuredLoginStringClaim_sub": "a", "unsecuredLoginNumberClaim_n": "x"},
		{"unsecuredLoginStringClaim_sub": "a", "unsecuredLoginLifetimeSeconds": "soon"},
		{"unsecuredLoginStringClaim_user": "a"},
	} {
		if _, err := bad.auth(now); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
	// librdkafka's unsecured JWT config.
	lr, err := librdkafkaLogin("principalClaimName=user principal=dan scope=a,b lifeSeconds=60 extension_traceId=t2")
	if err != nil {
		t.Fatal(err)
	}
	if a, err = lr.auth(now); err != nil || !reflect.DeepEqual(a.Extensions, map[string]string{"traceId": "t2"}) {
		t.Fatalf("%v %v", a, err)
	}
	body, _ = base64.RawURLEncoding.DecodeString(strings.Split(a.Token, ".")[1])
	claims = nil
	json.Unmarshal(body, &claims)
	want = map[string]any{"user": "dan", "scope": []any{"a", "b"}, "iat": 1700000000.5, "exp": float64(1700000060)}
	if !reflect.DeepEqual(claims, want) {
		t.Fatalf("librdkafka's config: claims %v, want %v", claims, want)
	}
	if _, err := librdkafkaLogin("principal=dan colour=blue"); err == nil {
		t.Error("an unknown sasl.oauthbearer.config name taken")
	}
	s, err := Load(Sources{Properties: []string{"sasl.mechanism=OAUTHBEARER",
		`sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="alice";`}})
	if err != nil {
		t.Fatal(err)
	}
	m := s.oauthMechanism()
	_, first, err := m.Authenticate(context.Background(), "host")
	if err != nil || !strings.Contains(string(first), "auth=Bearer ey") {
		t.Fatalf("first message %q, %v", first, err)
	}
	testkit.WaitFor(t, "a later connection to get a token of its own", func() (bool, string) {
		_, again, _ := m.Authenticate(context.Background(), "host")
		return string(again) != string(first), ""
	})
}
