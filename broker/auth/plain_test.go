package auth_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/klogdev/klog/broker/auth"
)

const jaas = `org.apache.kafka.common.security.plain.PlainLoginModule required
	username="admin" password="admin-secret"
	user_admin="admin-secret" user_bob="b\"ob" user_carol=bare;`

// configs is the MechanismConfig of a test: mechanism's configs, name
// and value pairs.
func configs(mechanism string, kv ...string) auth.MechanismConfig {
	return func(mech, name string) string {
		for i := 0; mech == mechanism && i+1 < len(kv); i += 2 {
			if kv[i] == name {
				return kv[i+1]
			}
		}
		return ""
	}
}

func TestPLAIN(t *testing.T) {
	c := withUser(t, creds{}, "alice", auth.SCRAMSHA512, "secret", 4096)
	c = withUser(t, c, "dave", auth.SCRAMSHA256, "d-secret", 4096)
	c = withUser(t, c, "bob", auth.SCRAMSHA256, "scram-bob", 4096)
	ms, err := auth.Mechanisms([]string{auth.PLAIN}, c, configs(auth.PLAIN, "sasl.jaas.config", jaas))
	if err != nil {
		t.Fatal(err)
	}
	m := ms[0]
	invalid := "Authentication failed: Invalid username or password"
	for _, tc := range []struct {
		name, token, principal, err string
	}{
		{"scram user", "\x00alice\x00secret", "User:alice", ""},
		{"scram-256 user", "dave\x00dave\x00d-secret", "User:dave", ""},
		{"jaas user", "\x00admin\x00admin-secret", "User:admin", ""},
		{"jaas escaped quote", "\x00bob\x00b\"ob", "User:bob", ""},
		{"jaas bare value", "\x00carol\x00bare", "User:carol", ""},
		{"jaas decides over scram", "\x00bob\x00scram-bob", "", invalid},
		{"wrong password", "\x00alice\x00Secret", "", invalid},
		{"unknown user", "\x00mallory\x00secret", "", invalid},
		{"authzid", "bob\x00alice\x00secret", "", "Authentication failed: Client requested an authorization id that is different from username"},
		{"no user", "\x00\x00secret", "", "Authentication failed: username not specified"},
		{"no password", "\x00alice\x00", "", "Authentication failed: password not specified"},
		{"two tokens", "alice\x00secret", "", "Invalid SASL/PLAIN response: expected 3 tokens, got 2"},
		{"four tokens", "\x00alice\x00secret\x00x", "", "Invalid SASL/PLAIN response: expected 3 tokens, got 4"},
		{"empty", "", "", "Invalid SASL/PLAIN response: expected 3 tokens, got 1"},
		{"non-UTF8", "\x00alice\x00secr\xff", "", invalid},
		{"oversized", "\x00alice\x00" + strings.Repeat("s", 2000), "", invalid},
	} {
		x := m.Start()
		answer, done, err := x.Next([]byte(tc.token))
		if tc.err == "" {
			if err != nil || !done || len(answer) != 0 || x.Principal() != tc.principal {
				t.Errorf("%s: %q %v %v %q", tc.name, answer, done, err, x.Principal())
			}
			if _, _, err := x.Next([]byte(tc.token)); err == nil {
				t.Errorf("%s: a second message accepted", tc.name)
			}
			continue
		}
		if done || err == nil || err.Error() != tc.err || !errors.Is(err, auth.ErrAuthenticationFailed) || x.Principal() != "" {
			t.Errorf("%s: %v %v, want %q", tc.name, done, err, tc.err)
		}
	}
	if r := auth.FailureReason(mustFail(t, m, "\x00mallory\x00x")); r != "unknown user" {
		t.Errorf("reason %q", r)
	}
}

func mustFail(t *testing.T, m auth.Mechanism, token string) error {
	t.Helper()
	_, _, err := m.Start().Next([]byte(token))
	if err == nil {
		t.Fatalf("%q admitted", token)
	}
	return err
}

func TestMechanisms(t *testing.T) {
	ms, err := auth.Mechanisms([]string{auth.SCRAMSHA512, auth.PLAIN, auth.SCRAMSHA256}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range ms {
		names = append(names, m.Name())
	}
	if got := strings.Join(names, " "); got != "SCRAM-SHA-512 PLAIN SCRAM-SHA-256" {
		t.Errorf("names %s", got)
	}
	// No credentials: nobody logs in.
	wantInvalid(t, login(t, clientOf(auth.SCRAMSHA512, "alice", "x"), ms[0].Start()), auth.SCRAMSHA512)
	for _, bad := range [][]string{{"GSSAPI"}, {"scram-sha-256"}, {auth.PLAIN, auth.PLAIN}} {
		if _, err := auth.Mechanisms(bad, nil, nil); !errors.Is(err, auth.ErrUnknownMechanism) {
			t.Errorf("%v: %v", bad, err)
		}
	}
	if _, err := auth.Mechanisms([]string{auth.PLAIN}, nil, configs(auth.PLAIN, "sasl.jaas.config", "bad")); err == nil {
		t.Error("a malformed JAAS config accepted")
	}
}

func TestParsePlainJAAS(t *testing.T) {
	users, err := auth.ParsePlainJAAS(jaas)
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 3 || users["admin"] != "admin-secret" || users["bob"] != `b"ob` || users["carol"] != "bare" {
		t.Errorf("users %q", users)
	}
	for _, bad := range []string{
		`org.apache.kafka.common.security.plain.PlainLoginModule required user_a="x"`,
		`org.apache.kafka.common.security.scram.ScramLoginModule required user_a="x";`,
		`org.apache.kafka.common.security.plain.PlainLoginModule always user_a="x";`,
		`org.apache.kafka.common.security.plain.PlainLoginModule required user_a="x;`,
		`org.apache.kafka.common.security.plain.PlainLoginModule required user_a "x";`,
		`org.apache.kafka.common.security.plain.PlainLoginModule required user_a=;`,
	} {
		if _, err := auth.ParsePlainJAAS(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
