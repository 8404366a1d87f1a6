package main

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
)

// A run over SASL_SSL: the dev CA that -mode devca writes, a broker
// serving TLS with node 0's certificate and PLAIN, and kbench connecting
// with -X and -command-config. Its line says how it connected.
func TestProduceConsumeSASLSSL(t *testing.T) {
	dir := t.TempDir()
	ca, code := runJSON(t, "-mode", "devca", "-dir", dir)
	if code != 0 {
		t.Fatalf("devca exit %d: %v", code, ca["error"])
	}
	pem := fmt.Sprint(ca["pem"])
	cert, err := tls.LoadX509KeyPair(pem, pem)
	if err != nil {
		t.Fatalf("node 0's key material %s: %v", pem, err)
	}
	for _, k := range []string{"keystore", "truststore", "password_file"} {
		if _, err := os.Stat(fmt.Sprint(ca[k])); err != nil {
			t.Errorf("devca's %s: %v", k, err)
		}
	}
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(),
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}}),
		kfake.EnableSASL(), kfake.Superuser("PLAIN", "bench", "bench-secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addr := c.ListenAddrs()[0]

	m, code := runJSON(t, "-mode", "produce", "-brokers", addr, "-topic", "t", "-records", "500", "-timeout", "60s",
		"-X", "security.protocol=SASL_SSL", "-X", "ssl.ca.location="+fmt.Sprint(ca["ca"]),
		"-X", "sasl.mechanism=PLAIN", "-X", "sasl.username=bench", "-X", "sasl.password=bench-secret")
	if code != 0 {
		t.Fatalf("produce exit %d: %v", code, m["error"])
	}
	if m["acked"] != float64(500) || m["security_protocol"] != "SASL_SSL" || m["sasl_mechanism"] != "PLAIN" {
		t.Fatalf("produce line: %v", m)
	}
	if tlsName := fmt.Sprint(m["tls"]); !strings.HasPrefix(tlsName, "TLS 1.3 TLS_") {
		t.Errorf("tls %q, want TLS 1.3 and its suite", tlsName)
	}

	// The same from a Java client config file, the JVM's truststore.
	password, err := os.ReadFile(fmt.Sprint(ca["password_file"]))
	if err != nil {
		t.Fatal(err)
	}
	props := filepath.Join(dir, "client.properties")
	if err := os.WriteFile(props, []byte(`security.protocol=SASL_SSL
ssl.truststore.location=`+fmt.Sprint(ca["truststore"])+`
ssl.truststore.password=`+strings.TrimSpace(string(password))+`
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="bench" password="bench-secret";
`), 0o600); err != nil {
		t.Fatal(err)
	}
	m, code = runJSON(t, "-mode", "consume", "-brokers", addr, "-topic", "t", "-records", "0", "-timeout", "60s",
		"-command-config", props)
	if code != 0 || m["consumed"] != float64(501) || m["security_protocol"] != "SASL_SSL" {
		t.Fatalf("consume exit %d: %v", code, m)
	}

	// Plaintext to a TLS listener fails; so does a wrong password.
	if m, code := runJSON(t, "-mode", "produce", "-brokers", addr, "-records", "1", "-timeout", "5s", "-create-wait", "2s"); code == 0 {
		t.Fatalf("plaintext produce to a SASL_SSL listener succeeded: %v", m)
	}
	m, code = runJSON(t, "-mode", "produce", "-brokers", addr, "-records", "1", "-timeout", "5s", "-command-config", props,
		"-X", "sasl.password=wrong")
	if code == 0 {
		t.Fatalf("a wrong password succeeded: %v", m)
	}
	// Settings that cannot connect are refused before any run.
	m, code = runJSON(t, "-mode", "produce", "-brokers", addr, "-X", "no.such.property=1")
	if code == 0 || !strings.Contains(fmt.Sprint(m["error"]), "no.such.property") {
		t.Fatalf("exit %d, error %v", code, m["error"])
	}
}
