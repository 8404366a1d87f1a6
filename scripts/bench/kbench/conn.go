package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/devca"
	"github.com/klogdev/klog/kafkaconn"
)

// properties is a repeatable -X key=value flag.
type properties []string

func (p *properties) String() string { return strings.Join(*p, ",") }

func (p *properties) Set(v string) error {
	*p = append(*p, v)
	return nil
}

// connect resolves the connection settings of c (-X, -command-config;
// no environment, so a run is what its flags say) into the franz-go
// options of every client of the run, and notes the security protocol
// in m. The TLS version and cipher suite the broker agreed to go into m
// once the run is over (tlsSeen.note).
func connect(c *config, m map[string]any, log *slog.Logger) (*tlsSeen, error) {
	s, err := kafkaconn.Load(kafkaconn.Sources{Properties: c.props, CommandConfig: c.commandConfig})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadFlags, err)
	}
	if len(s.Ignored) > 0 {
		log.Warn("ignoring client properties that only tune a producer or consumer", "properties", strings.Join(s.Ignored, ", "))
	}
	opts, err := s.Opts()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errBadFlags, err)
	}
	m["security_protocol"] = s.SecurityProtocol
	if s.SASL() {
		m["sasl_mechanism"] = s.Mechanism
	}
	seen := &tlsSeen{}
	if s.TLS() {
		opts = append(opts, kgo.WithHooks(seen))
	}
	c.conn = opts
	return seen, nil
}

// tlsSeen is a client hook that remembers the TLS version and cipher
// suite of the connections made, for the result line.
type tlsSeen struct {
	mu    sync.Mutex
	names map[string]bool
}

// OnBrokerConnect implements kgo.HookBrokerConnect; it runs once
// ApiVersions (and SASL) went through, so the handshake is done.
func (h *tlsSeen) OnBrokerConnect(_ kgo.BrokerMetadata, _ time.Duration, conn net.Conn, err error) {
	tc, ok := conn.(*tls.Conn)
	if err != nil || !ok {
		return
	}
	st := tc.ConnectionState()
	if !st.HandshakeComplete {
		return
	}
	name := tls.VersionName(st.Version) + " " + tls.CipherSuiteName(st.CipherSuite)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.names == nil {
		h.names = map[string]bool{}
	}
	h.names[name] = true
}

// note adds the TLS versions and suites seen to m as "tls".
func (h *tlsSeen) note(m map[string]any) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var names []string
	for n := range h.names {
		names = append(names, n)
	}
	if len(names) > 0 {
		slices.Sort(names)
		m["tls"] = strings.Join(names, ", ")
	}
}

// runDevCA writes the dev CA's files into c.dir for one node, node 0 (its
// certificate names the loopback addresses), as klog up --secure makes
// them: the key material of a benchmark's TLS listeners.
func runDevCA(c config, m map[string]any) error {
	if c.dir == "" {
		return fmt.Errorf("%w: -mode devca needs -dir", errBadFlags)
	}
	f, err := devca.Ensure(c.dir, nil, []int32{0})
	if err != nil {
		return err
	}
	m["dir"] = f.Dir
	m["ca"] = f.CA
	m["truststore"] = f.Truststore
	m["keystore"] = f.Nodes[0].Keystore
	m["pem"] = f.Nodes[0].PEM
	m["password_file"] = filepath.Join(f.Dir, "password.txt")
	return nil
}
