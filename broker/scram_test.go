package broker_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/brokertest"
	"github.com/klogdev/klog/internal/testkit"
)

// describeSCRAM is every user's credentials as "user mechanism/iterations".
func describeSCRAM(t *testing.T, ctx context.Context, adm *kadm.Client) []string {
	t.Helper()
	ds, err := adm.DescribeUserSCRAMs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range ds.Sorted() {
		for _, c := range d.CredInfos {
			out = append(out, fmt.Sprintf("%s %s/%d", d.User, c.Mechanism, c.Iterations))
		}
	}
	return out
}

// scramLogin logs user in with password against the SCRAM-SHA-512
// mechanism over n's credentials, as the transport would.
func scramLogin(t *testing.T, n *brokertest.Node, user, password string) error {
	t.Helper()
	ms, err := auth.Mechanisms([]string{auth.SCRAMSHA512}, n.Broker().CredentialsForTest(), nil)
	if err != nil {
		t.Fatal(err)
	}
	x := ms[0].Start()
	session, msg, err := scram.Auth{User: user, Pass: password}.AsSha512Mechanism().Authenticate(context.Background(), n.Addr())
	if err != nil {
		t.Fatal(err)
	}
	for done := false; !done; {
		var answer []byte
		if answer, done, err = x.Next(msg); err != nil {
			return err
		}
		if _, msg, err = session.Challenge(answer); err != nil {
			t.Fatalf("client: %v", err)
		}
	}
	return nil
}

// TestUserSCRAMCredentials alters credentials with kadm, describes them,
// logs in with them, and finds them again after restarts from the Raft
// log and from a snapshot.
func TestUserSCRAMCredentials(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	adm := kadm.NewClient(n.Client())
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{
		{User: "alice", Mechanism: kadm.ScramSha512, Iterations: 8192, Password: "alice-secret"},
		{User: "bob", Mechanism: kadm.ScramSha256, Password: "bob-secret"},
	})
	if err != nil || res.Error() != nil {
		t.Fatalf("alter: %v %v", err, res.Error())
	}
	want := []string{"alice SCRAM-SHA-512/8192", "bob SCRAM-SHA-256/4096"}
	check := func(when string) {
		t.Helper()
		if got := describeSCRAM(t, ctx, adm); !slices.Equal(got, want) {
			t.Fatalf("%s: described %q, want %q", when, got, want)
		}
		if err := scramLogin(t, n, "alice", "alice-secret"); err != nil {
			t.Fatalf("%s: alice's login: %v", when, err)
		}
		if err := scramLogin(t, n, "alice", "bob-secret"); err == nil {
			t.Fatalf("%s: alice logged in with bob's password", when)
		}
	}
	check("after the change")
	n.Restart()
	adm = kadm.NewClient(n.Client())
	check("after a restart from the Raft log")
	if err := n.Broker().SnapshotMetadataForTest(); err != nil {
		t.Fatal(err)
	}
	n.Restart()
	adm = kadm.NewClient(n.Client())
	check("after a restart from a snapshot")

	res, err = adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: "bob", Mechanism: kadm.ScramSha256}}, nil)
	if err != nil || res.Error() != nil {
		t.Fatalf("delete: %v %v", err, res.Error())
	}
	want = want[:1]
	check("after bob's deletion")
}

