package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/klogdev/klog/internal/testkit"
	"github.com/klogdev/klog/secure"
)

// TestUpSecure: klog up --secure, on one node and on three, serves
// SASL_SSL with the users it prints, whose client configs work with
// franz-go and with klog's own commands; a wrong password is refused; the
// mTLS listener takes the users' client certificates only; and a restart
// on the same data keeps the CA, the users and their passwords.
func TestUpSecure(t *testing.T) {
	for _, nodes := range []string{"1", "3"} {
		t.Run("n="+nodes, func(t *testing.T) {
			dir, stateDir := t.TempDir(), t.TempDir()
			readyFile := filepath.Join(t.TempDir(), "ready.json")
			info := upDetached(t, stateDir, "-n", nodes, "--secure", "--any-port", "--data-dir", dir, "--ready-file", readyFile)
			s := info.Secure
			if s == nil || len(strings.Split(s.Bootstrap, ",")) != len(info.Brokers) || len(strings.Split(s.MTLSBootstrap, ",")) != len(info.Brokers) || len(s.Users) != 2 {
				t.Fatalf("klog up --secure printed %+v", info)
			}
			ca, err := os.ReadFile(s.CA)
			if err != nil {
				t.Fatal(err)
			}
			checkSecureFiles(t, s)
			secretsOffCommandLines(t, dir, info)
			for _, f := range []string{info.Log, readyFile} {
				st, err := os.Stat(f)
				if err != nil {
					t.Fatal(err)
				}
				if st.Mode().Perm() != 0o600 {
					t.Errorf("%s holds the passwords and has mode %v, want 0600", f, st.Mode().Perm())
				}
			}
			app := s.Users[slices.IndexFunc(s.Users, func(u secure.UserInfo) bool { return u.Name == secure.App })]
			scramRoundTrip(t, s.Bootstrap, ca, app, "orders")
			secureConfigs(t, s, "orders")
			secureACLs(t, info.Bootstrap, s, 4)
			secureQuorum(t, info, ca)
			// Tightened as docs/client-security.md says, on the PLAINTEXT
			// listener: app's ACLs stay so across a restart.
			mustRun(t, info.Bootstrap, "", "acl", "delete", "--allow", "User:app", "--topic", "*", "--group", "*", "--transactional-id", "*", "--yes")
			mustRun(t, info.Bootstrap, "", "acl", "create", "--allow", "User:app", "--operation", "WRITE", "--topic", "orders")

			if r := stateRun(t, stateDir, "down"); r.code != 0 {
				t.Fatalf("klog down: exit %d %s", r.code, r.stderr)
			}
			again := upDetached(t, stateDir, "-n", nodes, "--secure", "--any-port", "--data-dir", dir)
			caAgain, err := os.ReadFile(again.Secure.CA)
			if err != nil || !bytes.Equal(caAgain, ca) {
				t.Fatalf("the CA changed on restart (%v)", err)
			}
			if !slices.Equal(again.Secure.Users, s.Users) {
				t.Fatalf("users after restart %+v, before %+v", again.Secure.Users, s.Users)
			}
			// The credentials are the cluster's, kept in its metadata.
			admin := s.Users[slices.IndexFunc(s.Users, func(u secure.UserInfo) bool { return u.Name == secure.Admin })]
			scramRoundTrip(t, again.Secure.Bootstrap, ca, admin, "after-restart")
			secureACLs(t, again.Bootstrap, again.Secure, 2) // IDEMPOTENT_WRITE and WRITE on orders
			r := klogRun(t, again.Secure.Bootstrap, "", "--command-config", filepath.Join(s.Dir, "app.properties"), "consume", "orders", "-e")
			if r.code != 1 || !strings.Contains(r.stderr, "TOPIC_AUTHORIZATION_FAILED") {
				t.Fatalf("app reading orders with WRITE only: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			mustRun(t, again.Secure.Bootstrap, "x\n", "--command-config", filepath.Join(s.Dir, "app.properties"), "produce", "orders", "-q")
			if r := stateRun(t, stateDir, "down"); r.code != 0 {
				t.Fatalf("klog down: exit %d %s", r.code, r.stderr)
			}
		})
	}
}

// secretsOffCommandLines checks that no process of the cluster in dir,
// which every user of the machine may list with its command line, has the
// delegation token secret key on it: the nodes read it from its file.
func secretsOffCommandLines(t *testing.T, dir string, info readyInfo) {
	t.Helper()
	if runtime.GOOS != "linux" {
		return // read from /proc
	}
	key, err := os.ReadFile(filepath.Join(dir, secure.Dir, "token-secret"))
	if err != nil || len(bytes.TrimSpace(key)) == 0 {
		t.Fatalf("token secret: %q %v", key, err)
	}
	pids := []int{info.PID}
	for _, n := range info.Nodes {
		pids = append(pids, n.PID)
	}
	for _, pid := range pids {
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if err != nil {
			t.Fatalf("command line of process %d: %v", pid, err)
		}
		if bytes.Contains(cmdline, bytes.TrimSpace(key)) {
			t.Errorf("the delegation token secret key is on the command line of process %d: %q", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))
		}
	}
}

// secureQuorum checks that the metadata quorum of a cluster of --secure
// speaks mutual TLS: a node's certificate of the dev CA is let through;
// a plaintext peer and a user's client certificate of the same CA are
// refused.
func secureQuorum(t *testing.T, info readyInfo, ca []byte) {
	t.Helper()
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	app := info.Secure.Users[slices.IndexFunc(info.Secure.Users, func(u secure.UserInfo) bool { return u.Name == secure.App })]
	voters := 0
	for _, n := range info.Nodes {
		if n.ControllerAddress == "" {
			continue
		}
		voters++
		host, _, _ := net.SplitHostPort(n.ControllerAddress)
		peer := func(certFile, keyFile string) *tls.Config {
			cert, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				t.Fatal(err)
			}
			return &tls.Config{RootCAs: roots, ServerName: host, Certificates: []tls.Certificate{cert}}
		}
		nodePEM := filepath.Join(info.Secure.Dir, "node-"+strconv.Itoa(int(n.ID))+".pem")
		conn, err := tls.Dial("tcp", n.ControllerAddress, peer(nodePEM, nodePEM))
		if err != nil {
			t.Fatalf("node %d's quorum address with a node certificate: %v", n.ID, err)
		}
		conn.Close()
		if err := testkit.Refuses(n.ControllerAddress, nil, []byte("plaintext")); err != nil {
			t.Errorf("node %d's quorum address, plaintext: %v", n.ID, err)
		}
		if err := testkit.Refuses(n.ControllerAddress, peer(app.Cert, app.Key), []byte("raft")); err != nil {
			t.Errorf("node %d's quorum address with app's client certificate: %v", n.ID, err)
		}
	}
	if len(info.Nodes) > 1 && voters == 0 {
		t.Fatalf("no voter among %+v", info.Nodes)
	}
}

