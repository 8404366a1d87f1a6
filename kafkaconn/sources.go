package kafkaconn

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/klogdev/klog/internal/jaas"
	"github.com/klogdev/klog/internal/javaprops"
)

// A Setting is one thing a user sets: its flag's name (without the
// dashes) and environment variable, and the field it fills.
type Setting struct {
	Flag  string
	Env   string
	Usage string
	field func(*Settings) *string
}

// Flags are the settings with a flag and an environment variable each,
// in the order help lists them. --tls-insecure-skip-verify and
// --command-config are flags of their own.
var Flags = []Setting{
	{"security-protocol", "KLOG_SECURITY_PROTOCOL", "PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (default: from the other settings)", func(s *Settings) *string { return &s.SecurityProtocol }},
	{"sasl-mechanism", "KLOG_SASL_MECHANISM", "PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER", func(s *Settings) *string { return &s.Mechanism }},
	{"sasl-username", "KLOG_SASL_USERNAME", "SASL user name", func(s *Settings) *string { return &s.Username }},
	{"sasl-password", "KLOG_SASL_PASSWORD", "SASL password", func(s *Settings) *string { return &s.Password }},
	{"sasl-oauth-token", "KLOG_SASL_OAUTH_TOKEN", "OAUTHBEARER token", func(s *Settings) *string { return &s.OAuthToken }},
	{"tls-ca", "KLOG_TLS_CA", "CA certificates the brokers' certificates are checked against: PEM file or PKCS12 truststore (default: the system's)", func(s *Settings) *string { return &s.CA }},
	{"tls-ca-password", "KLOG_TLS_CA_PASSWORD", "password of a PKCS12 --tls-ca", func(s *Settings) *string { return &s.CAPassword }},
	{"tls-cert", "KLOG_TLS_CERT", "client certificate for mTLS: PEM file (key in it or in --tls-key) or PKCS12 keystore", func(s *Settings) *string { return &s.Cert }},
	{"tls-key", "KLOG_TLS_KEY", "client key for mTLS, PEM file", func(s *Settings) *string { return &s.Key }},
	{"tls-cert-password", "KLOG_TLS_CERT_PASSWORD", "password of a PKCS12 --tls-cert", func(s *Settings) *string { return &s.CertPassword }},
	{"tls-server-name", "KLOG_TLS_SERVER_NAME", "name to check in the brokers' certificates (default: the host dialed)", func(s *Settings) *string { return &s.ServerName }},
}

// CommandConfigEnv is the environment variable naming a client config
// file when --command-config is not given.
const CommandConfigEnv = "KLOG_COMMAND_CONFIG"

// fieldOf returns the field of the setting with the flag name key.
func fieldOf(key string) func(*Settings) *string {
	for _, f := range Flags {
		if f.Flag == key {
			return f.field
		}
	}
	return map[string]func(*Settings) *string{
		"tls-ca-type":      func(s *Settings) *string { return &s.CAType },
		"tls-cert-type":    func(s *Settings) *string { return &s.CertType },
		"tls-key-password": func(s *Settings) *string { return &s.KeyPassword },
		"brokers":          func(s *Settings) *string { return &s.Brokers },
	}[key]
}

// Sources are where the settings come from, in the package doc's order.
type Sources struct {
	// Flags holds the values of the flags set on the command line, by
	// flag name (a Setting's Flag).
	Flags map[string]string
	// InsecureSkipVerify is --tls-insecure-skip-verify.
	InsecureSkipVerify bool
	// Properties are -X key=value, in the order given.
	Properties []string
	// CommandConfig is the client config file (--command-config); ""
	// takes it from KLOG_COMMAND_CONFIG.
	CommandConfig string
	// Getenv reads the environment; nil reads none.
	Getenv func(string) string
}

// Load resolves the settings from src and checks them.
func Load(src Sources) (*Settings, error) {
	s := &Settings{origin: map[string]string{}}
	getenv := src.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	file, fileFrom := src.CommandConfig, "--command-config"
	if file == "" {
		file, fileFrom = strings.TrimSpace(getenv(CommandConfigEnv)), CommandConfigEnv
	}
	if file != "" {
		if err := s.loadFile(file, fileFrom); err != nil {
			return nil, err
		}
	}
	for _, f := range Flags {
		if v := getenv(f.Env); v != "" {
			s.set(f.Flag, v, f.Env)
		}
	}
	for _, kv := range src.Properties {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, fmt.Errorf("%w: -X %q: want key=value", ErrSettings, kv)
		}
		if err := s.setProperty(strings.TrimSpace(k), strings.TrimSpace(v), "-X "+strings.TrimSpace(k)); err != nil {
			return nil, err
		}
	}
	for _, f := range Flags {
		if v, ok := src.Flags[f.Flag]; ok {
			s.set(f.Flag, v, "--"+f.Flag)
		}
	}
	if src.InsecureSkipVerify {
		s.InsecureSkipVerify = true
		s.origin["tls-insecure-skip-verify"] = "--tls-insecure-skip-verify"
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return s, nil
}

