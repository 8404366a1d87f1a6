// Package kafkaconn turns the settings of a connection to a secured Kafka
// cluster (TLS, mTLS, SASL PLAIN, SCRAM-SHA-256/512, OAUTHBEARER) into
// franz-go options, for every klog command and the TUI.
//
// Settings come from four sources, the first that sets a thing wins:
//
//  1. klog's flags (--security-protocol, --sasl-mechanism, --tls-ca, ...),
//  2. client properties given one by one on the command line
//     (-X key=value, kcat's way),
//  3. the environment (KLOG_SECURITY_PROTOCOL, KLOG_SASL_MECHANISM, ...),
//  4. a client config file (--command-config FILE or KLOG_COMMAND_CONFIG),
//     Java properties as Kafka's console tools read them.
//
// Properties take the Java client's names (security.protocol,
// sasl.mechanism, sasl.jaas.config with PlainLoginModule,
// ScramLoginModule or OAuthBearerLoginModule's unsecured token,
// ssl.truststore.*, ssl.keystore.*) and librdkafka's
// (sasl.mechanisms, sasl.username, sasl.password, sasl.oauthbearer.config's
// unsecured JWT, ssl.ca.location, ssl.certificate.location,
// ssl.key.location). A property klog does not
// know is an error naming it; a client property that only tunes a
// producer or consumer (acks, linger.ms, group.id, ...) is ignored with a
// warning, so that an application's config file works as it is.
//
// Certificate verification is skipped only with the explicit
// InsecureSkipVerify setting (klog's --tls-insecure-skip-verify flag),
// never by a property; Java's empty
// ssl.endpoint.identification.algorithm turns off the host name check
// only, the chain is still verified.
//
// It imports nothing of broker/ or store/: it is a client's view.
package kafkaconn

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// ErrSettings means connection settings that cannot make a connection: an
// unknown property, a mechanism without its credentials, an unreadable
// certificate. Its message names the setting and where it came from.
var ErrSettings = errors.New("connection settings")

// Security protocols, Kafka's names.
const (
	Plaintext     = "PLAINTEXT"
	SSL           = "SSL"
	SASLPlaintext = "SASL_PLAINTEXT"
	SASLSSL       = "SASL_SSL"
)

// SASL mechanisms, Kafka's names.
const (
	MechanismPlain       = "PLAIN"
	MechanismSCRAMSHA256 = "SCRAM-SHA-256"
	MechanismSCRAMSHA512 = "SCRAM-SHA-512"
	MechanismOAuthBearer = "OAUTHBEARER"
)

// Settings is how to connect, resolved from every source. A field's
// origin (Origin) says where its value came from, for messages.
type Settings struct {
	// Brokers are the bootstrap servers a config file named
	// (bootstrap.servers), for a caller with none of its own.
	Brokers string

	SecurityProtocol string
	Mechanism        string
	Username         string
	Password         string
	OAuthToken       string

	// CA is a file of PEM certificates or a PKCS12 truststore
	// (CAType "PKCS12", or found from the content), CAPassword its
	// password.
	CA, CAType, CAPassword string
	// Cert and Key are the client's PEM certificate and key for mTLS, or
	// Cert alone a PKCS12 keystore holding both (CertType "PKCS12", or
	// found from the content) with CertPassword; KeyPassword decrypts
	// an encrypted PEM key (PKCS#8, "ENCRYPTED PRIVATE KEY").
	Cert, Key, CertType, CertPassword, KeyPassword string
	// ServerName is the name checked in the broker's certificate,
	// instead of the host dialed.
	ServerName string
	// NoHostnameCheck verifies the chain but not the host name (Java's
	// empty ssl.endpoint.identification.algorithm).
	NoHostnameCheck bool
	// InsecureSkipVerify verifies nothing of the broker's certificate;
	// set only by an explicit flag.
	InsecureSkipVerify bool

	// Ignored are the client properties set that only tune a producer or
	// consumer, with where they came from, for a warning.
	Ignored []string

	origin map[string]string // field key → where its value came from
	// oauthLogin is the unsecured login of an OAuthBearerLoginModule
	// JAAS config, and oauthLoginToken the token it made when read.
	oauthLogin      unsecuredLogin
	oauthLoginToken string
}

// Origin says where the setting named key (a flag's name without the
// dashes, e.g. "sasl-username") took its value from, "" when unset.
func (s *Settings) Origin(key string) string { return s.origin[key] }

// TLS reports whether the connection uses TLS.
func (s *Settings) TLS() bool {
	return s.SecurityProtocol == SSL || s.SecurityProtocol == SASLSSL
}

// SASL reports whether the connection authenticates with SASL.
func (s *Settings) SASL() bool {
	return s.SecurityProtocol == SASLPlaintext || s.SecurityProtocol == SASLSSL
}

// Opts returns the franz-go options that make a client connect with s:
// nothing for PLAINTEXT.
func (s *Settings) Opts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	if s.TLS() {
		cfg, err := s.TLSConfig()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	if s.SASL() {
		m, err := s.mechanism()
		if err != nil {
			return nil, err
		}
		opts = append(opts, kgo.SASL(m))
	}
	return opts, nil
}

