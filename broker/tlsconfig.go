package broker

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/controller"
	"github.com/klogdev/klog/internal/tlsstore"
)

// The key material of a TLS listener, from Kafka's ssl.* configs as the
// listener sees them (listener.name.<name>.ssl.* first): the keystore
// (ssl.keystore.type PEM: a file of key and chain, or the chain and key
// inline; PKCS12: a file and its passwords) and the truststore (PEM
// certificates, in a file or inline, or a PKCS12 file) that client
// certificates, and other nodes' certificates, are checked against.
//
// The files are read again when they change on disk: a new connection
// checks their size and modification time, at most once per
// tlsReloadCheck, and reads them again when either moved, so a renewed
// certificate reaches new connections without a restart. Material that
// no longer loads (a file half written) leaves the last good material in
// place, and is tried again at the next check.

// tlsReloadCheck is the least time between two looks at the key material
// files of a listener.
const tlsReloadCheck = 500 * time.Millisecond

// tlsSource is one TLS listener's key material, read again when its files
// change.
type tlsSource struct {
	listener string
	broker   *config.Broker
	logger   *slog.Logger
	// minVersion and maxVersion are ssl.enabled.protocols'; clientAuth
	// is ssl.client.auth's.
	minVersion, maxVersion uint16
	clientAuth             tls.ClientAuthType
	// verifyHost is ssl.endpoint.identification.algorithm=https: as a
	// client, a node checks the other node's host name.
	verifyHost bool

	mu struct {
		sync.Mutex
		checked time.Time
		stamps  []fileStamp
		server  *tls.Config
		client  *tls.Config
	}
}

// fileStamp is what tells that a key material file changed.
type fileStamp struct {
	path  string
	size  int64
	mtime time.Time
}

// newTLSSource reads listener's key material; an error names what is
// missing or does not load.
func newTLSSource(b *config.Broker, listener string, sasl bool, logger *slog.Logger) (*tlsSource, error) {
	s := &tlsSource{listener: listener, broker: b, logger: logger}
	get := func(name string) string { v, _ := b.ListenerValue(listener, name); return v }
	protocols := splitList(get("ssl.enabled.protocols"))
	s.minVersion, s.maxVersion = tls.VersionTLS13, tls.VersionTLS12
	for _, p := range protocols {
		v := map[string]uint16{"TLSv1.2": tls.VersionTLS12, "TLSv1.3": tls.VersionTLS13}[p]
		s.minVersion, s.maxVersion = min(s.minVersion, v), max(s.maxVersion, v)
	}
	clientAuth := get("ssl.client.auth")
	if sasl {
		// A SASL_SSL listener asks for certificates only when its own
		// listener.name.<name>.ssl.client.auth says so, as Kafka's.
		clientAuth, _ = b.ListenerOverride(listener, "ssl.client.auth")
	}
	s.clientAuth = map[string]tls.ClientAuthType{"requested": tls.VerifyClientCertIfGiven,
		"required": tls.RequireAndVerifyClientCert}[clientAuth]
	s.verifyHost = get("ssl.endpoint.identification.algorithm") == "https"
	if err := s.load(); err != nil {
		return nil, fmt.Errorf("listener %s: %w", listener, err)
	}
	return s, nil
}

// serverConfig is the listener's tls.Config: each connection gets the
// material of the moment.
func (s *tlsSource) serverConfig() *tls.Config {
	return &tls.Config{
		MinVersion: s.minVersion,
		MaxVersion: s.maxVersion,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			server, _ := s.current()
			return server, nil
		},
	}
}

// clientConfig is the tls.Config of a connection to another node's
// listener of this name.
func (s *tlsSource) clientConfig() (*tls.Config, error) {
	_, client := s.current()
	return client, nil
}

// quorumTLS is the metadata quorum's mutual TLS over the listener's key
// material: each end presents its node certificate, and the accepting
// end requires the peer's, whatever ssl.client.auth says, checks it
// against the truststore and takes only a node certificate: one valid
// for server authentication too, as a node's own certificate must be (a
// client certificate of the same CA, a user's, is refused). It needs a
// truststore: the system's roots would let any publicly certified peer
// in.
func (s *tlsSource) quorumTLS() (*controller.TLS, error) {
	if server, _ := s.current(); server.ClientCAs == nil {
		return nil, fmt.Errorf("listener %s: the metadata quorum's mutual TLS needs a truststore (ssl.truststore.location or ssl.truststore.certificates) holding the CA of the nodes' certificates", s.listener)
	}
	server := &tls.Config{
		MinVersion: s.minVersion,
		MaxVersion: s.maxVersion,
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			current, _ := s.current()
			cfg := current.Clone()
			cfg.ClientAuth = tls.RequireAndVerifyClientCert
			cfg.VerifyConnection = func(cs tls.ConnectionState) error { return nodeCertificate(cs, current.ClientCAs) }
			return cfg, nil
		},
	}
	return &controller.TLS{Server: server, Client: s.clientConfig}, nil
}

// nodeCertificate refuses a peer certificate that is not a node's: one
// roots do not vouch for as a server's.
func nodeCertificate(cs tls.ConnectionState, roots *x509.CertPool) error {
	if err := tlsstore.VerifyChain(cs, roots); err != nil {
		return fmt.Errorf("the peer's certificate is not a node's (valid for server authentication too): %w", err)
	}
	return nil
}

