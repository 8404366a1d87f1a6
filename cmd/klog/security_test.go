package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/klogdev/klog/devca"
	"github.com/klogdev/klog/internal/fakekafka"
	"github.com/klogdev/klog/internal/testkit"
)

// secureCluster is a kfake cluster over TLS with the dev CA's node
// certificate, and the CA's files.
type secureCluster struct {
	c    *kfake.Cluster
	addr string
	ca   *devca.Files
}

// startSecure starts a kfake cluster over TLS (asking for client
// certificates when mTLS), with opts.
func startSecure(t *testing.T, mTLS bool, opts ...kfake.Opt) secureCluster {
	t.Helper()
	ca, err := devca.Ensure(t.TempDir(), nil, []int32{0})
	if err != nil {
		t.Fatal(err)
	}
	cert, err := tls.LoadX509KeyPair(ca.Nodes[0].PEM, ca.Nodes[0].PEM)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if mTLS {
		pem, err := os.ReadFile(ca.CA)
		if err != nil {
			t.Fatal(err)
		}
		cfg.ClientCAs = x509.NewCertPool()
		cfg.ClientCAs.AppendCertsFromPEM(pem)
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	c, addr := fakekafka.Start(t, append([]kfake.Opt{kfake.TLS(cfg), kfake.SeedTopics(1, "t")}, opts...)...)
	return secureCluster{c: c, addr: addr, ca: ca}
}

// topics numbers the topics roundTrip creates.
var topics atomic.Int32

// roundTrip creates a topic, lists, produces to it and consumes from it with args (the
// connection's flags), env as the whole environment.
func roundTrip(t *testing.T, env map[string]string, args ...string) {
	t.Helper()
	run := func(stdin string, more ...string) result {
		t.Helper()
		r := klogRunEnv(t, env, strings.NewReader(stdin), append(append([]string{}, args...), more...)...)
		if r.code != 0 {
			t.Fatalf("klog %q: exit %d\n%s", more, r.code, r.stderr)
		}
		return r
	}
	topic := fmt.Sprintf("t%d", topics.Add(1))
	run("", "topic", "create", topic, "-p", "1")
	if r := run("", "topic", "list"); !strings.Contains(r.stdout, topic) {
		t.Fatalf("topic list does not list %s:\n%s", topic, r.stdout)
	}
	run("one\ntwo\n", "produce", topic, "-q")
	if r := run("", "consume", topic, "-e"); r.stdout != "one\ntwo\n" {
		t.Fatalf("consume printed %q", r.stdout)
	}
}

func TestSecureTLS(t *testing.T) {
	s := startSecure(t, false)
	roundTrip(t, nil, "-b", s.addr, "--tls-ca", s.ca.CA)
	// The truststore, named by Java's property.
	roundTrip(t, nil, "-b", s.addr, "-X", "ssl.truststore.location="+s.ca.Truststore, "-X", "ssl.truststore.password="+s.ca.Password)
	// Without the CA the broker's certificate is refused, at once.
	start := time.Now()
	r := klogRun(t, s.addr, "", "--security-protocol", "SSL", "topic", "list")
	if r.code != 1 || !strings.Contains(r.stderr, "certificate signed by unknown authority (the brokers' certificate is signed by a CA klog does not trust: give the CA with --tls-ca") {
		t.Fatalf("without the CA: exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("refused in %v: %s", time.Since(start), r.stderr)
	// Nothing checked, by the one flag that does it.
	roundTrip(t, nil, "-b", s.addr, "--tls-insecure-skip-verify")
	// A name the certificate does not carry.
	r = klogRun(t, s.addr, "", "--tls-ca", s.ca.CA, "--tls-server-name", "elsewhere.example", "topic", "list")
	if r.code != 1 || !strings.Contains(r.stderr, "--tls-server-name names the one it has") {
		t.Fatalf("another host's name: exit %d\n%s", r.code, r.stderr)
	}
	// Without TLS, franz-go says what is missing.
	r = klogRun(t, s.addr, "", "topic", "list")
	if r.code != 1 || !strings.Contains(r.stderr, "is TLS missing?") {
		t.Fatalf("plaintext to a TLS listener: exit %d\n%s", r.code, r.stderr)
	}
}

func TestSecureMTLS(t *testing.T) {
	s := startSecure(t, true)
	alice, err := s.ca.Client("alice")
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, nil, "-b", s.addr, "--tls-ca", s.ca.CA, "--tls-cert", alice.Cert, "--tls-key", alice.Key)
	roundTrip(t, map[string]string{"KLOG_TLS_CERT_PASSWORD": s.ca.Password},
		"-b", s.addr, "--tls-ca", s.ca.CA, "--tls-cert", alice.Keystore)
}

// scramCluster is a cluster over SASL_SSL with the SCRAM-SHA-512 user
// admin, and the client configs devca writes for it.
func scramCluster(t *testing.T, password string, opts ...kfake.Opt) secureCluster {
	t.Helper()
	s := startSecure(t, false, append([]kfake.Opt{kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "admin", "secret"),
		kfake.Superuser("SCRAM-SHA-256", "admin256", "secret256"), kfake.Superuser("PLAIN", "plain", "plainpw")}, opts...)...)
	_, err := devca.WriteClientConfigs(s.ca, devca.ClientConfig{
		Bootstrap: s.addr, Users: []devca.User{{Name: "admin", Password: password, Mechanism: "SCRAM-SHA-512"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestSecureSCRAMCommandConfig(t *testing.T) {
	s := scramCluster(t, "secret")
	props := filepath.Join(s.ca.Dir, "admin.properties")
	roundTrip(t, nil, "--command-config", props) // the brokers from bootstrap.servers
	roundTrip(t, map[string]string{"KLOG_COMMAND_CONFIG": props})
	// librdkafka's names, in a file and one by one.
	roundTrip(t, nil, "--command-config", filepath.Join(s.ca.Dir, "admin.librdkafka.properties"))
}

func TestSecureSCRAMProperties(t *testing.T) {
	s := scramCluster(t, "secret")
	roundTrip(t, nil, "-b", s.addr,
		"-X", "security.protocol=SASL_SSL", "-X", "sasl.mechanisms=SCRAM-SHA-512",
		"-X", "sasl.username=admin", "-X", "sasl.password=secret", "-X", "ssl.ca.location="+s.ca.CA)
}

// Each mechanism, by flags.
func TestSecureMechanisms(t *testing.T) {
	s := scramCluster(t, "secret")
	for _, m := range [][3]string{{"PLAIN", "plain", "plainpw"}, {"SCRAM-SHA-256", "admin256", "secret256"}, {"scram-sha-512", "admin", "secret"}} {
		roundTrip(t, nil, "-b", s.addr, "--tls-ca", s.ca.CA, "--sasl-mechanism", m[0], "--sasl-username", m[1], "--sasl-password", m[2])
	}
}

func TestSecureSCRAMEnv(t *testing.T) {
	s := scramCluster(t, "secret")
	env := map[string]string{
		"KLOG_BROKERS": s.addr, "KLOG_SASL_MECHANISM": "SCRAM-SHA-512",
		"KLOG_SASL_USERNAME": "admin", "KLOG_SASL_PASSWORD": "wrong", "KLOG_TLS_CA": s.ca.CA,
	}
	// The flag beats the environment's wrong password.
	roundTrip(t, env, "--sasl-password", "secret")
	env["KLOG_SASL_PASSWORD"] = "secret"
	roundTrip(t, env)
}

// kafkaSCRAMFailure makes c answer a SCRAM client-final message as Kafka
// answers a wrong password: SASL_AUTHENTICATION_FAILED with its message
// (kfake closes the connection instead).
func kafkaSCRAMFailure(c *kfake.Cluster) {
	c.ControlKey(int16(kmsg.SASLAuthenticate), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		req := kreq.(*kmsg.SASLAuthenticateRequest)
		if !strings.HasPrefix(string(req.SASLAuthBytes), "c=") {
			return nil, nil, false
		}
		resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		msg := "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512"
		resp.ErrorMessage = &msg
		return resp, nil, true
	})
}

// A wrong password ends the command with exit 1: at once with the
// broker's message when it answers SASL_AUTHENTICATION_FAILED, as Kafka
// does; with klog's explanation when it closes the connection, as kfake
// does (franz-go retries that a few times first).
func TestSecureWrongPassword(t *testing.T) {
	for _, kafkaAnswer := range []bool{true, false} {
		s := scramCluster(t, "wrong")
		want := "the broker closed the connection: with SASL"
		if kafkaAnswer {
			kafkaSCRAMFailure(s.c)
			want = "invalid credentials with SASL mechanism SCRAM-SHA-512"
		}
		props := filepath.Join(s.ca.Dir, "admin.properties")
		for _, args := range [][]string{{"topic", "list"}, {"produce", "t"}, {"consume", "t", "-e"}} {
			start := time.Now()
			r := klogRunEnv(t, nil, strings.NewReader("x\n"), append([]string{"--command-config", props}, args...)...)
			took := time.Since(start)
			if r.code != 1 || !strings.Contains(r.stderr, want) {
				t.Errorf("kafka's answer %v, klog %q: exit %d, want 1 and %q:\n%s", kafkaAnswer, args, r.code, want, r.stderr)
			}
			t.Logf("kafka's answer %v, klog %q: exit %d in %v: %s", kafkaAnswer, args, r.code, took, r.stderr)
			if kafkaAnswer && took > 5*time.Second { // a closed connection is retried a few times
				t.Errorf("kafka's answer %v, klog %q took %v", kafkaAnswer, args, took)
			}
		}
	}
}

// klog bench's clients (the topic's creation, the producer, the
// consumers) connect as the flags say.
func TestSecureBench(t *testing.T) {
	s := scramCluster(t, "secret")
	props := filepath.Join(s.ca.Dir, "admin.properties")
	for _, mode := range [][]string{{"produce", "-n", "200", "-s", "10"}, {"consume"}, {"e2e", "--rate", "200", "-d", "200ms"}} {
		r := klogRunEnv(t, nil, nil, append([]string{"--command-config", props, "--format", "json", "bench", "-t", "b", "--broker-pid", strconv.Itoa(os.Getpid())}, mode...)...)
		if r.code != 0 || !strings.Contains(r.stdout, `"records":`) {
			t.Fatalf("bench %q: exit %d\n%s%s", mode, r.code, r.stdout, r.stderr)
		}
	}
}

// klog tui's clients, the one to the cluster and one to each node, connect
// as the flags say.
func TestSecureTUI(t *testing.T) {
	s := scramCluster(t, "secret")
	in, keys := io.Pipe()
	var out testkit.Buffer
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		args := []string{"--command-config", filepath.Join(s.ca.Dir, "admin.properties"), "tui", "--readonly", "--refresh", "100ms"}
		done <- run(context.Background(), args, in, &out, &stderr, func(string) string { return "" })
	}()
	testkit.WaitFor(t, "the cluster screen with the node up", func() (bool, string) {
		s2 := screenText(&out)
		return strings.Contains(s2, s.addr) && strings.Contains(s2, "up"), s2
	})
	quitTUI(t, keys, done, &out, &stderr)
}

// -X is --client-property on every command that runs but klog up, whose
// -X sets broker configs; --client-property is there on all.
func TestClientPropertyShorthand(t *testing.T) {
	root := newRootCmd(&globals{})
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.HasSubCommands() || c.RunE == nil && c.Run == nil {
			return
		}
		x := c.Flags().ShorthandLookup("X")
		want := "client-property"
		if c.CommandPath() == "klog up" {
			want = "config"
		}
		if x == nil || x.Name != want {
			t.Errorf("%s: -X is %v, want --%s", c.CommandPath(), x, want)
		}
		if c.Flag("client-property") == nil {
			t.Errorf("%s has no --client-property", c.CommandPath())
		}
	}
	walk(root)
	r := klogRun(t, "127.0.0.1:1", "", "up", "--client-property", "nope=1", "--help")
	if r.code != 0 {
		t.Fatalf("klog up --client-property: exit %d\n%s", r.code, r.stderr)
	}
}