// TestUserSCRAMCredentialsErrors checks the errors of invalid
// AlterUserScramCredentials and DescribeUserScramCredentials requests are
// Kafka's.
func TestUserSCRAMCredentialsErrors(t *testing.T) {
	ctx := testkit.Context(t)
	n := brokertest.Start(t)
	cl := n.Client()
	alter := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	up := func(user string, mech int8, iterations int32) {
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = user, mech, iterations, []byte("salt"), []byte("salted")
		alter.Upsertions = append(alter.Upsertions, u)
	}
	up("ok", 2, 4096)
	up("few", 2, 4095)
	up("many", 1, 16385)
	up("mech", 3, 4096)
	up("twice", 1, 4096)
	up("twice", 2, 4096)
	del := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	del.Name, del.Mechanism = "nobody", 1
	alter.Deletions = append(alter.Deletions, del)
	resp, err := alter.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range resp.Results {
		got[r.User] = codeName(r.ErrorCode) + ": " + deref(r.ErrorMessage)
	}
	for user, w := range map[string]string{
		"ok":     "NONE: <nil>",
		"few":    "UNACCEPTABLE_CREDENTIAL: Too few iterations",
		"many":   "UNACCEPTABLE_CREDENTIAL: Too many iterations",
		"mech":   "UNSUPPORTED_SASL_MECHANISM: Unknown SCRAM mechanism",
		"twice":  "DUPLICATE_RESOURCE: A user credential cannot be altered twice in the same request",
		"nobody": "RESOURCE_NOT_FOUND: Attempt to delete a user credential that does not exist",
	} {
		if got[user] != w {
			t.Errorf("alter %s: %q, want %q", user, got[user], w)
		}
	}
	if len(resp.Results) != 6 {
		t.Errorf("%d results, want one for each of the 6 users", len(resp.Results))
	}

	describe := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	for _, name := range []string{"ok", "nobody", "dup", "dup"} {
		u := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
		u.Name = name
		describe.Users = append(describe.Users, u)
	}
	dresp, err := describe.RequestWith(ctx, cl)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range dresp.Results {
		line := fmt.Sprintf("%s %s %s", r.User, codeName(r.ErrorCode), deref(r.ErrorMessage))
		for _, c := range r.CredentialInfos {
			line += fmt.Sprintf(" %d/%d", c.Mechanism, c.Iterations)
		}
		lines = append(lines, line)
	}
	wantLines := []string{
		"ok NONE <nil> 2/4096",
		"nobody RESOURCE_NOT_FOUND Attempt to describe a user credential that does not exist: nobody",
		"dup DUPLICATE_RESOURCE Cannot describe SCRAM credentials for the same user twice in a single request: dup",
	}
	if !slices.Equal(lines, wantLines) {
		t.Errorf("describe:\n%q\nwant\n%q", lines, wantLines)
	}
}

// codeName is an error code's Kafka name, NONE for 0.
func codeName(code int16) string {
	if code == 0 {
		return "NONE"
	}
	return kerr.ErrorForCode(code).(*kerr.Error).Message
}

// TestUserSCRAMCredentialsCluster alters credentials through each node of
// three, two of which forward the change to the active controller, and
// finds every change described by every node.
func TestUserSCRAMCredentialsCluster(t *testing.T) {
	ctx := testkit.Context(t)
	c := brokertest.StartCluster(t, 3)
	cl := c.Client()
	var want []string
	for _, n := range c.Nodes() {
		user := fmt.Sprintf("user-%d", n.ID())
		req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = user, 2, 4096, []byte("salt"), []byte("salted")
		req.Upsertions = append(req.Upsertions, u)
		raw, err := cl.Broker(int(n.ID())).Request(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if r := raw.(*kmsg.AlterUserSCRAMCredentialsResponse).Results; len(r) != 1 || r[0].ErrorCode != 0 {
			t.Fatalf("alter through node %d: %+v", n.ID(), r)
		}
		want = append(want, user+" SCRAM-SHA-512/4096")
	}
	for _, n := range c.Nodes() {
		testkit.WaitFor(t, fmt.Sprintf("node %d to describe %q", n.ID(), want), func() (bool, string) {
			raw, err := cl.Broker(int(n.ID())).Request(ctx, kmsg.NewPtrDescribeUserSCRAMCredentialsRequest())
			if err != nil {
				return false, err.Error()
			}
			var got []string
			for _, r := range raw.(*kmsg.DescribeUserSCRAMCredentialsResponse).Results {
				for _, ci := range r.CredentialInfos {
					got = append(got, fmt.Sprintf("%s %s/%d", r.User, scramName(ci.Mechanism), ci.Iterations))
				}
			}
			return slices.Equal(got, want), fmt.Sprint(got)
		})
	}
}

// scramName is the name of a SCRAM mechanism's type number.
func scramName(typ int8) string { return kadm.ScramMechanism(typ).String() }
