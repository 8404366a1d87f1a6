package harness

import (
	"crypto/tls"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/kafkaconn"
)

// SecurityEnv names the client config file a runner connects with: a
// Java properties file klog up --secure wrote (app.properties for
// SASL_SSL with SCRAM-SHA-512, app-mtls.properties for mTLS with the
// app's client certificate), read by kafkaconn as klog's own commands
// read --command-config. Unset, the runners speak PLAINTEXT.
const SecurityEnv = "KLOG_COMPAT_SECURITY"

// Security is how a Go runner connects: the settings of SecurityEnv's
// file, with their TLS configuration and franz-go options made once.
type Security struct {
	*kafkaconn.Settings
	TLS *tls.Config
	// Kgo are the franz-go options of the settings.
	Kgo []kgo.Opt
}

// LoadSecurity reads SecurityEnv's file once: nil without one. RunAll
// fails every scenario with its error; a runner building its client
// config where it has no Env calls it too.
var LoadSecurity = sync.OnceValues(loadSecurity)

// loadSecurity reads SecurityEnv's file: nil without one.
func loadSecurity() (*Security, error) {
	path := strings.TrimSpace(os.Getenv(SecurityEnv))
	if path == "" {
		return nil, nil
	}
	s, err := kafkaconn.Load(kafkaconn.Sources{CommandConfig: path})
	if err != nil {
		return nil, fmt.Errorf("%s=%s: %w", SecurityEnv, path, err)
	}
	sec := &Security{Settings: s}
	if s.TLS() {
		if sec.TLS, err = s.TLSConfig(); err != nil {
			return nil, fmt.Errorf("%s=%s: %w", SecurityEnv, path, err)
		}
	}
	if sec.Kgo, err = s.Opts(); err != nil {
		return nil, fmt.Errorf("%s=%s: %w", SecurityEnv, path, err)
	}
	return sec, nil
}

// Describe says how the runner connects, for its log.
func (s *Security) Describe() string {
	if s == nil {
		return "PLAINTEXT"
	}
	if s.SASL() {
		return s.SecurityProtocol + " " + s.Mechanism + " as " + s.Username
	}
	return s.SecurityProtocol + " with client certificate " + s.Cert
}
