package broker_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/youmark/pkcs8"
	"software.sslmate.com/src/go-pkcs12"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/broker/events"
	"github.com/klogdev/klog/internal/testkit"
)

// sslNode starts a node with a PLAINTEXT and an SSL listener.
func sslNode(t *testing.T, seen *principals, kv ...string) (*testPKI, net.Addr) {
	t.Helper()
	pki := newTestPKI(t)
	pki.pemKeystore("server.pem", pkix.Name{CommonName: "node"})
	configs := withConfigs(pki.serverConfigs("server.pem"), append([]string{"listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"}, kv...)...)
	n := startSecure(t, configs, seen)
	return pki, n.ListenerAddr("SSL")
}

// metadataOver asks a node for its brokers over TLS with cfg.
func metadataOver(t *testing.T, addr net.Addr, cfg *tls.Config) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr.String()), kgo.DialTLSConfig(cfg), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	_, err = kadm.NewClient(cl).BrokerMetadata(testkit.Context(t))
	return err
}

// TestMutualTLS checks ssl.client.auth=required on one listener (its
// listener.name override): a client without a certificate is refused,
// one with a certificate of the CA is served as the principal
// ssl.principal.mapping.rules make of its subject.
func TestMutualTLS(t *testing.T) {
	seen := &principals{}
	pki, addr := sslNode(t, seen, "listener.name.ssl.ssl.client.auth", "required",
		"ssl.principal.mapping.rules", "RULE:^CN=([^,]*),OU=apps,.*$/$1/L,DEFAULT")
	if err := metadataOver(t, addr, pki.clientTLS(pkix.Name{})); err == nil {
		t.Fatal("a client without a certificate was served")
	}
	if err := metadataOver(t, addr, pki.clientTLS(pkix.Name{CommonName: "Orders", OrganizationalUnit: []string{"apps"}, Organization: []string{"klog"}})); err != nil {
		t.Fatalf("a client with a certificate: %v", err)
	}
	if p := seen.of("SSL", kmsg.Metadata); p != "User:orders" {
		t.Errorf("principal %q, want User:orders (the mapped subject)", p)
	}
	if err := metadataOver(t, addr, pki.clientTLS(pkix.Name{CommonName: "ops", Organization: []string{"klog"}})); err != nil {
		t.Fatalf("a client whose subject only DEFAULT maps: %v", err)
	}
	if p := seen.of("SSL", kmsg.Metadata); p != "User:CN=ops,O=klog" {
		t.Errorf("principal %q, want User:CN=ops,O=klog (DEFAULT)", p)
	}
	bad := withConfigs(pki.serverConfigs("server.pem"), "listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0", "ssl.principal.mapping.rules", "RULE:^CN=(.*)$/$1/X")
	if err := startErr(t, bad); err == nil {
		t.Error("a node started with ssl.principal.mapping.rules that do not parse")
	}
}

// TestRefusedTLSHandshakesAreEvents: a connection an SSL listener
// refuses at its handshake is an authentication_failed event (mechanism
// TLS) saying why: no client certificate, one of another CA, a client
// speaking plaintext. A connection that closes without sending a byte (a
// check that the port is open) is none.
func TestRefusedTLSHandshakesAreEvents(t *testing.T) {
	pki := newTestPKI(t)
	pki.pemKeystore("server.pem", pkix.Name{CommonName: "node"})
	n := startSecure(t, withConfigs(pki.serverConfigs("server.pem"), "listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
		"listener.name.ssl.ssl.client.auth", "required"), nil)
	addr := n.ListenerAddr("SSL")

	if c, err := net.Dial("tcp", addr.String()); err == nil {
		c.Close()
	}
	if err := metadataOver(t, addr, pki.clientTLS(pkix.Name{})); err == nil {
		t.Fatal("a client without a certificate was served")
	}
	stranger := newTestPKI(t).clientTLS(pkix.Name{CommonName: "stranger"})
	stranger.RootCAs = pki.clientTLS(pkix.Name{}).RootCAs
	if err := metadataOver(t, addr, stranger); err == nil {
		t.Fatal("a client with a certificate of another CA was served")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addr.String()), kgo.RequestRetries(0))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(testkit.Context(t), 5*time.Second)
	_, _ = kadm.NewClient(cl).BrokerMetadata(ctx)
	cancel()
	cl.Close()

	want := map[string]string{
		"no client certificate (ssl.client.auth=required)":                                                               "",
		"client certificate not signed by a CA of the truststore":                                                        "subject CN=stranger",
		"not TLS: the client spoke another protocol to an SSL listener (security.protocol PLAINTEXT or SASL_PLAINTEXT?)": "",
	}
	testkit.WaitFor(t, "an event for each refused handshake", func() (bool, string) {
		got := map[string]string{}
		others := 0
		for _, e := range n.Events().Since(0, 0).Events {
			if e.Kind != events.AuthenticationFailed {
				continue
			}
			if e.Detail["mechanism"] != "TLS" || e.Detail["listener"] != "SSL" || e.Detail["address"] == "" {
				return false, fmt.Sprintf("event %v", e.Detail)
			}
			r, _ := e.Detail["reason"].(string)
			if _, ok := want[r]; !ok {
				others++
			}
			got[r], _ = e.Detail["principal"].(string)
		}
		for r, p := range want {
			if q, ok := got[r]; !ok || q != p {
				return false, fmt.Sprintf("events %q", got)
			}
		}
		return others == 0, fmt.Sprintf("events %q", got)
	})
}

