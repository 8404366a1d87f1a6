package devca

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"software.sslmate.com/src/go-pkcs12"
)

// loadIssuer reads the CA's certificate and key.
func loadIssuer(certPath, keyPath string) (*issuer, error) {
	cert, key, err := loadLeaf(certPath, keyPath)
	if err != nil {
		return nil, err
	}
	if !cert.IsCA {
		return nil, fmt.Errorf("%s is not a CA certificate", certPath)
	}
	return &issuer{cert: cert, key: key}, nil
}

// loadLeaf reads the first certificate of certPath and the key of keyPath
// (they may be one file) and checks that they belong together.
func loadLeaf(certPath, keyPath string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certData, err := os.ReadFile(certPath)
	if err != nil {
		return nil, nil, err
	}
	keyData, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, err
	}
	certDER, keyDER := firstBlock(certData, "CERTIFICATE"), firstBlock(keyData, "PRIVATE KEY")
	if certDER == nil || keyDER == nil {
		return nil, nil, fmt.Errorf("%s: no certificate and key", certPath)
	}
	cert, err := x509.ParseCertificate(certDER)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", certPath, err)
	}
	k, err := x509.ParsePKCS8PrivateKey(keyDER)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", keyPath, err)
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok || !key.PublicKey.Equal(cert.PublicKey) {
		return nil, nil, fmt.Errorf("%s: the key is not the certificate's", keyPath)
	}
	return cert, key, nil
}

// firstBlock returns the bytes of data's first PEM block of type typ.
func firstBlock(data []byte, typ string) []byte {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return nil
		}
		if b.Type == typ {
			return b.Bytes
		}
	}
}

// writeTruststore writes the CA as a PKCS12 truststore. go-pkcs12's Modern
// encoder (AES-256 and SHA-256, read by Java 12 and later) with the
// password, as a JVM's ssl.truststore.type=PKCS12 reads it.
func (f *Files) writeTruststore() error {
	data, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{f.ca.cert}, f.Password)
	if err != nil {
		return fmt.Errorf("dev CA: truststore: %w", err)
	}
	return writeFile(f.Truststore, data, 0o644)
}

// writeKeystore writes key and cert, with the CA as its chain, as a
// PKCS12 keystore.
func (f *Files) writeKeystore(path string, key *ecdsa.PrivateKey, cert *x509.Certificate) error {
	data, err := pkcs12.Modern.Encode(key, cert, []*x509.Certificate{f.ca.cert}, f.Password)
	if err != nil {
		return fmt.Errorf("dev CA: keystore %s: %w", filepath.Base(path), err)
	}
	return writeFile(path, data, 0o600)
}

// writeFile replaces path with data, mode perm, through a temporary file
// renamed over it, so that a reader never sees half a key.
func writeFile(path string, data []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("dev CA: %w", err)
	}
	_, werr := tmp.Write(data)
	err = errors.Join(werr, tmp.Chmod(perm), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("dev CA: write %s: %w", filepath.Base(path), err)
	}
	return nil
}