// mechanism returns the SASL mechanism with its credentials.
func (s *Settings) mechanism() (sasl.Mechanism, error) {
	switch s.Mechanism {
	case MechanismPlain:
		return plain.Auth{User: s.Username, Pass: s.Password}.AsMechanism(), nil
	case MechanismSCRAMSHA256:
		return scram.Auth{User: s.Username, Pass: s.Password}.AsSha256Mechanism(), nil
	case MechanismSCRAMSHA512:
		return scram.Auth{User: s.Username, Pass: s.Password}.AsSha512Mechanism(), nil
	case MechanismOAuthBearer:
		return s.oauthMechanism(), nil
	}
	return nil, s.errorf("sasl-mechanism", "%q: want PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER", s.Mechanism)
}

// check resolves the protocol when no source named it and checks that
// the settings make a connection.
func (s *Settings) check() error {
	if s.SecurityProtocol == "" {
		s.SecurityProtocol = s.inferProtocol()
	}
	switch s.SecurityProtocol {
	case Plaintext, SSL, SASLPlaintext, SASLSSL:
	default:
		return s.errorf("security-protocol", "%q: want PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", s.SecurityProtocol)
	}
	if s.SASL() {
		return s.checkSASL()
	}
	if s.Mechanism != "" && s.origin["sasl-mechanism"] != "" {
		return s.errorf("sasl-mechanism", "%s with security protocol %s (from %s): use SASL_PLAINTEXT or SASL_SSL",
			s.Mechanism, s.SecurityProtocol, s.origin["security-protocol"])
	}
	return nil
}

// inferProtocol is the protocol the other settings imply: SASL when a
// mechanism is set, TLS when a CA or client certificate is.
func (s *Settings) inferProtocol() string {
	tls := s.CA != "" || s.Cert != "" || s.InsecureSkipVerify || s.ServerName != ""
	switch {
	case s.Mechanism != "" && tls:
		return SASLSSL
	case s.Mechanism != "":
		return SASLPlaintext
	case tls:
		return SSL
	}
	return Plaintext
}

// checkSASL checks that the mechanism has its credentials.
func (s *Settings) checkSASL() error {
	if s.Mechanism == "" {
		return fmt.Errorf("%w: security protocol %s (from %s) needs a SASL mechanism: --sasl-mechanism or KLOG_SASL_MECHANISM",
			ErrSettings, s.SecurityProtocol, s.origin["security-protocol"])
	}
	s.Mechanism = strings.ToUpper(s.Mechanism)
	if _, err := s.mechanism(); err != nil {
		return err
	}
	if s.Mechanism == MechanismOAuthBearer {
		if s.OAuthToken == "" {
			return s.errorf("sasl-mechanism", "OAUTHBEARER needs a token: --sasl-oauth-token or KLOG_SASL_OAUTH_TOKEN")
		}
		return nil
	}
	if s.Username == "" {
		return s.errorf("sasl-mechanism", "%s needs a username: --sasl-username or KLOG_SASL_USERNAME", s.Mechanism)
	}
	if s.Password == "" {
		return s.errorf("sasl-mechanism", "%s needs a password: --sasl-password or KLOG_SASL_PASSWORD", s.Mechanism)
	}
	return nil
}

// errorf returns an ErrSettings error about the setting key, naming its
// value's origin.
func (s *Settings) errorf(key, format string, args ...any) error {
	return fmt.Errorf("%w: %s %s", ErrSettings, s.originName(key), fmt.Sprintf(format, args...))
}

// originName names where the setting key came from: "--sasl-mechanism",
// "KLOG_SASL_MECHANISM", "-X sasl.mechanism", "FILE: sasl.mechanism".
func (s *Settings) originName(key string) string {
	if o := s.origin[key]; o != "" {
		return o
	}
	return "--" + key
}

// TLSConfig returns the TLS configuration of s: the CA (PEM or PKCS12)
// as the only roots when given, else the system's; the client certificate
// for mTLS when given; TLS 1.2 at least.
func (s *Settings) TLSConfig() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: s.ServerName}
	if s.CA != "" {
		pool, err := s.loadCA()
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if s.Cert != "" || s.Key != "" {
		cert, err := s.loadCert()
		if err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	switch {
	case s.InsecureSkipVerify:
		cfg.InsecureSkipVerify = true
	case s.NoHostnameCheck:
		cfg.InsecureSkipVerify = true // the chain is verified below
		cfg.VerifyConnection = verifyChainOnly(cfg.RootCAs)
	}
	return cfg, nil
}

// Explain adds to a client's error what it most likely means and the
// setting that changes it: a CA klog does not trust, a certificate for
// another host, and a connection
// closed under SASL, which is how some brokers refuse credentials (Kafka
// itself answers SASL_AUTHENTICATION_FAILED with a message, which needs
// nothing added). s may be nil: settings not loaded.
func (s *Settings) Explain(err error) error {
	if err == nil {
		return nil
	}
	var (
		unknown x509.UnknownAuthorityError
		host    x509.HostnameError
		hint    string
	)
	switch {
	case errors.As(err, &unknown):
		hint = "the brokers' certificate is signed by a CA klog does not trust: give the CA with --tls-ca or KLOG_TLS_CA"
	case errors.As(err, &host):
		hint = "the brokers' certificate does not name the host dialed: --tls-server-name names the one it has"
	case s != nil && s.SASL() && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)):
		hint = fmt.Sprintf("the broker closed the connection: with SASL this is how some brokers refuse credentials; check the mechanism %s, the user %q and its password",
			s.Mechanism, s.Username)
	default:
		return err
	}
	return fmt.Errorf("%w (%s)", err, hint)
}
