package broker

import (
	"crypto/tls"
	"fmt"
	"maps"
	"net"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/config"
	"github.com/klogdev/klog/broker/metadata"
	"github.com/klogdev/klog/broker/wire"
)

// A node serves the listeners of its listeners config, as Kafka does
// (listeners, advertised.listeners, listener.security.protocol.map,
// inter.broker.listener.name): one wire.Server each, all sharing the
// node's request and response pools. The first is the node's primary
// listener: Config.Listener or Config.Listen bind it when given, and
// Config.Advertise is its advertised address. The node registers every
// listener's advertised endpoint, and answers a request naming brokers
// (Metadata, FindCoordinator, DescribeCluster, the leader hints of
// Produce and Fetch) with the endpoints of the listener the request came
// on, leaving out brokers without it, as Kafka does. Other nodes are
// reached on their endpoint of the inter-broker listener, over TLS when
// it is SSL or SASL_SSL (listeners.go, tlsconfig.go).
//
// The metadata quorum's traffic (Raft, forwarded proposals, broker-only
// nodes joining) keeps its own address, each node's entry of
// controller.quorum.voters; controller.listener.names names its listener,
// whose protocol is PLAINTEXT or SSL: mutual TLS with that listener's
// ssl.* key material (newQuorumTLS).

// listener is one of the node's Kafka listeners.
type listener struct {
	config.Listener
	// ln is its socket, srv the Server of its connections and tls, for
	// SSL and SASL_SSL, its key material.
	ln  net.Listener
	srv *wire.Server
	tls *tlsSource
	// mechs are the SASL mechanisms a SASL listener offers, in the order
	// of its sasl.enabled.mechanisms.
	mechs []auth.Mechanism
}

// newListeners makes the Servers of the node's listeners; nothing is
// bound yet (bindListeners).
func (n *Node) newListeners(b *config.Broker) error {
	ls, err := b.Listeners()
	if err != nil {
		return err
	}
	n.interBroker = b.InterBrokerListener()
	for _, l := range ls {
		nl := &listener{Listener: l}
		scfg := wire.ServerConfig{
			Listener:        l.Name,
			Logger:          n.logger.With("listener", l.Name),
			MaxRequestBytes: b.Settings().SocketRequestMaxBytes,
			Requests:        n.requestPool,
			Responses:       n.responseBytes,
			Limits:          n.connLimits,
			Switch:          n.cut,
			SASL:            l.SASL(),
		}
		if l.TLS() {
			if nl.tls, err = newTLSSource(b, l.Name, l.SASL(), n.logger); err != nil {
				return fmt.Errorf("%w: %w", config.ErrInvalidValue, err)
			}
			scfg.TLS = nl.tls.serverConfig()
			scfg.TLSFailed = func(remote string, f wire.TLSFailure) { n.recordTLSFailure(l.Name, remote, f) }
			if !l.SASL() {
				if scfg.TLSPrincipal, err = certificatePrincipal(b, l.Name); err != nil {
					return err
				}
			}
		}
		if l.SASL() {
			if nl.mechs, err = n.listenerMechanisms(b, l.Name); err != nil {
				return err
			}
		}
		if l.SASL() && len(nl.mechs) == 0 {
			n.logger.Warn("a SASL listener offers no SASL mechanism klog implements: nobody can authenticate on it",
				"listener", l.Name, "sasl.enabled.mechanisms", listenerValue(b, l.Name, "sasl.enabled.mechanisms"))
		}
		nl.srv = wire.NewServer(scfg, dispatcher{n})
		n.listeners = append(n.listeners, nl)
	}
	return n.newQuorumTLS(b)
}

// newQuorumTLS reads the key material of the quorum's listener when it is
// SSL and the quorum has peers to talk to (tlsSource.quorumTLS).
func (n *Node) newQuorumTLS(b *config.Broker) error {
	l, ok := b.ControllerListener()
	if !ok || !l.TLS() || len(b.Settings().QuorumVoters) == 0 {
		return nil
	}
	src, err := newTLSSource(b, l.Name, false, n.logger)
	if err != nil {
		return fmt.Errorf("%w: controller %w", config.ErrInvalidValue, err)
	}
	if n.quorumTLS, err = src.quorumTLS(); err != nil {
		return fmt.Errorf("%w: controller %w", config.ErrInvalidValue, err)
	}
	return nil
}

// listenerValue is config name as listener sees it.
func listenerValue(b *config.Broker, listener, name string) string {
	v, _ := b.ListenerValue(listener, name)
	return v
}

// certificatePrincipal is the principal of an SSL listener's
// connection: its client certificate's subject mapped by
// ssl.principal.mapping.rules, User:ANONYMOUS without one.
func certificatePrincipal(b *config.Broker, listener string) (func(tls.ConnectionState) (string, error), error) {
	rules, err := auth.ParsePrincipalRules(listenerValue(b, listener, "ssl.principal.mapping.rules"))
	if err != nil {
		return nil, fmt.Errorf("%w: ssl.principal.mapping.rules of listener %s: %w", config.ErrInvalidValue, listener, err)
	}
	return func(cs tls.ConnectionState) (string, error) {
		if len(cs.PeerCertificates) == 0 {
			return auth.CertificatePrincipal(nil, rules)
		}
		return auth.CertificatePrincipal(cs.PeerCertificates[0], rules)
	}, nil
}

