package broker_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/klogdev/klog/broker/wire"
	"github.com/klogdev/klog/internal/testkit"
)

// saslNode starts a node with a PLAINTEXT and a SASL_SSL listener.
func saslNode(t *testing.T, seen *principals, kv ...string) (*testPKI, map[string]string) {
	t.Helper()
	pki := newTestPKI(t)
	pki.pemKeystore("server.pem", pkix.Name{CommonName: "node"})
	configs := withConfigs(pki.serverConfigs("server.pem"), append([]string{"listeners", "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0"}, kv...)...)
	return pki, configs
}

// TestListenersAnswerWithTheirEndpoints checks that a node with two
// listeners names, in Metadata, FindCoordinator and DescribeCluster, the
// address of the listener each request came on, and that a client
// authenticated with SASL over TLS is its principal.
func TestListenersAnswerWithTheirEndpoints(t *testing.T) {
	seen := &principals{}
	pki, configs := saslNode(t, seen)
	n := startSecure(t, configs, seen)
	ctx := testkit.Context(t)
	for _, tc := range []struct {
		listener string
		opts     []kgo.Opt
	}{
		{"PLAINTEXT", nil},
		{"SASL_SSL", []kgo.Opt{kgo.DialTLSConfig(pki.clientTLS(pkix.Name{})), kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism())}},
	} {
		addr := n.ListenerAddr(tc.listener)
		wantHost, wantPort := hostPort(t, addr)
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(addr.String())}, tc.opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		meta, err := kadm.NewClient(cl).BrokerMetadata(ctx)
		if err != nil {
			t.Fatalf("%s: metadata: %v", tc.listener, err)
		}
		if len(meta.Brokers) != 1 || meta.Brokers[0].Host != wantHost || meta.Brokers[0].Port != wantPort {
			t.Errorf("%s: Metadata names %+v, want %s:%d", tc.listener, meta.Brokers, wantHost, wantPort)
		}
		fc := kmsg.NewPtrFindCoordinatorRequest()
		fc.CoordinatorKey = "g"
		testkit.WaitFor(t, "the group coordinator", func() (bool, string) {
			resp, err := fc.RequestWith(ctx, cl)
			if err != nil || resp.ErrorCode != 0 {
				return false, ""
			}
			if resp.Host != wantHost || resp.Port != wantPort {
				t.Fatalf("%s: FindCoordinator names %s:%d, want %s:%d", tc.listener, resp.Host, resp.Port, wantHost, wantPort)
			}
			return true, ""
		})
		dc, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, cl)
		if err != nil || len(dc.Brokers) != 1 || dc.Brokers[0].Host != wantHost || dc.Brokers[0].Port != wantPort {
			t.Errorf("%s: DescribeCluster %+v, %v; want %s:%d", tc.listener, dc, err, wantHost, wantPort)
		}
	}
	if p := seen.of("SASL_SSL", kmsg.Metadata); p != "User:alice" {
		t.Errorf("principal on the SASL_SSL listener %q, want User:alice", p)
	}
	if p := seen.of("PLAINTEXT", kmsg.Metadata); p != wire.AnonymousPrincipal {
		t.Errorf("principal on the PLAINTEXT listener %q, want %s", p, wire.AnonymousPrincipal)
	}
}

