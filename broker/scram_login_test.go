package broker_test

import (
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/klogdev/klog/broker"
	"github.com/klogdev/klog/broker/events"
	"github.com/klogdev/klog/internal/testkit"
)

// TestSCRAMUsersLogIn checks the node's own mechanisms end to end: a
// user created with AlterUserScramCredentials on the PLAINTEXT listener
// logs in on the SASL_SSL listener with SCRAM-SHA-512, SCRAM-SHA-256
// (its own credential) and PLAIN (checked against the SCRAM credential),
// becomes the requests' principal, and a wrong password or a user
// without a credential for the mechanism is refused with Kafka's error.
func TestSCRAMUsersLogIn(t *testing.T) {
	seen := &principals{}
	pki, configs := saslNode(t, seen)
	n, err := broker.Start(testkit.Context(t), broker.Config{Memory: true, Listen: "127.0.0.1:0", Configs: configs,
		Logger: testkit.Logger(t, slog.LevelWarn), RequestHook: seen.hook})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	ctx := testkit.Context(t)

	admin, err := kgo.NewClient(kgo.SeedBrokers(n.ListenerAddr("PLAINTEXT").String()))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	// One request per mechanism of app: a user twice in one request is
	// DUPLICATE_RESOURCE, as Kafka answers.
	for _, upserts := range [][]kadm.UpsertSCRAM{
		{{User: "app", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "app-secret"},
			{User: "only512", Mechanism: kadm.ScramSha512, Iterations: 4096, Password: "p"}},
		{{User: "app", Mechanism: kadm.ScramSha256, Iterations: 4096, Password: "app-secret-256"}},
	} {
		res, err := kadm.NewClient(admin).AlterUserSCRAMs(ctx, nil, upserts)
		if err == nil {
			err = res.Error()
		}
		if err != nil {
			t.Fatal(err)
		}
	}

	login := func(m sasl.Mechanism) error {
		cl, err := kgo.NewClient(kgo.SeedBrokers(n.ListenerAddr("SASL_SSL").String()),
			kgo.DialTLSConfig(pki.clientTLS(pkix.Name{})), kgo.SASL(m), kgo.RequestRetries(0))
		if err != nil {
			return err
		}
		defer cl.Close()
		_, err = kadm.NewClient(cl).BrokerMetadata(ctx)
		return err
	}
	for _, tc := range []struct {
		name string
		m    sasl.Mechanism
		want error
	}{
		{"SCRAM-SHA-512", scram.Auth{User: "app", Pass: "app-secret"}.AsSha512Mechanism(), nil},
		{"SCRAM-SHA-256", scram.Auth{User: "app", Pass: "app-secret-256"}.AsSha256Mechanism(), nil},
		{"PLAIN", plain.Auth{User: "app", Pass: "app-secret"}.AsMechanism(), nil},
		{"SCRAM-SHA-512 wrong password", scram.Auth{User: "app", Pass: "app-secret-256"}.AsSha512Mechanism(), kerr.SaslAuthenticationFailed},
		{"PLAIN wrong password", plain.Auth{User: "app", Pass: "nope"}.AsMechanism(), kerr.SaslAuthenticationFailed},
		{"SCRAM-SHA-256 without a credential", scram.Auth{User: "only512", Pass: "p"}.AsSha256Mechanism(), kerr.SaslAuthenticationFailed},
		{"unknown user", scram.Auth{User: "mallory", Pass: "p"}.AsSha512Mechanism(), kerr.SaslAuthenticationFailed},
	} {
		err := login(tc.m)
		switch {
		case tc.want == nil && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != nil && !errors.Is(err, tc.want):
			t.Errorf("%s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if p := seen.of("SASL_SSL", kmsg.Metadata); p != "User:app" {
		t.Errorf("principal of Metadata on SASL_SSL is %q, want User:app", p)
	}
	checkFailedLoginEvents(t, n, login)
}

// checkFailedLoginEvents checks the events of TestSCRAMUsersLogIn's
// failed logins: who the client claimed to be, from where, the mechanism
// and why, the client told only Kafka's words; then that 10 more wrong
// passwords of one user add an event a window, which counts them once
// the window ended.
func checkFailedLoginEvents(t *testing.T, n *broker.Node, login func(sasl.Mechanism) error) {
	failed := func() map[string][]events.Event {
		out := map[string][]events.Event{}
		for _, e := range n.Events().Since(0, 0).Events {
			if e.Kind == events.AuthenticationFailed {
				k := fmt.Sprint(e.Detail["principal"], " ", e.Detail["mechanism"], " ", e.Detail["reason"])
				out[k] = append(out[k], e)
			}
		}
		return out
	}
	got := failed()
	for _, k := range []string{"User:app SCRAM-SHA-512 wrong proof", "User:app PLAIN wrong password",
		"User:mallory SCRAM-SHA-512 unknown user", "User:only512 SCRAM-SHA-256 unknown user"} {
		if len(got[k]) != 1 {
			t.Errorf("%d failed-login events %q, want 1; all: %v", len(got[k]), k, got)
			continue
		}
		d := got[k][0].Detail
		if a, _ := d["address"].(string); a == "" || d["listener"] != "SASL_SSL" || d["api"] != "SASLAuthenticate" ||
			strings.Contains(fmt.Sprint(d["error"]), "unknown") {
			t.Errorf("failed-login detail %v", d)
		}
	}
	wrong := scram.Auth{User: "app", Pass: "guess"}.AsSha512Mechanism()
	start := time.Now()
	for range 10 {
		if err := login(wrong); !errors.Is(err, kerr.SaslAuthenticationFailed) {
			t.Fatalf("wrong password: %v", err)
		}
	}
	// One event a window at most (the windows the logins took, and the
	// one they began in), besides the first.
	const k = "User:app SCRAM-SHA-512 wrong proof"
	bound := 2 + int(time.Since(start)/(10*time.Second))
	if evs := failed()[k]; len(evs) > bound {
		t.Fatalf("%d events of 11 wrong passwords, want at most %d", len(evs), bound)
	}
	if _, err := n.AdvanceClock(testkit.Context(t), 11*time.Second); err != nil {
		t.Fatal(err)
	}
	evs := failed()[k]
	if len(evs) < 2 || len(evs) > bound+1 || int64(len(evs))+repeatsOf(evs) != 11 {
		t.Fatalf("after the window: %d events counting %d repeats, want at most %d counting 11 logins", len(evs), repeatsOf(evs), bound+1)
	}
}