// bindListeners binds the listeners' sockets: the primary one at
// Config.Listener or Config.Listen when given, the others at their
// address, or at the socket of Config.Listeners. On error it closes what
// it bound, and Config.Listener and Config.Listeners.
func (n *Node) bindListeners() error {
	for i, l := range n.listeners {
		var err error
		switch {
		case i == 0 && n.cfg.Listener != nil:
			l.ln = n.cfg.Listener
		case i == 0 && n.cfg.Listen != "":
			l.ln, err = net.Listen("tcp", n.cfg.Listen)
		case n.cfg.Listeners[l.Name] != nil:
			l.ln = n.cfg.Listeners[l.Name]
			delete(n.cfg.Listeners, l.Name)
		default:
			l.ln, err = net.Listen("tcp", l.Addr)
		}
		if err != nil {
			n.closeListeners()
			closeListeners(n.cfg.Listener)
			closeListeners(slices.Collect(maps.Values(n.cfg.Listeners))...)
			return fmt.Errorf("listener %s: %w", l.Name, err)
		}
	}
	// A socket for a listener the node does not have is not served.
	closeListeners(slices.Collect(maps.Values(n.cfg.Listeners))...)
	return nil
}

// closeListeners closes the listeners' sockets bound so far.
func (n *Node) closeListeners() {
	for _, l := range n.listeners {
		if l.ln != nil {
			l.ln.Close()
		}
	}
}

// endpoints are the node's listeners as clients reach them: the
// advertised address, else the bound one (Config.Advertise for the
// primary).
func (n *Node) endpoints() ([]metadata.Endpoint, error) {
	var out []metadata.Endpoint
	for i, l := range n.listeners {
		adv := l.Advertised
		if i == 0 && n.cfg.Advertise != "" {
			adv = n.cfg.Advertise
		}
		if adv != "" {
			if _, port, err := net.SplitHostPort(adv); err == nil && port == "0" {
				host, _, _ := net.SplitHostPort(adv)
				_, bound, _ := net.SplitHostPort(l.ln.Addr().String())
				adv = net.JoinHostPort(host, bound)
			}
		}
		host, port, err := advertised(adv, l.ln.Addr())
		if err != nil {
			return nil, fmt.Errorf("listener %s: %w", l.Name, err)
		}
		out = append(out, metadata.Endpoint{Name: l.Name, Host: host, Port: port, Protocol: l.Protocol})
	}
	return out, nil
}

// serveListeners serves every listener until the node's context ends.
func (n *Node) serveListeners() {
	for _, l := range n.listeners {
		n.wg.Go(func() { l.srv.Serve(n.ctx, l.ln) })
	}
}

// drainListeners drains every listener's connections at once, bounded
// by timeout (wire.Server.Drain).
func (n *Node) drainListeners(timeout time.Duration) {
	var wg sync.WaitGroup
	for _, l := range n.listeners {
		wg.Go(func() { l.srv.Drain(timeout) })
	}
	wg.Wait()
}

// listenerSummary names each listener with its protocol and bound
// address, for the node's ready line.
func (n *Node) listenerSummary() string {
	parts := make([]string, len(n.listeners))
	for i, l := range n.listeners {
		parts[i] = l.Name + "(" + l.Protocol + ")=" + l.ln.Addr().String()
	}
	return strings.Join(parts, ",")
}

// ListenerNames are the names of the node's listeners, in the order of
// its listeners config.
func (n *Node) ListenerNames() []string {
	names := make([]string, len(n.listeners))
	for i, l := range n.listeners {
		names[i] = l.Name
	}
	return names
}

// ListenerAddr is the address listener name is bound to, nil for a
// listener the node does not have.
func (n *Node) ListenerAddr(name string) net.Addr {
	for _, l := range n.listeners {
		if l.Name == name {
			return l.ln.Addr()
		}
	}
	return nil
}

// interBrokerDial is how the node connects to other nodes: over TLS when
// its inter-broker listener is SSL or SASL_SSL.
func (n *Node) interBrokerDial() (wire.DialConfig, error) {
	i := slices.IndexFunc(n.listeners, func(l *listener) bool { return l.Name == n.interBroker })
	if i < 0 {
		return wire.DialConfig{}, fmt.Errorf("%w: the inter-broker listener %s is not one of the node's listeners", config.ErrInvalidValue, n.interBroker)
	}
	l := n.listeners[i]
	var dial wire.DialConfig
	if l.tls != nil {
		dial.TLS = l.tls.clientConfig
	}
	if l.SASL() {
		mech, err := n.interBrokerSASL(l.Name)
		if err != nil {
			return wire.DialConfig{}, err
		}
		dial.SASL = mech
	}
	return dial, nil
}

// brokerEndpoint is broker b's endpoint of the listener rc came on.
func brokerEndpoint(b metadata.Broker, rc *wire.RequestContext) (metadata.Endpoint, bool) {
	name := listenerName
	if rc != nil && rc.Listener != "" {
		name = rc.Listener
	}
	return b.Endpoint(name)
}