// dialSASL connects to a SASL_SSL listener without authenticating.
func dialSASL(t *testing.T, pki *testPKI, addr net.Addr) *wire.Conn {
	t.Helper()
	c, err := wire.Dial(testkit.Context(t), addr.String(), wire.DialConfig{ClientID: "test", Timeout: 5 * time.Second, MaxFrame: 1 << 20,
		TLS: func() (*tls.Config, error) { return pki.clientTLS(pkix.Name{}), nil }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestSASLGate checks that a connection to a SASL listener that has not
// authenticated may send ApiVersions and SaslHandshake, and is closed at
// anything else, as Kafka's SaslServerAuthenticator does.
func TestSASLGate(t *testing.T) {
	pki, configs := saslNode(t, nil)
	n := startSecure(t, configs, nil)
	ctx := testkit.Context(t)
	addr := n.ListenerAddr("SASL_SSL")

	c := dialSASL(t, pki, addr)
	av := kmsg.NewPtrApiVersionsRequest()
	if _, err := c.Do(ctx, av, 5*time.Second); err != nil {
		t.Fatalf("ApiVersions before authentication: %v", err)
	}
	produce := kmsg.NewPtrProduceRequest()
	produce.Version, produce.Acks, produce.TimeoutMillis = 9, 1, 1000
	if _, err := c.Do(ctx, produce, 5*time.Second); !closed(err) {
		t.Fatalf("unauthenticated Produce: %v, want the connection closed", err)
	}

	c = dialSASL(t, pki, addr)
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version = 1
	if _, err := c.Do(ctx, auth, 5*time.Second); !closed(err) {
		t.Fatalf("SaslAuthenticate before a handshake: %v, want the connection closed", err)
	}

	c = dialSASL(t, pki, addr)
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "PLAIN"
	resp, err := c.Do(ctx, hs, 5*time.Second)
	if err != nil || resp.(*kmsg.SASLHandshakeResponse).ErrorCode != 0 {
		t.Fatalf("SaslHandshake: %+v, %v", resp, err)
	}
	// Between the handshake and the authentication a request is answered
	// (its error code ILLEGAL_SASL_STATE where it has one at the top),
	// then the connection closed, as Kafka answers.
	md := kmsg.NewPtrMetadataRequest()
	md.Version = 12
	if resp, err := c.Do(ctx, md, 5*time.Second); err != nil || len(resp.(*kmsg.MetadataResponse).Brokers) != 0 {
		t.Fatalf("Metadata between handshake and authentication: %+v, %v, want an empty answer", resp, err)
	}
	if _, err := c.Do(ctx, md, 5*time.Second); !closed(err) {
		t.Fatalf("a request after the out-of-turn one: %v, want the connection closed", err)
	}
	c = dialSASL(t, pki, addr)
	if _, err := c.Do(ctx, hs, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if resp, err := c.Do(ctx, kmsg.NewPtrDescribeClusterRequest(), 5*time.Second); err != nil ||
		resp.(*kmsg.DescribeClusterResponse).ErrorCode != kerr.IllegalSaslState.Code {
		t.Fatalf("DescribeCluster between handshake and authentication: %+v, %v, want ILLEGAL_SASL_STATE", resp, err)
	}

	// A token past 512 KiB before authentication closes the connection
	// unread, as Kafka's sasl.server.max.receive.size.
	c = dialSASL(t, pki, addr)
	if _, err := c.Do(ctx, hs, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	auth.SASLAuthBytes = make([]byte, 600<<10)
	if _, err := c.Do(ctx, auth, 5*time.Second); !closed(err) {
		t.Fatalf("an oversized token: %v, want the connection closed", err)
	}

	// On a listener without SASL, the SASL keys are answered
	// ILLEGAL_SASL_STATE, as Kafka's KafkaApis does.
	pc, err := wire.Dial(ctx, n.ListenerAddr("PLAINTEXT").String(), wire.DialConfig{ClientID: "test", Timeout: 5 * time.Second, MaxFrame: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	if resp, err := pc.Do(ctx, hs, 5*time.Second); err != nil || resp.(*kmsg.SASLHandshakeResponse).ErrorCode != kerr.IllegalSaslState.Code {
		t.Errorf("SaslHandshake on PLAINTEXT: %+v, %v; want ILLEGAL_SASL_STATE", resp, err)
	}
}

// closed reports whether err is the connection closed under a request.
// closed reports whether err is what a client meets on a connection the
// node closed: end of file on a read, or a write refused (reset, broken
// pipe) when the close came while the client was still sending.
func closed(err error) bool {
	return err != nil && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE))
}

// TestSASLFailures checks Kafka's answers to a wrong password (after
// connection.failed.authentication.delay.ms) and to a mechanism the
// listener does not offer.
func TestSASLFailures(t *testing.T) {
	pki, configs := saslNode(t, nil, "connection.failed.authentication.delay.ms", "400", "sasl.enabled.mechanisms", "PLAIN")
	n := startSecure(t, configs, nil)
	ctx := testkit.Context(t)
	addr := n.ListenerAddr("SASL_SSL").String()
	tlsCfg := func() (*tls.Config, error) { return pki.clientTLS(pkix.Name{}), nil }
	start := time.Now()
	_, err := wire.Dial(ctx, addr, wire.DialConfig{ClientID: "test", Timeout: 5 * time.Second, MaxFrame: 1 << 20, TLS: tlsCfg,
		SASL: plain.Auth{User: "alice", Pass: "wrong"}.AsMechanism()})
	if !errors.Is(err, kerr.SaslAuthenticationFailed) || !strings.Contains(err.Error(), "Invalid username or password") {
		t.Errorf("wrong password: %v, want SASL_AUTHENTICATION_FAILED with the mechanism's message", err)
	}
	if took := time.Since(start); took < 400*time.Millisecond {
		t.Errorf("a failed authentication was answered after %v, before connection.failed.authentication.delay.ms", took)
	}
	_, err = wire.Dial(ctx, addr, wire.DialConfig{ClientID: "test", Timeout: 5 * time.Second, MaxFrame: 1 << 20, TLS: tlsCfg,
		SASL: scram.Auth{User: "alice", Pass: "alice-secret"}.AsSha256Mechanism()})
	if !errors.Is(err, kerr.UnsupportedSaslMechanism) {
		t.Errorf("a mechanism the listener does not offer: %v, want UNSUPPORTED_SASL_MECHANISM", err)
	}
	// A client authenticated on the same listener is served.
	c, err := wire.Dial(ctx, addr, wire.DialConfig{ClientID: "test", Timeout: 5 * time.Second, MaxFrame: 1 << 20, TLS: tlsCfg,
		SASL: plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do(ctx, kmsg.NewPtrMetadataRequest(), 5*time.Second); err != nil {
		t.Errorf("Metadata once authenticated: %v", err)
	}
}

// TestSASLHandshakeV0BareTokens checks the exchange a SaslHandshake v0
// begins: the mechanism's tokens as bare size-prefixed frames, then
// Kafka requests as the authenticated principal.
func TestSASLHandshakeV0BareTokens(t *testing.T) {
	seen := &principals{}
	pki, configs := saslNode(t, seen)
	n := startSecure(t, configs, seen)
	conn, err := tls.Dial("tcp", n.ListenerAddr("SASL_SSL").String(), pki.clientTLS(pkix.Name{}))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	rd := bufio.NewReader(conn)
	f := kmsg.NewRequestFormatter(kmsg.FormatterClientID("test"))
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 0, "PLAIN"
	if _, err := conn.Write(f.AppendRequest(nil, hs, 1)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := wire.ReadFrame(rd, 1<<20, nil, nil); err != nil {
		t.Fatalf("SaslHandshake v0 answer: %v", err)
	}
	token := []byte("\x00alice\x00alice-secret")
	if _, err := conn.Write(append([]byte{0, 0, 0, byte(len(token))}, token...)); err != nil {
		t.Fatal(err)
	}
	var size [4]byte
	if _, err := io.ReadFull(rd, size[:]); err != nil || size != [4]byte{} {
		t.Fatalf("bare answer to the token: %v %v, want an empty token", size, err)
	}
	if _, err := conn.Write(f.AppendRequest(nil, kmsg.NewPtrMetadataRequest(), 2)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := wire.ReadFrame(rd, 1<<20, nil, nil); err != nil {
		t.Fatalf("Metadata after bare tokens: %v", err)
	}
	if p := seen.of("SASL_SSL", kmsg.Metadata); p != "User:alice" {
		t.Errorf("principal %q, want User:alice", p)
	}
}

// TestSASLSessionLifetime checks KIP-368 on the server side: the
// session lifetime of connections.max.reauth.ms in SaslAuthenticate v1,
// and the connection closed at its first request after the session
// lapsed.
func TestSASLSessionLifetime(t *testing.T) {
	pki, configs := saslNode(t, nil, "listener.name.sasl_ssl.connections.max.reauth.ms", "600")
	n := startSecure(t, configs, nil)
	ctx := testkit.Context(t)
	c := dialSASL(t, pki, n.ListenerAddr("SASL_SSL"))
	hs := kmsg.NewPtrSASLHandshakeRequest()
	hs.Version, hs.Mechanism = 1, "PLAIN"
	if _, err := c.Do(ctx, hs, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	auth := kmsg.NewPtrSASLAuthenticateRequest()
	auth.Version, auth.SASLAuthBytes = 1, []byte("\x00alice\x00alice-secret")
	resp, err := c.Do(ctx, auth, 5*time.Second)
	authenticated := time.Now()
	if err != nil {
		t.Fatal(err)
	}
	if ar := resp.(*kmsg.SASLAuthenticateResponse); ar.ErrorCode != 0 || ar.SessionLifetimeMillis != 600 {
		t.Fatalf("SaslAuthenticate answered %+v, want session_lifetime_ms 600", ar)
	}
	// Another connection authenticates again once its session lapsed.
	c2 := dialSASL(t, pki, n.ListenerAddr("SASL_SSL"))
	for _, req := range []kmsg.Request{hs, auth} {
		if _, err := c2.Do(ctx, req, 5*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	lapsed := time.Now().Add(700 * time.Millisecond)
	testkit.WaitFor(t, "the second session to lapse", func() (bool, string) { return time.Now().After(lapsed), "" })
	for _, req := range []kmsg.Request{hs, auth, kmsg.NewPtrMetadataRequest()} {
		if _, err := c2.Do(ctx, req, 5*time.Second); err != nil {
			t.Fatalf("%s after re-authenticating a lapsed session: %v", kmsg.NameForKey(req.Key()), err)
		}
	}
	testkit.WaitFor(t, "the session to lapse and close the connection", func() (bool, string) {
		_, err := c.Do(ctx, kmsg.NewPtrApiVersionsRequest(), 5*time.Second)
		return err != nil, ""
	})
	if lasted := time.Since(authenticated); lasted < 600*time.Millisecond {
		t.Errorf("the connection closed %v after authenticating, before its session lapsed", lasted)
	}
}

// TestSASLReauthentication checks that a franz-go client re-authenticates
// on its connection before connections.max.reauth.ms lapses (KIP-368)
// and goes on producing on it. With a lifetime of 1s, which franz-go
// shortens by at least 1s, it re-authenticates before each request.
func TestSASLReauthentication(t *testing.T) {
	seen := &principals{}
	pki, configs := saslNode(t, seen, "connections.max.reauth.ms", "1000")
	n := startSecure(t, configs, seen)
	ctx := testkit.Context(t)
	cl, err := kgo.NewClient(kgo.SeedBrokers(n.ListenerAddr("SASL_SSL").String()), kgo.DialTLSConfig(pki.clientTLS(pkix.Name{})),
		kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()), kgo.AllowAutoTopicCreation())
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	testkit.WaitFor(t, "the client to re-authenticate twice", func() (bool, string) {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "reauth", Value: []byte("v")}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
		return seen.reauthentications("SASL_SSL") >= 2, ""
	})
	if p := seen.of("SASL_SSL", kmsg.Produce); p != "User:alice" {
		t.Errorf("principal after re-authentication %q, want User:alice", p)
	}
}

// TestSASLSSLClientAuth checks that a SASL_SSL listener asks for client
// certificates only by its own listener.name.<name>.ssl.client.auth, as
// Kafka: the broker-wide ssl.client.auth is for SSL listeners.
func TestSASLSSLClientAuth(t *testing.T) {
	for _, tc := range []struct {
		config  string
		refused bool
	}{{"ssl.client.auth", false}, {"listener.name.sasl_ssl.ssl.client.auth", true}} {
		pki, configs := saslNode(t, nil, tc.config, "required")
		n := startSecure(t, configs, nil)
		cl, err := kgo.NewClient(kgo.SeedBrokers(n.ListenerAddr("SASL_SSL").String()), kgo.DialTLSConfig(pki.clientTLS(pkix.Name{})),
			kgo.SASL(plain.Auth{User: "alice", Pass: "alice-secret"}.AsMechanism()), kgo.RequestRetries(0))
		if err != nil {
			t.Fatal(err)
		}
		_, err = kadm.NewClient(cl).BrokerMetadata(testkit.Context(t))
		cl.Close()
		if refused := err != nil; refused != tc.refused {
			t.Errorf("%s=required: a client without a certificate refused %v (%v), want %v", tc.config, refused, err, tc.refused)
		}
	}
}
