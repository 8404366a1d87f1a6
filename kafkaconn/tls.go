package kafkaconn

import (
	"crypto/tls"
	"crypto/x509"
	"os"

	"github.com/klogdev/klog/internal/tlsstore"
)

// loadCA reads the CA file: PEM certificates, or a PKCS12 truststore (or
// keystore).
func (s *Settings) loadCA() (*x509.CertPool, error) {
	data, err := os.ReadFile(s.CA)
	if err != nil {
		return nil, s.errorf("tls-ca", "%v", err)
	}
	if tlsstore.IsPEM(s.CAType, data) {
		pool, err := tlsstore.PEMPool(data)
		if err != nil {
			return nil, s.errorf("tls-ca", "%s: %v", s.CA, err)
		}
		return pool, nil
	}
	if err := tlsstore.CheckType(s.CAType); err != nil {
		return nil, s.errorf("tls-ca", "%s: %v", s.CA, err)
	}
	pool, err := tlsstore.Truststore(data, s.CAPassword)
	if err != nil {
		return nil, s.errorf("tls-ca", "%s: not PEM, and as PKCS12: %v", s.CA, err)
	}
	return pool, nil
}

// loadCert reads the client certificate and key: PEM files (the key in
// Key, or in the certificate's file, encrypted with KeyPassword or not),
// or a PKCS12 keystore.
func (s *Settings) loadCert() (tls.Certificate, error) {
	if s.Cert == "" {
		return tls.Certificate{}, s.errorf("tls-key", "%s without a certificate: --tls-cert or KLOG_TLS_CERT", s.Key)
	}
	data, err := os.ReadFile(s.Cert)
	if err != nil {
		return tls.Certificate{}, s.errorf("tls-cert", "%v", err)
	}
	if tlsstore.IsPEM(s.CertType, data) {
		return s.loadPEMCert(data)
	}
	if err := tlsstore.CheckType(s.CertType); err != nil {
		return tls.Certificate{}, s.errorf("tls-cert", "%s: %v", s.Cert, err)
	}
	cert, err := tlsstore.Keystore(data, s.CertPassword)
	if err != nil {
		return tls.Certificate{}, s.errorf("tls-cert", "%s: not PEM, and as PKCS12: %v", s.Cert, err)
	}
	return cert, nil
}

// loadPEMCert pairs the PEM certificate data with its key.
func (s *Settings) loadPEMCert(certPEM []byte) (tls.Certificate, error) {
	keyPEM := certPEM
	if s.Key != "" {
		var err error
		if keyPEM, err = os.ReadFile(s.Key); err != nil {
			return tls.Certificate{}, s.errorf("tls-key", "%v", err)
		}
	}
	cert, err := tlsstore.KeyPair(certPEM, keyPEM, s.KeyPassword)
	if err != nil {
		if s.Key == "" {
			return tls.Certificate{}, s.errorf("tls-cert", "%s: %v (give the key with --tls-key or KLOG_TLS_KEY)", s.Cert, err)
		}
		return tls.Certificate{}, s.errorf("tls-key", "%s with %s: %v", s.Cert, s.Key, err)
	}
	return cert, nil
}

// verifyChainOnly verifies the broker's chain against roots (the system's
// when nil) without checking its host name.
func verifyChainOnly(roots *x509.CertPool) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error { return tlsstore.VerifyChain(cs, roots) }
}
