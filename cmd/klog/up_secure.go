package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/secure"
	"github.com/klogdev/klog/supervisor"
)

// checkSecure refuses what klog up --secure cannot take.
func checkSecure(o upOptions, configs map[string]string) error {
	if !o.secure {
		return nil
	}
	if o.memory {
		return usagef("--secure keeps its CA, certificates and users in the data directory; leave --memory out")
	}
	for _, name := range []string{"listeners", "listener.security.protocol.map", "controller.listener.names"} {
		if _, ok := configs[name]; ok {
			return usagef("--secure and -X %s: --secure lays out the listeners itself (PLAINTEXT, SASL_SSL, SSL, and the quorum's CONTROLLER over SSL with -n); give one", name)
		}
	}
	return nil
}

// secureSingle makes or keeps the security of a single node of --secure
// in rootDir and adds its configs to configs: PLAINTEXT on --listen,
// SASL_SSL and SSL on the two ports after it (free ports for port 0).
// Without --secure, and for a node of klog up -n (its supervisor gives it
// its configs), it does nothing and returns nil.
func secureSingle(o upOptions, child bool, rootDir string, configs map[string]string) (*secure.Cluster, error) {
	if !o.secure || child {
		return nil, nil
	}
	host, portText, err := net.SplitHostPort(o.listen)
	if err != nil {
		return nil, usagef("--listen %q: %v", o.listen, err)
	}
	port, _ := strconv.Atoi(portText)
	at := func(offset int) string {
		if port == 0 {
			return net.JoinHostPort(host, "0")
		}
		return net.JoinHostPort(host, strconv.Itoa(port+offset))
	}
	hosts := []string{host}
	if h, _, err := net.SplitHostPort(o.advertise); err == nil && h != "" {
		hosts = append(hosts, h)
	}
	c, err := secure.Ensure(rootDir, hosts, []int32{0})
	if err != nil {
		return nil, err
	}
	maps.Copy(configs, c.NodeConfigs(0, secure.Listeners{Plaintext: o.listen, SASLSSL: at(1), MTLS: at(2)}))
	if len(hosts) > 1 {
		// The secure listeners are advertised on --advertise's host
		// (port 0: the port bound).
		_, sport, _ := net.SplitHostPort(at(1))
		_, mport, _ := net.SplitHostPort(at(2))
		configs["advertised.listeners"] = "PLAINTEXT://" + o.advertise + "," + secure.SASLSSL + "://" + net.JoinHostPort(hosts[1], sport) + "," + secure.MTLS + "://" + net.JoinHostPort(hosts[1], mport)
	}
	return c, nil
}

// secureLayout makes or keeps the security of the cluster of layout in
// dir, and returns each node's flags for it; nothing without --secure.
func secureLayout(o upOptions, dir string, layout supervisor.Layout) (*secure.Cluster, func(supervisor.NodeLayout) []string, error) {
	if !o.secure {
		return nil, nil, nil
	}
	var hosts []string
	var ids []int32
	for _, n := range layout.Nodes {
		if !slices.Contains(hosts, n.Host) {
			hosts = append(hosts, n.Host)
		}
		ids = append(ids, n.ID)
	}
	c, err := secure.Ensure(dir, hosts, ids)
	if err != nil {
		return nil, nil, err
	}
	return c, func(n supervisor.NodeLayout) []string {
		configs := c.NodeConfigs(n.ID, secure.Listeners{Plaintext: n.Address(), SASLSSL: n.SecureAddress(), MTLS: n.MTLSAddress(), Quorum: true})
		var args []string
		for _, k := range slices.Sorted(maps.Keys(configs)) {
			args = append(args, "-X", k+"="+configs[k])
		}
		return args
	}, nil
}

// provisionSecure creates the users of c through the cluster's PLAINTEXT
// listeners at brokers and writes the client configs of the secure
// listeners at bootstrap and mtlsBootstrap.
func provisionSecure(ctx context.Context, g *globals, c *secure.Cluster, brokers []string, bootstrap, mtlsBootstrap string) (*secure.Info, error) {
	cl, err := g.newClientWith(nil, kgo.SeedBrokers(brokers...))
	if err != nil {
		return nil, err
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(ctx, seedTimeout)
	defer cancel()
	if err := c.Provision(ctx, kadm.NewClient(cl)); err != nil {
		return nil, fmt.Errorf("--secure: %w", err)
	}
	return c.WriteClientConfigs(bootstrap, mtlsBootstrap)
}

// singleSecureInfo creates the users of sec on node and writes the client
// configs of its secure listeners; nil without --secure.
func singleSecureInfo(ctx context.Context, g *globals, sec *secure.Cluster, node *broker.Node) (*secure.Info, error) {
	if sec == nil {
		return nil, nil
	}
	brokers := node.Advertised()
	return provisionSecure(ctx, g, sec, []string{brokers},
		advertisedAt(brokers, node.ListenerAddr(secure.SASLSSL)), advertisedAt(brokers, node.ListenerAddr(secure.MTLS)))
}

// clusterSecureInfo creates the users of sec on the cluster of layout and
// writes the client configs of its secure listeners; nil without
// --secure.
func clusterSecureInfo(ctx context.Context, g *globals, sec *secure.Cluster, layout supervisor.Layout) (*secure.Info, error) {
	if sec == nil {
		return nil, nil
	}
	var tls, mtls []string
	for _, n := range layout.Nodes {
		tls, mtls = append(tls, n.SecureAddress()), append(mtls, n.MTLSAddress())
	}
	return provisionSecure(ctx, g, sec, layout.Brokers(), strings.Join(tls, ","), strings.Join(mtls, ","))
}

// advertisedAt is addr's port on the host of advertised (host:port), how
// clients reach another listener of the node that advertises it.
func advertisedAt(advertised string, addr net.Addr) string {
	host, _, _ := net.SplitHostPort(advertised)
	_, port, _ := net.SplitHostPort(addr.String())
	return net.JoinHostPort(host, port)
}

// printSecure writes, after klog up's BROKERS= line, how to connect to the
// secure listeners of --secure.
func printSecure(w io.Writer, s *secure.Info) error {
	var b strings.Builder
	fmt.Fprintf(&b, "SASL_SSL_BROKERS=%s\n", s.Bootstrap)
	fmt.Fprintf(&b, "SSL_BROKERS=%s\n", s.MTLSBootstrap)
	fmt.Fprintf(&b, "CA=%s\n", s.CA)
	fmt.Fprintf(&b, "SASL_SSL: %s; SSL asks for a client certificate of the CA, whose CN is the user.\n", strings.Join(s.Mechanisms, ", "))
	fmt.Fprintf(&b, "users (passwords kept in %s):\n", s.UsersFile)
	for _, u := range s.Users {
		fmt.Fprintf(&b, "  %-6s %s  client certificate %s\n", u.Name, u.Password, u.Cert)
	}
	fmt.Fprintf(&b, "authorizer: %s; super users %s (every client of the PLAINTEXT listener: keep it on loopback)\n", s.Authorizer, strings.Join(s.SuperUsers, ", "))
	fmt.Fprintf(&b, "ACLs of app: %s (tighten: klog acl delete --allow User:app --topic '*' --yes, then klog acl create --allow User:app --operation WRITE --topic orders)\n", strings.Join(s.AppACLs, "; "))
	fmt.Fprintf(&b, "client configs (%s says what each is; the .p12 files' password is %s):\n", s.Dir+"/README.md", s.StorePassword)
	for _, f := range s.Files {
		if !strings.HasSuffix(f, "README.md") {
			fmt.Fprintf(&b, "  %s\n", f)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
