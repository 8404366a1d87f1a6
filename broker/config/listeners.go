package config

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// Security protocols of a listener, as listener.security.protocol.map
// names them.
const (
	ProtocolPlaintext     = "PLAINTEXT"
	ProtocolSSL           = "SSL"
	ProtocolSASLPlaintext = "SASL_PLAINTEXT"
	ProtocolSASLSSL       = "SASL_SSL"
)

// Listener is one of a node's Kafka listeners (listeners,
// advertised.listeners, listener.security.protocol.map).
type Listener struct {
	// Name is the listener's name, upper case (PLAINTEXT, CLIENT).
	Name string
	// Protocol is its security protocol (Protocol*).
	Protocol string
	// Addr is the host:port it binds; an empty host is every interface,
	// port 0 a free port.
	Addr string
	// Advertised is the host:port clients are told, from
	// advertised.listeners; empty: the bound address.
	Advertised string
}

// TLS reports whether the listener's connections are TLS.
func (l Listener) TLS() bool { return l.Protocol == ProtocolSSL || l.Protocol == ProtocolSASLSSL }

// SASL reports whether the listener's connections authenticate with SASL.
func (l Listener) SASL() bool {
	return l.Protocol == ProtocolSASLPlaintext || l.Protocol == ProtocolSASLSSL
}

// Listeners returns the node's listeners, in the order of listeners: the
// first is the node's primary one (the address klog up's --listen binds).
func (b *Broker) Listeners() ([]Listener, error) {
	protocols, err := protocolMap(b.value("listener.security.protocol.map"))
	if err != nil {
		return nil, err
	}
	ls, err := parseListenerList("listeners", b.value("listeners"), b.withControllerProtocol(protocols))
	if err != nil {
		return nil, err
	}
	// The quorum's listener is served by the controller, at the node's
	// controller.quorum.voters entry, as Kafka's controller listener.
	ls = slices.DeleteFunc(ls, func(l Listener) bool { return slices.Contains(b.controllerListenerNames(), l.Name) })
	if len(ls) == 0 {
		return nil, fmt.Errorf("listeners names only the controller listener %s", strings.Join(b.controllerListenerNames(), ","))
	}
	if adv, ok := b.get("advertised.listeners"); ok && strings.TrimSpace(adv) != "" {
		advs, err := parseListenerList("advertised.listeners", adv, protocols)
		if err != nil {
			return nil, err
		}
		for _, a := range advs {
			i := slices.IndexFunc(ls, func(l Listener) bool { return l.Name == a.Name })
			if i < 0 {
				return nil, fmt.Errorf("advertised.listeners names %s, which listeners does not", a.Name)
			}
			if host, _, _ := net.SplitHostPort(a.Addr); host == "" || host == "0.0.0.0" || host == "::" {
				return nil, fmt.Errorf("advertised.listeners: %s://%s: advertise a host clients can reach", a.Name, a.Addr)
			}
			ls[i].Advertised = a.Addr
		}
	}
	return ls, nil
}

// InterBrokerListener is the name of the listener other nodes connect to
// (inter.broker.listener.name, else the listener named after
// security.inter.broker.protocol), as Kafka picks it.
func (b *Broker) InterBrokerListener() string {
	if v, ok := b.get("inter.broker.listener.name"); ok && strings.TrimSpace(v) != "" {
		return strings.ToUpper(strings.TrimSpace(v))
	}
	return strings.TrimSpace(b.value("security.inter.broker.protocol"))
}

// ControllerListener is the listener of the metadata quorum's
// connections: the name of controller.listener.names and its protocol,
// PLAINTEXT or SSL (checkListeners refuses others). ok is false when
// controller.listener.names is empty: the quorum is PLAINTEXT.
func (b *Broker) ControllerListener() (l Listener, ok bool) {
	names := b.controllerListenerNames()
	if len(names) == 0 {
		return Listener{}, false
	}
	protocols, err := protocolMap(b.value("listener.security.protocol.map"))
	if err != nil {
		return Listener{}, false
	}
	return Listener{Name: names[0], Protocol: b.withControllerProtocol(protocols)[names[0]]}, true
}