// TestTLSAnonymousWithoutClientCertificate checks that an SSL listener
// that does not ask for certificates serves User:ANONYMOUS.
func TestTLSAnonymousWithoutClientCertificate(t *testing.T) {
	seen := &principals{}
	pki, addr := sslNode(t, seen, "ssl.enabled.protocols", "TLSv1.3")
	cfg := pki.clientTLS(pkix.Name{})
	cfg.MaxVersion = tls.VersionTLS12
	if err := metadataOver(t, addr, cfg); err == nil {
		t.Error("a TLS 1.2 client was served with ssl.enabled.protocols=TLSv1.3")
	}
	if err := metadataOver(t, addr, pki.clientTLS(pkix.Name{})); err != nil {
		t.Fatal(err)
	}
	if p := seen.of("SSL", kmsg.Metadata); p != "User:ANONYMOUS" {
		t.Errorf("principal %q, want User:ANONYMOUS", p)
	}
}

// TestTLSReload checks that a keystore renewed on disk reaches new
// connections without a restart.
func TestTLSReload(t *testing.T) {
	pki, addr := sslNode(t, nil)
	serial := func() int64 {
		conn, err := tls.Dial("tcp", addr.String(), pki.clientTLS(pkix.Name{}))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].SerialNumber.Int64()
	}
	first := serial()
	renewed := pki.pemKeystore("server.pem", pkix.Name{CommonName: "node renewed"}).SerialNumber.Int64()
	if renewed == first {
		t.Fatal("the renewed certificate has the old serial")
	}
	testkit.WaitFor(t, "new connections to get the renewed certificate", func() (bool, string) {
		got := serial()
		return got == renewed, "serial " + itoa(got)
	})
	// A keystore that no longer loads keeps the last good one.
	pki.write("server.pem", []byte("not a keystore"))
	for range 3 {
		if got := serial(); got != renewed {
			t.Fatalf("after a broken keystore, serial %d, want %d", got, renewed)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestTLSHandshakeDeadline checks that a connection that never finishes
// its TLS handshake is closed within socket.request.progress.timeout.ms.
func TestTLSHandshakeDeadline(t *testing.T) {
	_, addr := sslNode(t, nil, "socket.request.progress.timeout.ms", "500")
	conn, err := net.Dial("tcp", addr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(testkit.WaitTimeout))
	var b [1]byte
	_, err = conn.Read(b[:])
	took := time.Since(start)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("a connection sending nothing was still open after %v", took)
	}
	if took < 400*time.Millisecond || took > 5*time.Second {
		t.Errorf("closed after %v, want about socket.request.progress.timeout.ms (500ms)", took)
	}
}

// TestTLSPKCS12 checks PKCS12 key material: a keystore with a password
// and a truststore, as Java's keytool makes them.
func TestTLSPKCS12(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(pkix.Name{CommonName: "node"})
	ks, err := pkcs12.Modern.Encode(key, cert, nil, "ks-pass")
	if err != nil {
		t.Fatal(err)
	}
	ts, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{pki.ca}, "ts-pass")
	if err != nil {
		t.Fatal(err)
	}
	configs := map[string]string{
		"listeners":               "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0",
		"ssl.keystore.type":       "PKCS12",
		"ssl.keystore.location":   pki.write("server.p12", ks),
		"ssl.keystore.password":   "ks-pass",
		"ssl.truststore.type":     "PKCS12",
		"ssl.truststore.location": pki.write("trust.p12", ts),
		"ssl.truststore.password": "ts-pass",
		"ssl.client.auth":         "required",
	}
	n := startSecure(t, configs, nil)
	if err := metadataOver(t, n.ListenerAddr("SSL"), pki.clientTLS(pkix.Name{CommonName: "app"})); err != nil {
		t.Fatal(err)
	}
	// DescribeConfigs never shows a password, as Kafka answers null.
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.Addr().String()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	rcs, err := kadm.NewClient(cl).DescribeBrokerConfigs(testkit.Context(t), 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range rcs {
		for _, c := range rc.Configs {
			if c.Key == "ssl.keystore.password" && (c.Value != nil || !c.Sensitive) {
				t.Errorf("ssl.keystore.password described as %v (sensitive %v), want null and sensitive", c.MaybeValue(), c.Sensitive)
			}
		}
	}
	bad := withConfigs(configs, "ssl.keystore.password", "wrong")
	if err := startErr(t, bad); err == nil {
		t.Error("a node started with a wrong keystore password")
	}
}

// TestTLSEncryptedPEMKey checks a PEM keystore whose key is encrypted
// (PKCS#8, ENCRYPTED PRIVATE KEY) with ssl.key.password, as Kafka reads
// it: served with the password, refused at start without it or with a
// wrong one.
func TestTLSEncryptedPEMKey(t *testing.T) {
	pki := newTestPKI(t)
	cert, key := pki.issue(pkix.Name{CommonName: "node"})
	enc, err := pkcs8.MarshalPrivateKey(key, []byte("key-pass"), nil)
	if err != nil {
		t.Fatal(err)
	}
	pki.write("server.pem", append(pemBlock("ENCRYPTED PRIVATE KEY", enc), pemBlock("CERTIFICATE", cert.Raw)...))
	configs := withConfigs(pki.serverConfigs("server.pem"), "listeners", "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0")
	n := startSecure(t, withConfigs(configs, "ssl.key.password", "key-pass"), nil)
	if err := metadataOver(t, n.ListenerAddr("SSL"), pki.clientTLS(pkix.Name{})); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []map[string]string{configs, withConfigs(configs, "ssl.key.password", "wrong")} {
		if err := startErr(t, bad); err == nil {
			t.Errorf("a node started with ssl.key.password %q", bad["ssl.key.password"])
		}
	}
}

// TestInterBrokerSecured checks 3-node clusters whose inter-broker
// listener is secured (SSL with mutual TLS; SASL_SSL with PLAIN and the
// JAAS config's credentials): followers replicate, and every
// node-to-node connection is on that listener.
func TestInterBrokerSecured(t *testing.T) {
	for _, tc := range []struct {
		protocol string
		configs  []string
	}{
		{"SSL", []string{"ssl.client.auth", "required"}},
		{"SASL_SSL", []string{"sasl.mechanism.inter.broker.protocol", "PLAIN",
			"listener.name.internal.plain.sasl.jaas.config", `org.apache.kafka.common.security.plain.PlainLoginModule required username="broker" password="broker-secret";`}},
	} {
		t.Run(tc.protocol, func(t *testing.T) {
			pki := newTestPKI(t)
			pki.pemKeystore("node.pem", pkix.Name{CommonName: "node"})
			kv := append([]string{"listeners", "PLAINTEXT://127.0.0.1:0,INTERNAL://127.0.0.1:0",
				"listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,INTERNAL:" + tc.protocol,
				"inter.broker.listener.name", "INTERNAL"}, tc.configs...)
			opts := []brokertest.Option{brokertest.Nodes(3), brokertest.Topic("t", 1, 3),
				brokertest.SASLMechanisms(testPlain{users: map[string]string{"broker": "broker-secret"}})}
			for k, v := range withConfigs(pki.serverConfigs("node.pem"), kv...) {
				opts = append(opts, brokertest.Config(k, v))
			}
			c := brokertest.New(t, opts...)
			replicatesOn(t, c, "INTERNAL")
		})
	}
}

// replicatesOn checks that c replicates acks=all produces and that its
// nodes' connections to each other are on listener only.
func replicatesOn(t *testing.T, c *brokertest.Cluster, listener string) {
	cl := c.Client(kgo.RequiredAcks(kgo.AllISRAcks()))
	ctx := testkit.Context(t)
	for i := range 10 {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "t", Value: []byte{byte(i)}}).FirstErr(); err != nil {
			t.Fatalf("produce acks=all: %v", err)
		}
	}
	testkit.WaitFor(t, "followers to fetch over "+listener+" only", func() (bool, string) {
		secured, plain := 0, 0
		for _, node := range c.Nodes() {
			secured += node.Broker().PeerConnectionsForTest(listener)
			plain += node.Broker().PeerConnectionsForTest("PLAINTEXT")
		}
		return secured >= 2 && plain == 0, listener + " " + itoa(int64(secured)) + ", PLAINTEXT " + itoa(int64(plain))
	})
}