// interBrokerSASL is the SASL mechanism, with its credentials, the node
// authenticates with on listener, as a Kafka broker does:
// sasl.mechanism.inter.broker.protocol, and the username and password of
// the JAAS config listener.name.<listener>.<mechanism>.sasl.jaas.config
// (else the listener's, else the broker's sasl.jaas.config).
func (n *Node) interBrokerSASL(listener string) (sasl.Mechanism, error) {
	mech := listenerValue(n.static, listener, "sasl.mechanism.inter.broker.protocol")
	jaas, ok := n.static.ListenerValue(listener, strings.ToLower(mech)+".sasl.jaas.config")
	if !ok {
		jaas, ok = n.static.ListenerValue(listener, "sasl.jaas.config")
	}
	user, pass := jaasOption(jaas, "username"), jaasOption(jaas, "password")
	if !ok || user == "" {
		return nil, fmt.Errorf("%w: the inter-broker listener %s is %s: set listener.name.%s.%s.sasl.jaas.config with the username and password the node authenticates with",
			config.ErrInvalidValue, listener, n.listenerProtocol(listener), strings.ToLower(listener), strings.ToLower(mech))
	}
	switch mech {
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), nil
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass}.AsSha256Mechanism(), nil
	case "SCRAM-SHA-512":
		return scram.Auth{User: user, Pass: pass}.AsSha512Mechanism(), nil
	}
	return nil, fmt.Errorf("%w: sasl.mechanism.inter.broker.protocol=%s: klog authenticates between nodes with PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", config.ErrInvalidValue, mech)
}

// listenerProtocol is the security protocol of the node's listener name.
func (n *Node) listenerProtocol(name string) string {
	for _, l := range n.listeners {
		if l.Name == name {
			return l.Protocol
		}
	}
	return ""
}

// jaasOptionSyntax finds a JAAS option, name="value".
var jaasOptionSyntax = regexp.MustCompile(`(\w+)\s*=\s*"((?:\\.|[^"\\])*)"`)

// jaasOption is option name of a JAAS config (a login module's
// username="..." password="..."), "" when it has none.
func jaasOption(jaas, name string) string {
	for _, m := range jaasOptionSyntax.FindAllStringSubmatch(jaas, -1) {
		if m[1] == name {
			return strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(m[2])
		}
	}
	return ""
}

// saslMechanisms are the SASL mechanisms listener offers (listenerMechanisms).
func (n *Node) saslMechanisms(listener string) []auth.Mechanism {
	for _, l := range n.listeners {
		if l.Name == listener {
			return l.mechs
		}
	}
	return nil
}

// listenerMechanisms makes the SASL mechanisms listener offers: those of
// its sasl.enabled.mechanisms (the listener's own first) that
// Config.SASLMechanisms or broker/auth serve (Config's first), in that
// order. The mechanisms read their configs as Kafka does
// (mechanismConfig): PLAIN checks the users of
// listener.name.<listener>.plain.sasl.jaas.config before the SCRAM
// credentials of the metadata; OAUTHBEARER validates tokens as its
// sasl.server.callback.handler.class, sasl.oauthbearer.* and JAAS
// config say. A mechanism klog does not implement (GSSAPI) is left out;
// the start's warning names the listener that is left with none.
func (n *Node) listenerMechanisms(b *config.Broker, listener string) ([]auth.Mechanism, error) {
	var served []string
	var names []string
	for _, name := range splitList(listenerValue(b, listener, "sasl.enabled.mechanisms")) {
		if slices.Contains(names, name) {
			continue
		}
		names = append(names, name)
		if name == auth.PLAIN || name == auth.SCRAMSHA256 || name == auth.SCRAMSHA512 || name == auth.OAUTHBEARER {
			served = append(served, name)
		}
	}
	klog, err := auth.Mechanisms(served, n.credentials(), mechanismConfig(b, listener))
	if err != nil {
		return nil, fmt.Errorf("%w: listener %s: %w", config.ErrInvalidValue, listener, err)
	}
	have := append(slices.Clone(n.cfg.SASLMechanisms), klog...)
	var out []auth.Mechanism
	for _, name := range names {
		if i := slices.IndexFunc(have, func(m auth.Mechanism) bool { return m.Name() == name }); i >= 0 {
			out = append(out, have[i])
		}
	}
	return out, nil
}

// mechanismConfig is how listener's SASL mechanisms read their configs,
// as Kafka does: a JAAS config only from
// listener.name.<listener>.<mechanism>.sasl.jaas.config; any other from
// listener.name.<listener>.<mechanism>.<name>, else as the listener sees
// it (listener.name.<listener>.<name>, else the broker's, else its
// default).
func mechanismConfig(b *config.Broker, listener string) auth.MechanismConfig {
	return func(mechanism, name string) string {
		v, ok := b.ListenerOverride(listener, strings.ToLower(mechanism)+"."+name)
		if ok || name == "sasl.jaas.config" {
			return v
		}
		return listenerValue(b, listener, name)
	}
}