// scramRoundTrip creates topic, produces a record to it and consumes it
// with franz-go over SASL_SSL at bootstrap, as u with SCRAM-SHA-512,
// trusting ca.
func scramRoundTrip(t *testing.T, bootstrap string, ca []byte, u secure.UserInfo, topic string) {
	t.Helper()
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		t.Fatal("no certificate in the CA file")
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(bootstrap, ",")...),
		kgo.DialTLSConfig(&tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}),
		kgo.SASL(scram.Auth{User: u.Name, Pass: u.Password}.AsSha512Mechanism()),
		kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx := testkit.Context(t)
	// A first attempt that times out while a restarted cluster settles
	// may create the topic before the client sends it again; the retry
	// then finds it, as with Kafka.
	if _, err := kadm.NewClient(cl).CreateTopic(ctx, 1, -1, nil, topic); err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Fatalf("create %s over SASL_SSL: %v", topic, err)
	}
	if err := cl.ProduceSync(ctx, &kgo.Record{Topic: topic, Value: []byte("v")}).FirstErr(); err != nil {
		t.Fatalf("produce over SASL_SSL: %v", err)
	}
	fetches := cl.PollRecords(ctx, 1)
	if err := fetches.Err0(); err != nil || len(fetches.Records()) != 1 || string(fetches.Records()[0].Value) != "v" {
		t.Fatalf("consume over SASL_SSL: %v %v", err, fetches.Records())
	}
}

// secureConfigs checks the client configs of s with klog's commands:
// each user's Java properties lists topic over SASL_SSL, and its mTLS
// properties over SSL; a wrong password and an SSL client without a
// certificate are refused.
func secureConfigs(t *testing.T, s *secure.Info, topic string) {
	t.Helper()
	for _, u := range s.Users {
		for _, c := range []struct{ file, bootstrap string }{{u.Name + ".properties", s.Bootstrap}, {u.Name + "-mtls.properties", s.MTLSBootstrap}} {
			r := klogRun(t, c.bootstrap, "", "--command-config", filepath.Join(s.Dir, c.file), "topic", "list")
			if r.code != 0 || !strings.Contains(r.stdout, topic) {
				t.Fatalf("klog topic list --command-config %s: exit %d\n%s%s", c.file, r.code, r.stdout, r.stderr)
			}
		}
	}
	r := klogRun(t, s.Bootstrap, "", "--command-config", filepath.Join(s.Dir, "app.properties"), "--sasl-password", "wrong", "topic", "list")
	if r.code != 1 || !strings.Contains(r.stderr, "SASL_AUTHENTICATION_FAILED") {
		t.Fatalf("a wrong password: exit %d\n%s", r.code, r.stderr)
	}
	r = klogRun(t, s.MTLSBootstrap, "", "--tls-ca", s.CA, "topic", "list")
	if r.code != 1 {
		t.Fatalf("SSL without a client certificate: exit %d\n%s", r.code, r.stderr)
	}
}

