package broker_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/broker/wire"
	"github.com/klogdev/klog/internal/testkit"
)

// The authorizer's tests name their users by client id: a client with
// id "as-alice" is User:alice, any other is the connection's principal,
// User:ANONYMOUS, made a super user so that brokertest's own clients
// (seeding topics, waiting for leaders) pass.
const standardAuthorizer = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

func principalByClientID(rc *wire.RequestContext) string {
	if name, ok := strings.CutPrefix(rc.ClientID, "as-"); ok {
		return "User:" + name
	}
	return rc.Principal
}

// securedOptions are the options of a node with the StandardAuthorizer,
// User:admin and User:ANONYMOUS super users.
func securedOptions(opts ...brokertest.Option) []brokertest.Option {
	return append([]brokertest.Option{
		brokertest.Config("authorizer.class.name", standardAuthorizer),
		brokertest.Config("super.users", "User:admin;User:ANONYMOUS"),
		brokertest.Principal(principalByClientID),
	}, opts...)
}

// as returns a client of c that is User:name.
func as(c *brokertest.Cluster, name string, opts ...kgo.Opt) *kgo.Client {
	return c.Client(append([]kgo.Opt{kgo.ClientID("as-" + name)}, opts...)...)
}

// TestACLsWithoutAuthorizer checks that a node without an authorizer
// answers the ACL APIs SECURITY_DISABLED, as Kafka does.
func TestACLsWithoutAuthorizer(t *testing.T) {
	c := brokertest.New(t)
	ctx := testkit.Context(t)
	adm := kadm.NewClient(c.Client())
	created, err := adm.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("t").Operations(kadm.OpRead))
	if err != nil || len(created) != 1 || !errors.Is(created[0].Err, kerr.SecurityDisabled) {
		t.Fatalf("create: %+v, %v", created, err)
	}
	described, err := adm.DescribeACLs(ctx, kadm.NewACLs().AnyResource().Allow().AllowHosts().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
	if err != nil || len(described) != 1 || !errors.Is(described[0].Err, kerr.SecurityDisabled) {
		t.Fatalf("describe: %+v, %v", described, err)
	}
}

// TestACLsCreateDescribeDelete creates, lists and deletes ACLs with
// kadm: only a principal with ALTER on the cluster may, a bad ACL is
// refused with Kafka's INVALID_REQUEST and message, and the ACLs survive
// a restart.
func TestACLsCreateDescribeDelete(t *testing.T) {
	c := brokertest.New(t, securedOptions(brokertest.DataDir(t.TempDir()))...)
	ctx := testkit.Context(t)
	alice := kadm.NewClient(as(c, "alice"))
	created, err := alice.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").Topics("t").Operations(kadm.OpRead))
	if err != nil || len(created) != 1 || !errors.Is(created[0].Err, kerr.ClusterAuthorizationFailed) {
		t.Fatalf("create as alice: %+v, %v", created, err)
	}
	admin := kadm.NewClient(as(c, "admin"))
	mustCreateACLs(t, ctx, admin, kadm.NewACLs().Allow("User:alice").Topics("orders").ResourcePatternType(kadm.ACLPatternPrefixed).Operations(kadm.OpWrite))
	mustCreateACLs(t, ctx, admin, kadm.NewACLs().Deny("User:bob").DenyHosts("10.0.0.0/8").Groups("g").Operations(kadm.OpRead))
	bad, err := admin.CreateACLs(ctx, kadm.NewACLs().Allow("User:alice").AllowHosts("10.0.0.0/33").Topics("t").Operations(kadm.OpRead))
	if err != nil || len(bad) != 1 || !errors.Is(bad[0].Err, kerr.InvalidRequest) || bad[0].ErrMessage != "Invalid CIDR notation in host pattern '10.0.0.0/33'" {
		t.Fatalf("create with a bad CIDR: %+v, %v", bad, err)
	}
	if got := describeACLs(t, ctx, admin); got != "GROUP:LITERAL:g User:bob@10.0.0.0/8 READ DENY; TOPIC:PREFIXED:orders User:alice@* WRITE ALLOW" {
		t.Fatalf("described %s", got)
	}
	c.Nodes()[0].Restart()
	admin = kadm.NewClient(as(c, "admin"))
	if got := describeACLs(t, ctx, admin); got != "GROUP:LITERAL:g User:bob@10.0.0.0/8 READ DENY; TOPIC:PREFIXED:orders User:alice@* WRITE ALLOW" {
		t.Fatalf("described after a restart: %s", got)
	}
	deleted, err := admin.DeleteACLs(ctx, kadm.NewACLs().Deny("User:bob").DenyHosts().AnyResource().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
	if err != nil || len(deleted) != 1 || deleted[0].Err != nil || len(deleted[0].Deleted) != 1 || deleted[0].Deleted[0].Name != "g" {
		t.Fatalf("delete: %+v, %v", deleted, err)
	}
	if got := describeACLs(t, ctx, admin); got != "TOPIC:PREFIXED:orders User:alice@* WRITE ALLOW" {
		t.Fatalf("described after the delete: %s", got)
	}
}

// mustCreateACLs creates the ACLs of b.
func mustCreateACLs(t *testing.T, ctx context.Context, adm *kadm.Client, b *kadm.ACLBuilder) {
	t.Helper()
	res, err := adm.CreateACLs(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("create %+v: %v %s", r, r.Err, r.ErrMessage)
		}
	}
}

