package broker_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/wire"
	"github.com/klogdev/klog/internal/testkit"
)

// testPKI is a certificate authority of a test, its certificates ECDSA,
// made with crypto/x509 and written as PEM under dir.
type testPKI struct {
	t      testing.TB
	dir    string
	ca     *x509.Certificate
	caKey  *ecdsa.PrivateKey
	caFile string
	serial int64
}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "klog test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(der)
	p := &testPKI{t: t, dir: t.TempDir(), ca: ca, caKey: key, serial: 1}
	p.caFile = p.write("ca.pem", pemBlock("CERTIFICATE", der))
	return p
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

func (p *testPKI) write(name string, data []byte) string {
	p.t.Helper()
	path := filepath.Join(p.dir, name)
	// Written aside and renamed, as a certificate is renewed: a reader
	// never sees half a file.
	if err := os.WriteFile(path+".tmp", data, 0o600); err != nil {
		p.t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		p.t.Fatal(err)
	}
	return path
}

// issue makes a certificate of subject for 127.0.0.1, for servers and
// clients alike.
func (p *testPKI) issue(subject pkix.Name) (*x509.Certificate, *ecdsa.PrivateKey) {
	p.t.Helper()
	return p.issueFor(subject, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth)
}

// issueFor makes a certificate of subject for 127.0.0.1 valid for usages.
func (p *testPKI) issueFor(subject pkix.Name, usages ...x509.ExtKeyUsage) (*x509.Certificate, *ecdsa.PrivateKey) {
	p.t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		p.t.Fatal(err)
	}
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial), Subject: subject,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: usages,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.ca, &key.PublicKey, p.caKey)
	if err != nil {
		p.t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return cert, key
}

// pemKeystore writes a PEM keystore (key, then certificate) of subject
// to name and returns its certificate.
func (p *testPKI) pemKeystore(name string, subject pkix.Name) *x509.Certificate {
	p.t.Helper()
	cert, key := p.issue(subject)
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		p.t.Fatal(err)
	}
	p.write(name, append(pemBlock("PRIVATE KEY", kder), pemBlock("CERTIFICATE", cert.Raw)...))
	return cert
}

// clientTLS is a client's TLS config trusting the CA, with a certificate
// of subject unless it is empty.
func (p *testPKI) clientTLS(subject pkix.Name) *tls.Config {
	pool := x509.NewCertPool()
	pool.AddCert(p.ca)
	cfg := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	if subject.CommonName != "" {
		cert, key := p.issue(subject)
		cfg.Certificates = []tls.Certificate{{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}}
	}
	return cfg
}

// serverConfigs are the ssl.* configs of a listener with the PEM keystore
// keystore and the CA as truststore.
func (p *testPKI) serverConfigs(keystore string) map[string]string {
	return map[string]string{
		"ssl.keystore.type":       "PEM",
		"ssl.keystore.location":   filepath.Join(p.dir, keystore),
		"ssl.truststore.type":     "PEM",
		"ssl.truststore.location": p.caFile,
	}
}

// testPlain is a SASL mechanism of the tests: PLAIN's token
// ("\x00user\x00password") checked against users.
type testPlain struct{ users map[string]string }

func (testPlain) Name() string { return "PLAIN" }

func (m testPlain) Start() auth.Exchange { return &testPlainExchange{users: m.users} }

type testPlainExchange struct {
	users map[string]string
	user  string
}

func (e *testPlainExchange) Next(token []byte) ([]byte, bool, error) {
	parts := bytes.Split(token, []byte{0})
	if len(parts) != 3 || e.users[string(parts[1])] == "" || e.users[string(parts[1])] != string(parts[2]) {
		return nil, false, fmt.Errorf("%w: Invalid username or password", auth.ErrAuthenticationFailed)
	}
	e.user = string(parts[1])
	return nil, true, nil
}

func (e *testPlainExchange) Principal() string { return "User:" + e.user }
func (e *testPlainExchange) Expiry() time.Time { return time.Time{} }

// principals records the principal of each request a node served, by
// listener and API.
type principals struct {
	mu    sync.Mutex
	seen  map[string]string // "LISTENER/Api" -> principal
	count map[string]int    // "LISTENER/Api" -> requests
}

func (p *principals) hook(_ context.Context, rc *wire.RequestContext, req kmsg.Request) (kmsg.Response, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil {
		p.seen, p.count = map[string]string{}, map[string]int{}
	}
	p.seen[rc.Listener+"/"+kmsg.NameForKey(req.Key())] = rc.Principal
	p.count[rc.Listener+"/"+kmsg.NameForKey(req.Key())]++
	if req.Key() == kmsg.SASLHandshake.Int16() && rc.SASLAuthenticated() {
		p.count[rc.Listener+"/reauthentication"]++
	}
	return nil, false, nil
}

// reauthentications counts the SaslHandshakes of connections that had
// authenticated already (KIP-368).
func (p *principals) reauthentications(listener string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.count[listener+"/reauthentication"]
}

func (p *principals) of(listener string, key kmsg.Key) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.seen[listener+"/"+kmsg.NameForKey(key.Int16())]
}

// startSecure starts a node in memory whose primary listener is
// PLAINTEXT on a free port, with configs (listeners among them) and the
// test PLAIN mechanism knowing alice.
func startSecure(t *testing.T, configs map[string]string, seen *principals) *broker.Node {
	t.Helper()
	cfg := broker.Config{Memory: true, Listen: "127.0.0.1:0", Configs: configs, Logger: testkit.Logger(t, slog.LevelWarn),
		SASLMechanisms: []auth.Mechanism{testPlain{users: map[string]string{"alice": "alice-secret"}}}}
	if seen != nil {
		cfg.RequestHook = seen.hook
	}
	n, err := broker.Start(testkit.Context(t), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

// startErr is the error of starting a node with configs, nil if it
// started (it is then closed).
func startErr(t *testing.T, configs map[string]string) error {
	n, err := broker.Start(testkit.Context(t), broker.Config{Memory: true, Listen: "127.0.0.1:0", Configs: configs, Logger: testkit.Logger(t, slog.LevelError)})
	if err == nil {
		n.Close()
	}
	return err
}

func withConfigs(base map[string]string, kv ...string) map[string]string {
	out := map[string]string{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// hostPort splits a listener's address.
func hostPort(t testing.TB, addr net.Addr) (string, int32) {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := strconv.Atoi(port)
	return host, int32(p)
}