// controllerListenerNames are controller.listener.names, upper case.
func (b *Broker) controllerListenerNames() []string {
	var names []string
	for _, n := range splitList(b.value("controller.listener.names")) {
		names = append(names, strings.ToUpper(n))
	}
	return names
}

// withControllerProtocol is protocols with PLAINTEXT for a controller
// listener it does not name while listener.security.protocol.map is
// left at its default, as Kafka reads a KRaft node's map.
func (b *Broker) withControllerProtocol(protocols map[string]string) map[string]string {
	if _, set := b.static["listener.security.protocol.map"]; set {
		return protocols
	}
	for _, n := range b.controllerListenerNames() {
		if _, ok := protocols[n]; !ok {
			protocols[n] = ProtocolPlaintext
		}
	}
	return protocols
}

// checkControllerListener checks controller.listener.names: one name,
// with a protocol klog's quorum speaks.
func (b *Broker) checkControllerListener() error {
	names := b.controllerListenerNames()
	if len(names) > 1 {
		return fmt.Errorf("controller.listener.names=%s: klog's metadata quorum has one listener; name one", strings.Join(names, ","))
	}
	l, ok := b.ControllerListener()
	switch {
	case !ok:
		return nil
	case l.Protocol == "":
		return fmt.Errorf("controller.listener.names: the controller listener %s has no security protocol in listener.security.protocol.map", l.Name)
	case l.SASL():
		return fmt.Errorf("controller.listener.names: the controller listener %s is %s: klog's metadata quorum speaks PLAINTEXT or SSL (mutual TLS), not SASL", l.Name, l.Protocol)
	}
	return b.checkControllerPort(l.Name)
}

// checkControllerPort refuses an entry of listeners for the controller
// listener whose port is not this voter's in controller.quorum.voters,
// where klog binds the quorum.
func (b *Broker) checkControllerPort(name string) error {
	protocols, err := protocolMap(b.value("listener.security.protocol.map"))
	if err != nil {
		return nil // Listeners says what is wrong
	}
	ls, err := parseListenerList("listeners", b.value("listeners"), b.withControllerProtocol(protocols))
	if err != nil {
		return nil
	}
	i := slices.IndexFunc(ls, func(l Listener) bool { return l.Name == name })
	if i < 0 {
		return nil
	}
	_, port, _ := net.SplitHostPort(ls[i].Addr)
	for _, v := range b.settings.QuorumVoters {
		if v.ID == b.settings.NodeID && port != strconv.Itoa(int(v.Port)) {
			return fmt.Errorf("listeners: %s://%s: the quorum binds node %d's controller.quorum.voters entry, %s; give the controller listener that port, or leave it out of listeners", name, ls[i].Addr, v.ID, v.Addr())
		}
	}
	return nil
}

// ListenerValue is config name as listener sees it: the value of
// listener.name.<listener in lower case>.<name> when set, as Kafka's
// per-listener overrides, else the broker's. ok is false for a config
// that has no value.
func (b *Broker) ListenerValue(listener, name string) (string, bool) {
	if v, ok := b.static[listenerPrefix+strings.ToLower(listener)+"."+name]; ok {
		return v, true
	}
	return b.get(name)
}

// ListenerOverride is the value of listener.name.<listener in lower
// case>.<name> alone, as Kafka reads the configs that a listener only
// takes from its own prefix (ssl.client.auth on SASL_SSL).
func (b *Broker) ListenerOverride(listener, name string) (string, bool) {
	v, ok := b.static[listenerPrefix+strings.ToLower(listener)+"."+name]
	return v, ok
}

// listenerPrefix starts a per-listener config's name.
const listenerPrefix = "listener.name."

