// Package tlsstore reads the key material of Kafka's ssl.* settings for
// klog's listeners and for klog as a client of a secured cluster: PKCS12
// keystores and truststores, PEM certificates and keys (a PKCS#8 key
// encrypted with a password too, as Kafka's ssl.key.password reads it),
// and it verifies a peer's chain without its host name, as Kafka does when
// ssl.endpoint.identification.algorithm is empty.
package tlsstore

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"strings"

	"github.com/youmark/pkcs8"
	"software.sslmate.com/src/go-pkcs12"
)

// Keystore decodes a PKCS12 keystore: its key, its certificate and the
// chain behind it.
func Keystore(data []byte, password string) (tls.Certificate, error) {
	key, leaf, chain, err := pkcs12.DecodeChain(data, password)
	if err != nil {
		return tls.Certificate{}, err
	}
	cert := tls.Certificate{Certificate: [][]byte{leaf.Raw}, PrivateKey: key, Leaf: leaf}
	for _, c := range chain {
		cert.Certificate = append(cert.Certificate, c.Raw)
	}
	return cert, nil
}

// Truststore decodes a PKCS12 truststore into a pool; a keystore serves as
// a truststore too (its certificate and chain), as in Java.
func Truststore(data []byte, password string) (*x509.CertPool, error) {
	certs, err := pkcs12.DecodeTrustStore(data, password)
	if err != nil {
		_, leaf, chain, kerr := pkcs12.DecodeChain(data, password)
		if kerr != nil {
			return nil, err
		}
		certs = append(chain, leaf)
	}
	pool := x509.NewCertPool()
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// PEMPool reads PEM certificates into a pool.
func PEMPool(data []byte) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, errors.New("no PEM certificate")
	}
	return pool, nil
}

// KeyPair pairs a PEM certificate chain with its PEM key. A key in an
// "ENCRYPTED PRIVATE KEY" block (PKCS#8 with PBES2, what openssl pkcs8
// -topk8 and Kafka's ssl.key.password use) is decrypted with password;
// an encrypted key without a password, or a password for a key that is
// not encrypted, is refused with a message that says so.
func KeyPair(certPEM, keyPEM []byte, password string) (tls.Certificate, error) {
	block, _ := firstKey(keyPEM)
	switch {
	case block == nil:
		return tls.X509KeyPair(certPEM, keyPEM) // its error names what is missing
	case block.Type == "ENCRYPTED PRIVATE KEY" && password == "":
		return tls.Certificate{}, errors.New("the key is encrypted and no key password was given")
	case block.Type == "ENCRYPTED PRIVATE KEY":
		key, err := pkcs8.ParsePKCS8PrivateKey(block.Bytes, []byte(password))
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("decrypting the key: %w", err)
		}
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return tls.Certificate{}, err
		}
		keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	case password != "":
		return tls.Certificate{}, errors.New("a key password was given but the key is not encrypted")
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}

// firstKey returns data's first PEM block holding a private key.
func firstKey(data []byte) (*pem.Block, []byte) {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil, nil
		}
		if strings.HasSuffix(b.Type, "PRIVATE KEY") {
			return b, data
		}
	}
}

// IsPEM reports whether a store of type typ ("PEM", "PKCS12" or "" for
// either) holding data is PEM.
func IsPEM(typ string, data []byte) bool {
	if strings.EqualFold(typ, "PEM") {
		return true
	}
	return typ == "" && bytes.Contains(data, []byte("-----BEGIN "))
}

// CheckType refuses store types klog cannot read.
func CheckType(typ string) error {
	switch strings.ToUpper(typ) {
	case "", "PKCS12":
		return nil
	case "JKS":
		return errors.New("JKS stores are not supported: convert to PKCS12 (keytool -importkeystore -deststoretype PKCS12) or use PEM")
	}
	return fmt.Errorf("store type %q: want PKCS12 or PEM", typ)
}

// VerifyChain checks the peer's certificate chain against roots (nil: the
// system's), without its host name, as a server's: the certificate must
// allow server authentication (or name no extended key usage).
func VerifyChain(cs tls.ConnectionState, roots *x509.CertPool) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("the peer sent no certificate")
	}
	opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
	for _, c := range cs.PeerCertificates[1:] {
		opts.Intermediates.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(opts)
	return err
}
