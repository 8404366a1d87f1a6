// Package devca is the certificate authority of a development cluster
// (klog up --secure): a CA, a certificate per node naming every host it
// is reached at, a client certificate per user for mTLS, all ECDSA P-256,
// written under one directory as PEM and as PKCS12 stores for the JVM,
// and the ready-to-use client configs (Java and librdkafka properties, a
// franz-go snippet) that point at them. Nothing needs openssl or keytool.
//
// The directory holds:
//
//	ca.pem, ca.key            the CA certificate and its key
//	truststore.p12            the CA as a PKCS12 truststore
//	password.txt              the password of every .p12 file here
//	node-N.pem                node N's key, certificate and the CA (Kafka's PEM keystore)
//	node-N.p12                the same as a PKCS12 keystore
//	client-USER.pem, .key     USER's client certificate (CN=USER) and key
//	client-USER.p12           the same as a PKCS12 keystore
//	USER.properties, ...      the client configs (WriteClientConfigs)
//
// Ensure is idempotent: it keeps the CA it finds, and reissues a node's
// certificate only when its names change, it was signed by another CA, or
// it is about to expire. Files holding keys are written with mode 0600.
//
// It imports nothing of broker/ or store/.
package devca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Validity of what Ensure issues; a certificate within renewBefore of its
// end is reissued.
const (
	caValidity   = 10 * 365 * 24 * time.Hour
	leafValidity = 825 * 24 * time.Hour
	renewBefore  = 30 * 24 * time.Hour
)

// Files are the dev CA's files in Dir, as absolute paths.
type Files struct {
	Dir        string
	CA         string // ca.pem
	CAKey      string // ca.key
	Truststore string // truststore.p12
	// Password is the password of every PKCS12 store in Dir.
	Password string
	// Nodes are the nodes' key material by node id.
	Nodes map[int32]NodeFiles

	ca *issuer
}

// NodeFiles are one node's key material.
type NodeFiles struct {
	PEM      string // node-N.pem: key, certificate, CA certificate
	Keystore string // node-N.p12
}

// ClientFiles are one user's client key material for mTLS.
type ClientFiles struct {
	Cert     string // client-USER.pem
	Key      string // client-USER.key
	Keystore string // client-USER.p12
}

// issuer is the CA: its certificate and key.
type issuer struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

// Ensure makes the CA in dir (or keeps the one there), a certificate for
// each of nodes naming hosts and the loopback names, and the truststore.
func Ensure(dir string, hosts []string, nodes []int32) (*Files, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("dev CA: %w", err)
	}
	f := &Files{
		Dir: dir, CA: filepath.Join(dir, "ca.pem"), CAKey: filepath.Join(dir, "ca.key"),
		Truststore: filepath.Join(dir, "truststore.p12"), Nodes: map[int32]NodeFiles{},
	}
	if f.Password, err = ensurePassword(filepath.Join(dir, "password.txt")); err != nil {
		return nil, err
	}
	newCA, err := f.ensureCA()
	if err != nil {
		return nil, err
	}
	if newCA || !exists(f.Truststore) {
		if err := f.writeTruststore(); err != nil {
			return nil, err
		}
	}
	names := sanNames(hosts)
	for _, id := range nodes {
		n, err := f.ensureNode(id, names)
		if err != nil {
			return nil, err
		}
		f.Nodes[id] = n
	}
	return f, nil
}

// ensureCA loads the CA of the directory, or makes one; it reports whether
// it made one.
func (f *Files) ensureCA() (bool, error) {
	if ca, err := loadIssuer(f.CA, f.CAKey); err == nil && fresh(ca.cert) {
		f.ca = ca
		return false, nil
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return false, fmt.Errorf("dev CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return false, err
	}
	tmpl, err := template("klog dev CA "+f.Dir, caValidity)
	if err != nil {
		return false, err
	}
	tmpl.IsCA, tmpl.BasicConstraintsValid, tmpl.MaxPathLenZero = true, true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return false, fmt.Errorf("dev CA: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return false, err
	}
	f.ca = &issuer{cert: cert, key: key}
	keyPEM, err := keyPEM(key)
	if err != nil {
		return false, err
	}
	if err := writeFile(f.CAKey, keyPEM, 0o600); err != nil {
		return false, err
	}
	return true, writeFile(f.CA, certPEM(cert), 0o644)
}

// ensureNode keeps node id's certificate when it names exactly names and
// was issued by the CA, else issues it again.
func (f *Files) ensureNode(id int32, names []string) (NodeFiles, error) {
	n := NodeFiles{
		PEM:      filepath.Join(f.Dir, fmt.Sprintf("node-%d.pem", id)),
		Keystore: filepath.Join(f.Dir, fmt.Sprintf("node-%d.p12", id)),
	}
	if cert, _, err := loadLeaf(n.PEM, n.PEM); err == nil && f.issued(cert) && slices.Equal(certNames(cert), names) {
		if exists(n.Keystore) {
			return n, nil
		}
	}
	tmpl, err := template(fmt.Sprintf("klog node %d", id), leafValidity)
	if err != nil {
		return n, err
	}
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	for _, name := range names {
		if ip := net.ParseIP(name); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, name)
		}
	}
	return n, f.issueLeaf(tmpl, n.PEM, n.PEM, n.Keystore)
}