// secureACLs checks the authorizer of --secure: app has want ACLs, and
// may not list ACLs (DESCRIBE on the cluster); admin, a super
// user, may, and so may the PLAINTEXT listener's clients at plaintext.
func secureACLs(t *testing.T, plaintext string, s *secure.Info, want int) {
	t.Helper()
	as := func(user string) []string {
		return []string{"--command-config", filepath.Join(s.Dir, user+".properties"), "-b", s.Bootstrap}
	}
	r := klogRun(t, "", "", append(as(secure.App), "acl", "list")...)
	if r.code != 1 || !strings.Contains(r.stderr, "CLUSTER_AUTHORIZATION_FAILED") {
		t.Fatalf("klog acl list as app: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{as(secure.Admin), {"-b", plaintext}} {
		r := klogRun(t, "", "", append(args, "acl", "list", "--allow", "User:app", "--format", "json")...)
		var doc aclsJSON
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &doc) != nil || len(doc.ACLs) != want {
			t.Fatalf("klog acl list %q: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
	}
}

// checkSecureFiles checks that the files klog up --secure printed exist,
// and that those holding a password or a key are its owner's alone.
func checkSecureFiles(t *testing.T, s *secure.Info) {
	t.Helper()
	secrets := []string{s.StorePassword}
	for _, u := range s.Users {
		secrets = append(secrets, u.Password)
	}
	files := append([]string{s.UsersFile, s.CA, s.Truststore}, s.Files...)
	for _, u := range s.Users {
		files = append(files, u.Cert, u.Key, u.Keystore)
	}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(f)
		secret := strings.HasSuffix(f, ".key") || strings.HasSuffix(f, ".p12") && f != s.Truststore || slices.ContainsFunc(secrets, func(p string) bool { return bytes.Contains(b, []byte(p)) })
		if secret && st.Mode().Perm() != 0o600 {
			t.Errorf("%s holds a secret and has mode %v", f, st.Mode().Perm())
		}
	}
}

// TestExampleSecureReadyFile is the snippet of docs/client-security.md:
// a Go test of an application reading the ready file of klog up --secure
// --format json and producing over SASL_SSL as the user app.
func TestExampleSecureReadyFile(t *testing.T) {
	readyFile := upSecureReadyFile(t) // klog up --secure --detach --any-port --format json --ready-file FILE
	b, err := os.ReadFile(readyFile)
	if err != nil {
		t.Fatal(err)
	}
	var ready struct {
		Secure struct {
			Bootstrap string `json:"bootstrap"`
			CA        string `json:"ca"`
			Users     []struct {
				Name     string `json:"name"`
				Password string `json:"password"`
			} `json:"users"`
		} `json:"secure"`
	}
	if err := json.Unmarshal(b, &ready); err != nil {
		t.Fatal(err)
	}
	pem, err := os.ReadFile(ready.Secure.CA)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	app := ready.Secure.Users[1] // admin, then app
	cl, err := kgo.NewClient(
		kgo.SeedBrokers(strings.Split(ready.Secure.Bootstrap, ",")...),
		kgo.DialTLSConfig(&tls.Config{RootCAs: roots}),
		kgo.SASL(scram.Auth{User: app.Name, Pass: app.Password}.AsSha512Mechanism()),
		kgo.DefaultProduceTopic("orders"),
		kgo.AllowAutoTopicCreation(),
	)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	if err := cl.ProduceSync(t.Context(), kgo.StringRecord("hello")).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// upSecureReadyFile starts klog up --secure in the background for the
// test, and returns its ready file.
func upSecureReadyFile(t *testing.T) string {
	t.Helper()
	readyFile := filepath.Join(t.TempDir(), "ready.json")
	stateDir := t.TempDir()
	upDetached(t, stateDir, "--secure", "--any-port", "--data-dir", t.TempDir(), "--ready-file", readyFile)
	t.Cleanup(func() { stateRun(t, stateDir, "down") })
	return readyFile
}