// set sets the setting key to v, from origin.
func (s *Settings) set(key, v, origin string) {
	*fieldOf(key)(s) = v
	s.origin[key] = origin
}

// loadFile sets the properties of the Java properties file path.
func (s *Settings) loadFile(path, from string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrSettings, from, err)
	}
	props, err := javaprops.Parse(string(data))
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrSettings, path, err)
	}
	for _, p := range props {
		if err := s.setProperty(p.Key, p.Value, path+": "+p.Key); err != nil {
			return err
		}
	}
	return nil
}

// propertyKeys maps the client properties klog reads, Java's and
// librdkafka's names, to its settings.
var propertyKeys = map[string]string{
	"security.protocol":        "security-protocol",
	"sasl.mechanism":           "sasl-mechanism",
	"sasl.mechanisms":          "sasl-mechanism",
	"sasl.username":            "sasl-username",
	"sasl.password":            "sasl-password",
	"ssl.ca.location":          "tls-ca",
	"ssl.truststore.location":  "tls-ca",
	"ssl.truststore.password":  "tls-ca-password",
	"ssl.truststore.type":      "tls-ca-type",
	"ssl.certificate.location": "tls-cert",
	"ssl.keystore.location":    "tls-cert",
	"ssl.keystore.password":    "tls-cert-password",
	"ssl.keystore.type":        "tls-cert-type",
	"ssl.key.location":         "tls-key",
	"ssl.key.password":         "tls-key-password",
	"bootstrap.servers":        "brokers",
	"metadata.broker.list":     "brokers",
}

// ignoredKeys are client properties that tune a producer, a consumer or
// the client's internals: klog's commands have their own flags for what
// they need, and a config file written for an application may hold them.
var ignoredKeys = []string{
	"acks", "auto.commit.interval.ms", "auto.offset.reset", "batch.size", "buffer.memory",
	"client.dns.lookup", "client.id", "compression.type", "connections.max.idle.ms",
	"debug", "default.api.timeout.ms", "delivery.timeout.ms", "enable.auto.commit",
	"enable.idempotence", "fetch.max.bytes", "fetch.min.bytes", "group.id", "isolation.level",
	"key.deserializer", "key.serializer", "linger.ms", "max.block.ms", "max.in.flight.requests.per.connection",
	"max.poll.records", "max.request.size", "metadata.max.age.ms", "partitioner.class", "reconnect.backoff.ms",
	"request.timeout.ms", "retries", "retry.backoff.ms", "session.timeout.ms", "socket.timeout.ms",
	"ssl.enabled.protocols", "ssl.protocol", "transactional.id", "value.deserializer", "value.serializer",
}

// setProperty sets the client property key to v, from origin.
func (s *Settings) setProperty(key, v, origin string) error {
	if name, ok := propertyKeys[key]; ok {
		s.set(name, v, origin)
		return nil
	}
	switch key {
	case "sasl.jaas.config":
		return s.setJAAS(v, origin)
	case "sasl.oauthbearer.config":
		login, err := librdkafkaLogin(v)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrSettings, origin, err)
		}
		return s.setOAuthLogin(login, origin)
	case "enable.sasl.oauthbearer.unsecure.jwt":
		return nil // sasl.oauthbearer.config makes the unsecured token
	case "ssl.endpoint.identification.algorithm":
		s.NoHostnameCheck = v == "" || strings.EqualFold(v, "none")
		return nil
	case "enable.ssl.certificate.verification":
		if strings.EqualFold(v, "false") {
			return fmt.Errorf("%w: %s=false: klog skips certificate verification only with --tls-insecure-skip-verify", ErrSettings, origin)
		}
		return nil
	}
	if slices.Contains(ignoredKeys, key) {
		s.Ignored = append(s.Ignored, origin)
		return nil
	}
	return fmt.Errorf("%w: %s: unknown client property %q (klog reads security.protocol, sasl.*, ssl.* and bootstrap.servers)",
		ErrSettings, origin, key)
}

// setJAAS takes the user name and password of a PlainLoginModule or
// ScramLoginModule sasl.jaas.config.
func (s *Settings) setJAAS(v, origin string) error {
	module, opts, err := jaas.Parse(v)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrSettings, origin, err)
	}
	switch module[strings.LastIndex(module, ".")+1:] {
	case "PlainLoginModule", "ScramLoginModule":
	case "OAuthBearerLoginModule":
		return s.setOAuthLogin(unsecuredLogin(opts), origin)
	default:
		return fmt.Errorf("%w: %s: login module %s: klog reads PlainLoginModule, ScramLoginModule and OAuthBearerLoginModule's unsecured tokens",
			ErrSettings, origin, module)
	}
	if u, ok := opts["username"]; ok {
		s.set("sasl-username", u, origin)
	}
	if p, ok := opts["password"]; ok {
		s.set("sasl-password", p, origin)
	}
	return nil
}