// Client makes (or keeps) user's client certificate for mTLS: CN=user,
// so that Kafka's default principal is User:CN=user and the rule
// RULE:^CN=(.*)$/$1/ maps it to user.
func (f *Files) Client(user string) (ClientFiles, error) {
	if user == "" || strings.ContainsAny(user, `/\`) {
		return ClientFiles{}, fmt.Errorf("dev CA: client user %q: want a name without slashes", user)
	}
	c := ClientFiles{
		Cert:     filepath.Join(f.Dir, "client-"+user+".pem"),
		Key:      filepath.Join(f.Dir, "client-"+user+".key"),
		Keystore: filepath.Join(f.Dir, "client-"+user+".p12"),
	}
	if cert, _, err := loadLeaf(c.Cert, c.Key); err == nil && f.issued(cert) && cert.Subject.CommonName == user && exists(c.Keystore) {
		return c, nil
	}
	tmpl, err := template(user, leafValidity)
	if err != nil {
		return c, err
	}
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	return c, f.issueLeaf(tmpl, c.Cert, c.Key, c.Keystore)
}

// issueLeaf signs tmpl with a new key and writes the certificate (with the
// CA's after it) to certPath, the key to keyPath (the same file: key
// first) and both to the PKCS12 keystore.
func (f *Files) issueLeaf(tmpl *x509.Certificate, certPath, keyPath, keystore string) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, f.ca.cert, &key.PublicKey, f.ca.key)
	if err != nil {
		return fmt.Errorf("dev CA: issue %s: %w", tmpl.Subject.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return err
	}
	kp, err := keyPEM(key)
	if err != nil {
		return err
	}
	chain := append(certPEM(cert), certPEM(f.ca.cert)...)
	if certPath == keyPath {
		if err := writeFile(certPath, append(kp, chain...), 0o600); err != nil {
			return err
		}
	} else {
		if err := writeFile(keyPath, kp, 0o600); err != nil {
			return err
		}
		if err := writeFile(certPath, chain, 0o644); err != nil {
			return err
		}
	}
	return f.writeKeystore(keystore, key, cert)
}

// issued reports whether cert was signed by the CA and is not about to
// expire.
func (f *Files) issued(cert *x509.Certificate) bool {
	return cert.CheckSignatureFrom(f.ca.cert) == nil && fresh(cert)
}

// fresh reports whether cert is valid now and for renewBefore more.
func fresh(cert *x509.Certificate) bool {
	now := time.Now()
	return now.After(cert.NotBefore) && now.Add(renewBefore).Before(cert.NotAfter)
}

// sanNames are the names a node certificate carries: hosts and the
// loopback names, sorted, without duplicates.
func sanNames(hosts []string) []string {
	names := []string{"127.0.0.1", "::1", "localhost"}
	for _, h := range hosts {
		if h = strings.TrimSpace(h); h != "" {
			if ip := net.ParseIP(h); ip != nil {
				h = ip.String()
			}
			names = append(names, h)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// certNames are the names cert carries, as sanNames writes them.
func certNames(cert *x509.Certificate) []string {
	names := slices.Clone(cert.DNSNames)
	for _, ip := range cert.IPAddresses {
		names = append(names, ip.String())
	}
	slices.Sort(names)
	return names
}

// template is a certificate template for cn with a random serial number.
func template(cn string, validity time.Duration) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
	}, nil
}

// ensurePassword reads the stores' password from path, or makes one.
func ensurePassword(path string) (string, error) {
	if data, err := os.ReadFile(path); err == nil && len(strings.TrimSpace(string(data))) > 0 {
		return strings.TrimSpace(string(data)), nil
	}
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	pw := hex.EncodeToString(b)
	return pw, writeFile(path, []byte(pw+"\n"), 0o600)
}

// exists reports whether path exists.
func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// certPEM encodes cert as PEM.
func certPEM(cert *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw})
}

// keyPEM encodes key as a PKCS8 PEM block, the form Kafka's PEM keystores
// and librdkafka read.
func keyPEM(key *ecdsa.PrivateKey) ([]byte, error) {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}
