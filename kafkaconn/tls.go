package kafkaconn

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"

	"software.sslmate.com/src/go-pkcs12"
)

// loadCA reads the CA file: PEM certificates, or a PKCS12 truststore.
func (s *Settings) loadCA() (*x509.CertPool, error) {
	data, err := os.ReadFile(s.CA)
	if err != nil {
		return nil, s.errorf("tls-ca", "%v", err)
	}
	pool := x509.NewCertPool()
	if isPEM(s.CAType, data) {
		if !pool.AppendCertsFromPEM(data) {
			return nil, s.errorf("tls-ca", "%s holds no PEM certificate", s.CA)
		}
		return pool, nil
	}
	if err := checkType(s.CAType); err != nil {
		return nil, s.errorf("tls-ca", "%s: %v", s.CA, err)
	}
	certs, err := pkcs12.DecodeTrustStore(data, s.CAPassword)
	if err != nil {
		// A keystore serves as a truststore too, as in Java.
		_, cert, chain, kerr := pkcs12.DecodeChain(data, s.CAPassword)
		if kerr != nil {
			return nil, s.errorf("tls-ca", "%s: not PEM, and as PKCS12: %v", s.CA, err)
		}
		certs = append(chain, cert)
	}
	for _, c := range certs {
		pool.AddCert(c)
	}
	return pool, nil
}

// loadCert reads the client certificate and key: PEM files (the key in
// Key, or in the certificate's file), or a PKCS12 keystore.
func (s *Settings) loadCert() (tls.Certificate, error) {
	if s.Cert == "" {
		return tls.Certificate{}, s.errorf("tls-key", "%s without a certificate: --tls-cert or KLOG_TLS_CERT", s.Key)
	}
	data, err := os.ReadFile(s.Cert)
	if err != nil {
		return tls.Certificate{}, s.errorf("tls-cert", "%v", err)
	}
	if isPEM(s.CertType, data) {
		return s.loadPEMCert(data)
	}
	if err := checkType(s.CertType); err != nil {
		return tls.Certificate{}, s.errorf("tls-cert", "%s: %v", s.Cert, err)
	}
	key, cert, chain, err := pkcs12.DecodeChain(data, s.CertPassword)
	if err != nil {
		return tls.Certificate{}, s.errorf("tls-cert", "%s: not PEM, and as PKCS12: %v", s.Cert, err)
	}
	out := tls.Certificate{PrivateKey: key, Leaf: cert, Certificate: [][]byte{cert.Raw}}
	for _, c := range chain {
		out.Certificate = append(out.Certificate, c.Raw)
	}
	return out, nil
}

// loadPEMCert pairs the PEM certificate data with its key.
func (s *Settings) loadPEMCert(certPEM []byte) (tls.Certificate, error) {
	keyPEM, keyFrom := certPEM, s.Cert
	if s.Key != "" {
		var err error
		if keyPEM, err = os.ReadFile(s.Key); err != nil {
			return tls.Certificate{}, s.errorf("tls-key", "%v", err)
		}
		keyFrom = s.Key
	}
	if s.KeyPassword != "" || bytes.Contains(keyPEM, []byte("ENCRYPTED PRIVATE KEY")) {
		return tls.Certificate{}, s.errorf("tls-key", "%s: encrypted PEM keys are not supported: use an unencrypted key or a PKCS12 keystore", keyFrom)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		if s.Key == "" {
			return tls.Certificate{}, s.errorf("tls-cert", "%s: %v (give the key with --tls-key or KLOG_TLS_KEY)", s.Cert, err)
		}
		return tls.Certificate{}, s.errorf("tls-key", "%s with %s: %v", s.Cert, s.Key, err)
	}
	return cert, nil
}

// isPEM reports whether a key store of type typ holding data is PEM.
func isPEM(typ string, data []byte) bool {
	if strings.EqualFold(typ, "PEM") {
		return true
	}
	return typ == "" && bytes.Contains(data, []byte("-----BEGIN "))
}

// checkType refuses store types klog cannot read.
func checkType(typ string) error {
	switch strings.ToUpper(typ) {
	case "", "PKCS12":
		return nil
	case "JKS":
		return errors.New("JKS stores are not supported: convert to PKCS12 (keytool -importkeystore -deststoretype PKCS12) or use PEM")
	}
	return fmt.Errorf("store type %q: want PKCS12 or PEM", typ)
}

// verifyChainOnly verifies the broker's chain against roots (the system's
// when nil) without checking its host name.
func verifyChainOnly(roots *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("the broker sent no certificate")
		}
		opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
		for _, c := range cs.PeerCertificates[1:] {
			opts.Intermediates.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(opts)
		return err
	}
}