// describeACLs lists every ACL, sorted, as "TYPE:PATTERN:name
// principal@host OP PERM" joined by "; ".
func describeACLs(t *testing.T, ctx context.Context, adm *kadm.Client) string {
	t.Helper()
	res, err := adm.DescribeACLs(ctx, kadm.NewACLs().AnyResource().Allow().AllowHosts().Deny().DenyHosts().Operations(kadm.OpAny).ResourcePatternType(kadm.ACLPatternAny))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("describe: %v %s", r.Err, r.ErrMessage)
		}
		for _, d := range r.Described {
			out = append(out, d.Type.String()+":"+d.Pattern.String()+":"+d.Name+" "+d.Principal+"@"+d.Host+" "+d.Operation.String()+" "+d.Permission.String())
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	return strings.Join(out, "; ")
}

// TestACLsReplicated checks that ACLs created through any node reach
// every node's authorizer: they are metadata records.
func TestACLsReplicated(t *testing.T) {
	c := brokertest.New(t, securedOptions(brokertest.Nodes(3))...)
	ctx := testkit.Context(t)
	for _, n := range c.Nodes() {
		adm := kadm.NewClient(n.Client(kgo.ClientID("as-admin")))
		mustCreateACLs(t, ctx, adm, kadm.NewACLs().Allow("User:alice").Topics("via-"+strconv.Itoa(int(n.ID()))).Operations(kadm.OpRead))
	}
	for _, n := range c.Nodes() {
		for _, via := range c.Nodes() {
			name := "via-" + strconv.Itoa(int(via.ID()))
			testkit.WaitFor(t, "node "+strconv.Itoa(int(n.ID()))+" to allow alice to read "+name, func() (bool, string) {
				_, d := n.Broker().ExplainACL("User:alice", "127.0.0.1", kmsg.ACLOperationRead, kmsg.ACLResourceTypeTopic, name)
				return d.Allowed, d.Reason()
			})
		}
	}
}

// TestACLsNodeClientIDTrustsNothing checks that a client naming itself a
// klog node by its client id is authorized as the principal it is: with
// User:ANONYMOUS no super user, a PLAINTEXT client with a node's client id
// may neither create a topic nor write transaction markers.
func TestACLsNodeClientIDTrustsNothing(t *testing.T) {
	c := brokertest.New(t, brokertest.Config("authorizer.class.name", standardAuthorizer), brokertest.Config("super.users", "User:admin"))
	ctx := testkit.Context(t)
	cl := c.Client(kgo.ClientID(wire.PeerClientID(7)))
	created, err := kadm.NewClient(cl).CreateTopic(ctx, 1, 1, nil, "claimed")
	if err == nil {
		err = created.Err
	}
	if !errors.Is(err, kerr.TopicAuthorizationFailed) {
		t.Errorf("CreateTopics with a node's client id: %v, want TOPIC_AUTHORIZATION_FAILED", err)
	}
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	req.Version = 1
	m.ProducerID, m.Committed = 1, true
	mt := kmsg.NewWriteTxnMarkersRequestMarkerTopic()
	mt.Topic, mt.Partitions = "claimed", []int32{0}
	m.Topics = append(m.Topics, mt)
	req.Markers = append(req.Markers, m)
	// Straight to the node, as another node sends it (a kgo client would
	// look up the topic's leader first, and be denied that).
	conn, err := wire.Dial(ctx, c.Bootstrap()[0], wire.DialConfig{ClientID: wire.PeerClientID(7), Timeout: 5 * time.Second, MaxFrame: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r, err := conn.Do(ctx, req, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	resp := r.(*kmsg.WriteTxnMarkersResponse)
	if len(resp.Markers) != 1 || len(resp.Markers[0].Topics) != 1 || resp.Markers[0].Topics[0].Partitions[0].ErrorCode != kerr.ClusterAuthorizationFailed.Code {
		t.Errorf("WriteTxnMarkers with a node's client id: %+v, want CLUSTER_AUTHORIZATION_FAILED", resp.Markers)
	}
}