// lookupListenerScoped finds the definition of a per-listener config,
// listener.name.<listener>.<config>, for the configs Kafka lets a
// listener override (ssl.*, sasl.*, connections.max.reauth.ms), and
// those it lets a listener set per SASL mechanism,
// listener.name.<listener>.<mechanism>.sasl.* (sasl.jaas.config,
// sasl.server.callback.handler.class, sasl.oauthbearer.*).
func lookupListenerScoped(name string) (Def, bool) {
	rest, ok := strings.CutPrefix(name, listenerPrefix)
	if !ok {
		return Def{}, false
	}
	listener, cfg, ok := strings.Cut(rest, ".")
	if !ok || listener == "" || listener != strings.ToLower(listener) {
		return Def{}, false
	}
	if mech, rest, ok := strings.Cut(cfg, "."); ok && mech != "sasl" && mech != "ssl" && strings.HasPrefix(rest, "sasl.") && mech == strings.ToLower(mech) {
		cfg = rest // listener.name.<listener>.<mechanism>.sasl.*
	}
	if !strings.HasPrefix(cfg, "ssl.") && !strings.HasPrefix(cfg, "sasl.") && cfg != "connections.max.reauth.ms" {
		return Def{}, false
	}
	d, ok := LookupBroker(cfg)
	if !ok {
		return Def{}, false
	}
	d.Name = name
	d.ReadOnly = true
	return d, true
}

// value is a broker config's value, "" when it has none.
func (b *Broker) value(name string) string {
	v, _ := b.get(name)
	return v
}

// protocolMap parses listener.security.protocol.map, NAME:PROTOCOL,...
func protocolMap(v string) (map[string]string, error) {
	m := map[string]string{}
	for _, it := range splitList(v) {
		name, proto, ok := strings.Cut(it, ":")
		name, proto = strings.ToUpper(strings.TrimSpace(name)), strings.ToUpper(strings.TrimSpace(proto))
		if !ok || name == "" {
			return nil, fmt.Errorf("listener.security.protocol.map: %q is not NAME:PROTOCOL", it)
		}
		switch proto {
		case ProtocolPlaintext, ProtocolSSL, ProtocolSASLPlaintext, ProtocolSASLSSL:
		default:
			return nil, fmt.Errorf("listener.security.protocol.map: %q: no security protocol %s", it, proto)
		}
		if _, dup := m[name]; dup {
			return nil, fmt.Errorf("listener.security.protocol.map names %s twice", name)
		}
		m[name] = proto
	}
	return m, nil
}

// parseListenerList parses listeners or advertised.listeners:
// NAME://host:port,... (an IPv6 host in brackets).
func parseListenerList(config, v string, protocols map[string]string) ([]Listener, error) {
	var out []Listener
	for _, it := range splitList(v) {
		name, addr, ok := strings.Cut(it, "://")
		name = strings.ToUpper(strings.TrimSpace(name))
		if !ok || name == "" {
			return nil, fmt.Errorf("%s: %q is not NAME://HOST:PORT", config, it)
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("%s: %q: %v", config, it, err)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 0 || p > 65535 {
			return nil, fmt.Errorf("%s: %q: bad port", config, it)
		}
		proto, ok := protocols[name]
		if !ok {
			return nil, fmt.Errorf("%s: listener %s has no security protocol in listener.security.protocol.map", config, name)
		}
		if slices.ContainsFunc(out, func(l Listener) bool { return l.Name == name }) {
			return nil, fmt.Errorf("%s names listener %s twice", config, name)
		}
		out = append(out, Listener{Name: name, Protocol: proto, Addr: net.JoinHostPort(host, port)})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no listener", config)
	}
	return out, nil
}

// checkListeners checks the listener configs together at start: the
// listeners parse and the inter-broker listener is one of them.
func (b *Broker) checkListeners() error {
	if err := b.checkControllerListener(); err != nil {
		return err
	}
	ls, err := b.Listeners()
	if err != nil {
		return err
	}
	ib := b.InterBrokerListener()
	if !slices.ContainsFunc(ls, func(l Listener) bool { return l.Name == ib }) {
		return fmt.Errorf("the inter-broker listener %s (inter.broker.listener.name, else security.inter.broker.protocol) is not one of listeners", ib)
	}
	return nil
}
