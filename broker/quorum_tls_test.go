package broker_test

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"log/slog"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/ratelog"
	"github.com/klogdev/klog/internal/testkit"
)

// raftBytes are what a plaintext Raft peer sends first: an AppendEntries
// RPC's type byte, then bytes of its body, more than a TLS record header,
// so a voter reading one has it at once.
var raftBytes = []byte{0, 0x81, 0xa4, 'T', 'e', 'r', 'm', 1}

// quorumRefused is the warning of a quorum connection refused at its
// handshake.
const quorumRefused = "quorum connection refused: TLS handshake failed"

// TestQuorumMutualTLS checks a cluster of three voters and a broker-only
// node whose metadata quorum runs over mutual TLS (controller.listener.names
// an SSL listener, its key material under listener.name.controller.ssl.*):
// it elects a controller, and a topic created through one node (a
// follower voter, then the broker-only node, whose requests are forwarded
// over the quorum's TLS) reaches every node;
// a plaintext peer, a peer with a certificate of another CA and a
// user's client certificate of the quorum's own CA are each refused,
// logged a bounded number of times, and the quorum carries on.
func TestQuorumMutualTLS(t *testing.T) {
	pki := newTestPKI(t)
	pki.pemKeystore("node.pem", pkix.Name{CommonName: "node"})
	var logs testkit.Buffer
	opts := []brokertest.Option{brokertest.Nodes(4),
		brokertest.Logger(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))),
		brokertest.Config("controller.listener.names", "CONTROLLER"),
		brokertest.Config("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL")}
	for k, v := range pki.serverConfigs("node.pem") {
		opts = append(opts, brokertest.Config("listener.name.controller."+k, v))
	}
	c := brokertest.New(t, opts...)
	createEverywhere(t, c, c.Nodes()[1], "before")

	addr := c.Nodes()[0].QuorumAddr()
	// A node's certificate is let through: the voter answers TLS, with
	// the key material of listener.name.controller.ssl.*.
	conn, err := tls.Dial("tcp", addr, quorumPeerTLS(pki, pki, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth))
	if err != nil {
		t.Fatalf("TLS handshake with a voter as a node: %v", err)
	}
	if cn := conn.ConnectionState().PeerCertificates[0].Subject.CommonName; cn != "node" {
		t.Errorf("the voter presented %q, want the node certificate", cn)
	}
	conn.Close()
	if err := testkit.Refuses(addr, nil, raftBytes); err != nil {
		t.Errorf("plaintext peer: %v", err)
	}
	other := newTestPKI(t)
	if err := testkit.Refuses(addr, quorumPeerTLS(pki, other, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth), raftBytes); err != nil {
		t.Errorf("peer with another CA's node certificate: %v", err)
	}
	if err := testkit.Refuses(addr, quorumPeerTLS(pki, pki, x509.ExtKeyUsageClientAuth), raftBytes); err != nil {
		t.Errorf("peer with a client certificate of the quorum's CA: %v", err)
	}
	for range 20 {
		if err := testkit.Refuses(addr, nil, raftBytes); err != nil {
			t.Fatalf("plaintext peer again: %v", err)
		}
	}
	createEverywhere(t, c, c.Nodes()[3], "after")
	if got := strings.Count(logs.String(), quorumRefused); got < 1 || got > 2*ratelog.DefaultBurst {
		t.Errorf("%d lines %q for 22 refused peers, want 1 to %d (rate-limited):\n%s", got, quorumRefused, 2*ratelog.DefaultBurst, logs.String())
	}
}

// createEverywhere creates topic through node and waits until every node
// of c holds it in its metadata and names a controller.
func createEverywhere(t *testing.T, c *brokertest.Cluster, node *brokertest.Node, topic string) {
	t.Helper()
	ctx := testkit.Context(t)
	cl := node.Client()
	defer cl.Close()
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 3, nil, topic); err != nil {
		t.Fatalf("create %s through node %d: %v", topic, node.ID(), err)
	}
	all := c.Client()
	defer all.Close()
	for _, n := range c.Nodes() {
		testkit.WaitFor(t, topic+" in node "+itoa(int64(n.ID()))+"'s metadata", func() (bool, string) {
			req := kmsg.NewPtrMetadataRequest()
			rt := kmsg.NewMetadataRequestTopic()
			rt.Topic = kmsg.StringPtr(topic)
			req.Topics = append(req.Topics, rt)
			resp, err := req.RequestWith(ctx, all.Broker(int(n.ID())))
			if err != nil {
				return false, err.Error()
			}
			return resp.ControllerID >= 0 && resp.Topics[0].ErrorCode == 0 && len(resp.Topics[0].Partitions) == 1,
				"controller " + itoa(int64(resp.ControllerID)) + ", error code " + itoa(int64(resp.Topics[0].ErrorCode))
		})
	}
}

// quorumPeerTLS is the TLS config of a peer trusting trust's CA and
// presenting a certificate of issuer's for usages.
func quorumPeerTLS(trust, issuer *testPKI, usages ...x509.ExtKeyUsage) *tls.Config {
	cfg := trust.clientTLS(pkix.Name{})
	cert, key := issuer.issueFor(pkix.Name{CommonName: "peer"}, usages...)
	cfg.Certificates = []tls.Certificate{{Certificate: [][]byte{cert.Raw}, PrivateKey: key, Leaf: cert}}
	return cfg
}

// TestQuorumTLSNeedsTruststore: an SSL quorum without a truststore is
// refused at start, naming what to set.
func TestQuorumTLSNeedsTruststore(t *testing.T) {
	pki := newTestPKI(t)
	pki.pemKeystore("node.pem", pkix.Name{CommonName: "node"})
	ports := testkit.FreePorts(t, 2)
	err := startErr(t, map[string]string{
		"node.id":                                    "0",
		"controller.quorum.voters":                   "0@127.0.0.1:" + itoa(int64(ports[0])) + ",1@127.0.0.1:" + itoa(int64(ports[1])),
		"controller.listener.names":                  "CONTROLLER",
		"listener.security.protocol.map":             "PLAINTEXT:PLAINTEXT,CONTROLLER:SSL",
		"ssl.keystore.type":                          "PEM",
		"ssl.keystore.location":                      pki.serverConfigs("node.pem")["ssl.keystore.location"],
		"listener.name.controller.ssl.keystore.type": "PEM",
	})
	if err == nil || !strings.Contains(err.Error(), "truststore") {
		t.Fatalf("start without a truststore for the quorum: %v", err)
	}
}
