package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/secure"
)

// TestUpSecureDelegationTokens: klog up -n 3 --secure enables delegation
// tokens with one secret key for the cluster, kept in DATA-DIR/secure:
// admin creates a token for app on one node (KIP-373), and app logs in
// with it through SCRAM-SHA-512 on every node's SASL_SSL listener and
// produces as User:app.
func TestUpSecureDelegationTokens(t *testing.T) {
	dir, stateDir := t.TempDir(), t.TempDir()
	info := upDetached(t, stateDir, "-n", "3", "--secure", "--any-port", "--data-dir", dir)
	t.Cleanup(func() { stateRun(t, stateDir, "down") })
	s := info.Secure
	st, err := os.Stat(filepath.Join(s.Dir, "token-secret"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("the token secret key's file: %v %v", st, err)
	}
	ca, err := os.ReadFile(s.CA)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	client := func(seed string, m sasl.Mechanism, opts ...kgo.Opt) *kgo.Client {
		cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(seed), kgo.SASL(m),
			kgo.DialTLSConfig(&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12})}, opts...)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(cl.Close)
		return cl
	}
	ctx := testkit.Context(t)
	admin := s.Users[slices.IndexFunc(s.Users, func(u secure.UserInfo) bool { return u.Name == secure.Admin })]
	nodes := strings.Split(s.Bootstrap, ",")
	req := kmsg.NewPtrCreateDelegationTokenRequest()
	req.OwnerPrincipalType, req.OwnerPrincipalName = new("User"), new(secure.App)
	created, err := req.RequestWith(ctx, client(nodes[0], scram.Auth{User: admin.Name, Pass: admin.Password}.AsSha512Mechanism()))
	if err != nil || created.ErrorCode != 0 || created.PrincipalName != secure.App || created.TokenRequesterPrincipalName != secure.Admin {
		t.Fatalf("admin's token for app: %v %+v", err, created)
	}
	token := scram.Auth{User: created.TokenID, Pass: base64.StdEncoding.EncodeToString(created.HMAC), IsToken: true}.AsSha512Mechanism()
	for _, node := range nodes {
		testkit.WaitFor(t, "a token login on "+node, func() (bool, string) {
			_, err := kadm.NewClient(client(node, token)).ApiVersions(ctx)
			return err == nil, fmt.Sprint("login with the token: ", err)
		})
	}
	cl := client(nodes[len(nodes)-1], token, kgo.AllowAutoTopicCreation())
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce as app with its token: %v", err)
	}
}
