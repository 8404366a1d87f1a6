package devca

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"software.sslmate.com/src/go-pkcs12"
)

func ensure(t *testing.T, dir string, hosts []string, nodes ...int32) *Files {
	t.Helper()
	f, err := Ensure(dir, hosts, nodes)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func roots(t *testing.T, f *Files) *x509.CertPool {
	t.Helper()
	data, err := os.ReadFile(f.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		t.Fatal("ca.pem holds no certificate")
	}
	return pool
}

func leaf(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	c, err := tls.LoadX509KeyPair(path, path)
	if err != nil {
		t.Fatal(err)
	}
	return c.Leaf
}

// The node certificates chain to ca.pem for server auth, and carry every
// host as the right kind of name, with the loopback names always.
func TestNodeCertificates(t *testing.T) {
	f := ensure(t, t.TempDir(), []string{"10.1.2.3", "broker.example", "fe80::1"}, 1, 2)
	for _, id := range []int32{1, 2} {
		cert := leaf(t, f.Nodes[id].PEM)
		if _, err := cert.Verify(x509.VerifyOptions{Roots: roots(t, f), KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
			t.Fatalf("node %d: %v", id, err)
		}
		if !slices.Equal(cert.DNSNames, []string{"broker.example", "localhost"}) {
			t.Errorf("node %d DNS names %q", id, cert.DNSNames)
		}
		var ips []string
		for _, ip := range cert.IPAddresses {
			ips = append(ips, ip.String())
		}
		slices.Sort(ips)
		if !slices.Equal(ips, []string{"10.1.2.3", "127.0.0.1", "::1", "fe80::1"}) {
			t.Errorf("node %d IP names %q", id, ips)
		}
		for _, host := range []string{"localhost", "127.0.0.1", "::1", "broker.example", "10.1.2.3"} {
			if err := cert.VerifyHostname(host); err != nil {
				t.Errorf("node %d: %v", id, err)
			}
		}
	}
	caCert := parsePEM(t, f.CA)
	if !caCert.IsCA || !strings.HasPrefix(caCert.Subject.CommonName, "klog dev CA ") {
		t.Errorf("CA %q IsCA %v", caCert.Subject.CommonName, caCert.IsCA)
	}
	for _, p := range []string{f.CAKey, f.Nodes[1].PEM, f.Nodes[1].Keystore, filepath.Join(f.Dir, "password.txt")} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, %v; want 0600", filepath.Base(p), st.Mode().Perm(), err)
		}
	}
}