// current returns the material of the moment, read again first if its
// files changed.
func (s *tlsSource) current() (server, client *tls.Config) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if time.Since(s.mu.checked) >= tlsReloadCheck {
		s.mu.checked = time.Now()
		if !slices.Equal(statFiles(s.mu.stamps), s.mu.stamps) {
			if err := s.loadLocked(); err != nil {
				s.logger.Warn("TLS key material changed but does not load; keeping the last", "listener", s.listener, "err", err)
			} else {
				s.logger.Info("TLS key material reloaded", "listener", s.listener)
			}
		}
	}
	return s.mu.server, s.mu.client
}

func (s *tlsSource) load() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.checked = time.Now()
	return s.loadLocked()
}

// loadLocked reads the key material and makes the configs of it.
func (s *tlsSource) loadLocked() error {
	get := func(name string) string { v, _ := s.broker.ListenerValue(s.listener, name); return v }
	var stamps []fileStamp
	for _, name := range []string{"ssl.keystore.location", "ssl.truststore.location"} {
		if p := get(name); p != "" {
			stamps = append(stamps, fileStamp{path: p})
		}
	}
	stamps = statFiles(stamps)
	cert, err := loadKeystore(get)
	if err != nil {
		return err
	}
	pool, err := loadTruststore(get)
	if err != nil {
		return err
	}
	s.mu.stamps = stamps
	s.mu.server = &tls.Config{
		MinVersion:   s.minVersion,
		MaxVersion:   s.maxVersion,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   s.clientAuth,
		ClientCAs:    pool,
	}
	s.mu.client = &tls.Config{MinVersion: s.minVersion, MaxVersion: s.maxVersion, Certificates: []tls.Certificate{cert}, RootCAs: pool}
	if !s.verifyHost {
		// The chain is checked, not the host name, as Kafka with an
		// empty ssl.endpoint.identification.algorithm.
		s.mu.client.InsecureSkipVerify = true
		s.mu.client.VerifyConnection = func(cs tls.ConnectionState) error { return tlsstore.VerifyChain(cs, pool) }
	}
	return nil
}

// statFiles returns stamps with each file's size and modification time
// as they are now (zero for a file that cannot be read).
func statFiles(stamps []fileStamp) []fileStamp {
	out := make([]fileStamp, len(stamps))
	for i, st := range stamps {
		out[i] = fileStamp{path: st.path}
		if fi, err := os.Stat(st.path); err == nil {
			out[i].size, out[i].mtime = fi.Size(), fi.ModTime()
		}
	}
	return out
}

// loadKeystore reads the keystore of the ssl.* configs get returns; a PEM
// key may be encrypted with ssl.key.password (PKCS#8), as Kafka reads it.
func loadKeystore(get func(string) string) (tls.Certificate, error) {
	loc, keyPassword := get("ssl.keystore.location"), get("ssl.key.password")
	switch typ := get("ssl.keystore.type"); {
	case typ == "PEM" && loc == "":
		chain, key := get("ssl.keystore.certificate.chain"), get("ssl.keystore.key")
		if chain == "" || key == "" {
			return tls.Certificate{}, errors.New("a TLS listener needs ssl.keystore.location, or ssl.keystore.certificate.chain and ssl.keystore.key")
		}
		cert, err := tlsstore.KeyPair([]byte(chain), []byte(key), keyPassword)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("ssl.keystore.certificate.chain and ssl.keystore.key: %w", err)
		}
		return cert, nil
	case loc == "":
		return tls.Certificate{}, errors.New("a TLS listener needs ssl.keystore.location")
	case typ == "PEM":
		data, err := os.ReadFile(loc)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("ssl.keystore.location: %w", err)
		}
		cert, err := tlsstore.KeyPair(data, data, keyPassword)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("ssl.keystore.location %s (PEM key and certificate chain): %w", loc, err)
		}
		return cert, nil
	default:
		data, err := os.ReadFile(loc)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("ssl.keystore.location: %w", err)
		}
		cert, err := tlsstore.Keystore(data, get("ssl.keystore.password"))
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("ssl.keystore.location %s (PKCS12): %w", loc, err)
		}
		return cert, nil
	}
}

// loadTruststore reads the truststore of the ssl.* configs get returns;
// nil (the system's roots) when none is set.
func loadTruststore(get func(string) string) (*x509.CertPool, error) {
	loc, typ := get("ssl.truststore.location"), get("ssl.truststore.type")
	switch {
	case typ == "PEM" && loc == "":
		certs := get("ssl.truststore.certificates")
		if certs == "" {
			return nil, nil
		}
		pool, err := tlsstore.PEMPool([]byte(certs))
		if err != nil {
			return nil, fmt.Errorf("ssl.truststore.certificates: %w", err)
		}
		return pool, nil
	case loc == "":
		return nil, nil
	}
	data, err := os.ReadFile(loc)
	if err != nil {
		return nil, fmt.Errorf("ssl.truststore.location: %w", err)
	}
	if typ == "PEM" {
		pool, err := tlsstore.PEMPool(data)
		if err != nil {
			return nil, fmt.Errorf("ssl.truststore.location %s: %w", loc, err)
		}
		return pool, nil
	}
	pool, err := tlsstore.Truststore(data, get("ssl.truststore.password"))
	if err != nil {
		return nil, fmt.Errorf("ssl.truststore.location %s (PKCS12): %w", loc, err)
	}
	return pool, nil
}
