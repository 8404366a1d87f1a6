package controller

import (
	"errors"
	"fmt"
	"testing"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/errmsg"
)

// upsert is an upsertion of user's credential with a fixed salted
// password.
func upsert(user, mech string, iterations int32) SCRAMUpsertion {
	return SCRAMUpsertion{User: user, Mechanism: mech, Iterations: iterations, Salt: []byte("salt"), SaltedPassword: []byte("salted-" + user)}
}

// TestSCRAMCredentialsRestart checks credentials survive a restart, from
// the Raft log and from a snapshot, with the keys derived from the salted
// password and not the salted password itself.
func TestSCRAMCredentialsRestart(t *testing.T) {
	for _, snapshot := range []bool{false, true} {
		t.Run(fmt.Sprintf("snapshot=%v", snapshot), func(t *testing.T) {
			dir := t.TempDir()
			ctx := ctxT(t)
			c := start(t, testConfig(t, dir))
			res, err := c.AlterSCRAMCredentials(ctx, nil, []SCRAMUpsertion{
				upsert("alice", auth.SCRAMSHA512, 8192), upsert("bob", auth.SCRAMSHA256, 4096)})
			if err != nil || len(res) != 2 || res[0].Err != nil || res[1].Err != nil {
				t.Fatalf("upsert: %v %+v", err, res)
			}
			if res, err = c.AlterSCRAMCredentials(ctx, []SCRAMDeletion{{"bob", auth.SCRAMSHA256}}, nil); err != nil || res[0].Err != nil {
				t.Fatalf("delete: %v %+v", err, res)
			}
			if snapshot {
				if err := c.raft.Snapshot().Error(); err != nil {
					t.Fatal(err)
				}
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			c2 := start(t, testConfig(t, dir))
			want, _ := auth.SaltedSCRAMCredential(auth.SCRAMSHA512, []byte("salt"), []byte("salted-alice"), 8192)
			got, ok := c2.Image().SCRAMCredential("alice", auth.SCRAMSHA512)
			if !ok || string(got.StoredKey) != string(want.StoredKey) || string(got.ServerKey) != string(want.ServerKey) ||
				string(got.Salt) != "salt" || got.Iterations != 8192 {
				t.Errorf("alice after restart: %+v, %v", got, ok)
			}
			if _, ok := c2.Image().SCRAMCredential("bob", auth.SCRAMSHA256); ok {
				t.Error("a deleted credential came back")
			}
		})
	}
}

// TestAlterSCRAMCredentialsErrors checks each change's error is Kafka's
// (ScramControlManager), and that the changes that pass are made.
func TestAlterSCRAMCredentialsErrors(t *testing.T) {
	ctx := ctxT(t)
	c := start(t, testConfig(t, t.TempDir()))
	if _, err := c.AlterSCRAMCredentials(ctx, nil, []SCRAMUpsertion{upsert("carol", auth.SCRAMSHA256, 4096), upsert("dup", auth.SCRAMSHA256, 4096)}); err != nil {
		t.Fatal(err)
	}
	res, err := c.AlterSCRAMCredentials(ctx,
		[]SCRAMDeletion{{"carol", auth.SCRAMSHA256}, {"nobody", auth.SCRAMSHA256}, {"dup", auth.SCRAMSHA256}, {"dup", auth.SCRAMSHA512}},
		[]SCRAMUpsertion{
			upsert("alice", auth.SCRAMSHA512, 4096),
			upsert("", auth.SCRAMSHA512, 4096),
			upsert("few", auth.SCRAMSHA512, 4095),
			upsert("many", auth.SCRAMSHA512, 16385),
			upsert("mech", "", 4096),
			upsert("twice", auth.SCRAMSHA256, 4096), upsert("twice", auth.SCRAMSHA512, 4096),
			upsert("carol", auth.SCRAMSHA512, 4096),
			{User: "nosalt", Mechanism: auth.SCRAMSHA256, Iterations: 4096, SaltedPassword: []byte("x")},
		})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, r := range res {
		msg, _ := errmsg.Wire(r.Err)
		got[r.User] = fmt.Sprintf("%v|%s", errors.Is(r.Err, ErrUnacceptableCredential) || errors.Is(r.Err, ErrDuplicateResource) ||
			errors.Is(r.Err, ErrResourceNotFound) || errors.Is(r.Err, ErrUnsupportedSASLMechanism) || r.Err == nil, msg)
	}
	want := map[string]string{
		"alice":  "true|",
		"":       "true|Username must not be empty",
		"few":    "true|Too few iterations",
		"many":   "true|Too many iterations",
		"mech":   "true|Unknown SCRAM mechanism",
		"twice":  "true|A user credential cannot be altered twice in the same request",
		"carol":  "true|A user credential cannot be altered twice in the same request",
		"dup":    "true|A user credential cannot be altered twice in the same request",
		"nobody": "true|Attempt to delete a user credential that does not exist",
		"nosalt": "true|",
	}
	if len(got) != len(want) || len(res) != len(want) {
		t.Errorf("results %v, want one for each of %v", got, want)
	}
	for user, w := range want {
		if got[user] != w {
			t.Errorf("user %q: %q, want %q", user, got[user], w)
		}
	}
	for _, r := range res {
		if r.User == "nosalt" && !errors.Is(r.Err, ErrUnacceptableCredential) {
			t.Errorf("nosalt: %v", r.Err)
		}
	}
	img := c.Image()
	if _, ok := img.SCRAMCredential("alice", auth.SCRAMSHA512); !ok {
		t.Error("alice's credential, which passed, was not made")
	}
	if _, ok := img.SCRAMCredential("carol", auth.SCRAMSHA256); !ok {
		t.Error("carol's credential was deleted though her changes were refused")
	}
	if _, ok := img.SCRAMCredential("dup", auth.SCRAMSHA256); !ok {
		t.Error("dup's credential was deleted though deleted twice")
	}
}