func parsePEM(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	der := firstBlock(data, "CERTIFICATE")
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A TLS server with a node's certificate is accepted by a client trusting
// only ca.pem, and, asking for client certificates, accepts a client
// certificate as its user's CN.
func TestHandshake(t *testing.T) {
	f := ensure(t, t.TempDir(), nil, 1)
	alice, err := f.Client("alice")
	if err != nil {
		t.Fatal(err)
	}
	serverCert, err := tls.LoadX509KeyPair(f.Nodes[1].PEM, f.Nodes[1].PEM)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{serverCert},
		ClientAuth:   tls.RequireAndVerifyClientCert, ClientCAs: roots(t, f),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	peer := make(chan string, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			peer <- err.Error()
			return
		}
		defer c.Close()
		tc := c.(*tls.Conn)
		if err := tc.Handshake(); err != nil {
			peer <- err.Error()
			return
		}
		peer <- "CN=" + tc.ConnectionState().PeerCertificates[0].Subject.CommonName
	}()
	clientCert, err := tls.LoadX509KeyPair(alice.Cert, alice.Key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: roots(t, f), ServerName: "localhost", Certificates: []tls.Certificate{clientCert}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := <-peer; got != "CN=alice" {
		t.Fatalf("server saw %q, want CN=alice", got)
	}
}

// The PKCS12 stores decode to the PEM files' certificates and keys.
func TestPKCS12(t *testing.T) {
	f := ensure(t, t.TempDir(), nil, 1)
	alice, err := f.Client("alice")
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(f.Truststore)
	if err != nil {
		t.Fatal(err)
	}
	certs, err := pkcs12.DecodeTrustStore(data, f.Password)
	if err != nil {
		t.Fatal(err)
	}
	if len(certs) != 1 || !certs[0].Equal(parsePEM(t, f.CA)) {
		t.Fatalf("truststore holds %d certificates, not the CA", len(certs))
	}
	for pemPath, p12 := range map[string]string{f.Nodes[1].PEM: f.Nodes[1].Keystore, alice.Cert: alice.Keystore} {
		data, err := os.ReadFile(p12)
		if err != nil {
			t.Fatal(err)
		}
		key, cert, chain, err := pkcs12.DecodeChain(data, f.Password)
		if err != nil {
			t.Fatalf("%s: %v", p12, err)
		}
		if !cert.Equal(parsePEM(t, pemPath)) || len(chain) != 1 || !chain[0].Equal(certs[0]) {
			t.Errorf("%s: not %s's certificate and the CA", p12, pemPath)
		}
		if pub, ok := key.(crypto.Signer); !ok || !bytes.Equal(marshalPub(t, pub.Public()), marshalPub(t, cert.PublicKey)) {
			t.Errorf("%s: the key is not the certificate's", p12)
		}
	}
}

func marshalPub(t *testing.T, k any) []byte {
	t.Helper()
	der, err := x509.MarshalPKIXPublicKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// Ensure again keeps the CA and the node certificates; a new host reissues
// the node certificates under the same CA.
func TestEnsureAgain(t *testing.T) {
	dir := t.TempDir()
	first := ensure(t, dir, []string{"a.example"}, 1)
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ca, node, store := read(first.CA), read(first.Nodes[1].PEM), read(first.Truststore)
	again := ensure(t, dir, []string{"a.example"}, 1)
	if !bytes.Equal(read(again.CA), ca) || !bytes.Equal(read(again.Nodes[1].PEM), node) || !bytes.Equal(read(again.Truststore), store) {
		t.Fatal("Ensure with the same hosts changed the CA, the node certificate or the truststore")
	}
	if again.Password != first.Password {
		t.Fatal("the stores' password changed")
	}
	moved := ensure(t, dir, []string{"a.example", "b.example"}, 1, 2)
	if !bytes.Equal(read(moved.CA), ca) {
		t.Fatal("a new host changed the CA")
	}
	if bytes.Equal(read(moved.Nodes[1].PEM), node) {
		t.Fatal("a new host kept node 1's certificate")
	}
	if err := leaf(t, moved.Nodes[1].PEM).VerifyHostname("b.example"); err != nil {
		t.Fatal(err)
	}
	if _, err := leaf(t, moved.Nodes[2].PEM).Verify(x509.VerifyOptions{Roots: roots(t, moved)}); err != nil {
		t.Fatal(err)
	}
}

// The client configs name the CA, the truststore and the user, and the
// franz-go snippet compiles for every mechanism.
func TestClientConfigs(t *testing.T) {
	f := ensure(t, t.TempDir(), nil, 1)
	users := []User{
		{Name: "admin", Password: `a"b\c`, Mechanism: "SCRAM-SHA-512"},
		{Name: "app", Password: "p", Mechanism: "SCRAM-SHA-256"},
		{Name: "plain", Password: "p", Mechanism: "PLAIN"},
	}
	paths, err := WriteClientConfigs(f, ClientConfig{Bootstrap: "127.0.0.1:1", MTLSBootstrap: "127.0.0.1:2", Users: users})
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) != 3*5+1 {
		t.Errorf("wrote %d files: %q", len(paths), paths)
	}
	java, err := os.ReadFile(filepath.Join(f.Dir, "admin.properties"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"security.protocol=SASL_SSL\n", "sasl.mechanism=SCRAM-SHA-512\n",
		`sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="a\\"b\\\\c";`,
		"ssl.truststore.location=" + f.Truststore + "\n", "ssl.truststore.password=" + f.Password + "\n", "ssl.truststore.type=PKCS12\n",
	} {
		if !strings.Contains(string(java), want) {
			t.Errorf("admin.properties lacks %q:\n%s", want, java)
		}
	}
	if _, err := os.Stat(filepath.Join(f.Dir, "client-app.p12")); err != nil {
		t.Errorf("no mTLS keystore for app: %v", err)
	}
	if testing.Short() {
		t.Skip("compiling the franz-go snippets takes seconds")
	}
	for _, u := range users {
		src, err := os.ReadFile(filepath.Join(f.Dir, u.Name+".franzgo.go"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), `"127.0.0.1:1"`) || !strings.Contains(string(src), f.CA) {
			t.Errorf("%s.franzgo.go names neither the bootstrap nor the CA", u.Name)
		}
		buildGo(t, string(src))
	}
}

// buildGo compiles a Go program against klog's module (its franz-go).
func buildGo(t *testing.T, src string) {
	t.Helper()
	dir := t.TempDir()
	main := filepath.Join(dir, "main.go")
	if err := os.WriteFile(main, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "prog"), main)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s\n%s", err, out, src)
	}
}
