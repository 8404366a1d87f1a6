package devca

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// User is a SASL user the client configs are written for.
type User struct {
	Name, Password string
	// Mechanism is PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (the default).
	Mechanism string
}

// ClientConfig says what WriteClientConfigs writes configs for.
type ClientConfig struct {
	// Bootstrap is the SASL_SSL listener's address (host:port, or
	// several comma-separated).
	Bootstrap string
	// MTLSBootstrap is the SSL listener asking clients for certificates;
	// "" writes no mTLS configs.
	MTLSBootstrap string
	Users         []User
}

// WriteClientConfigs writes, for each user, the configs of a client of
// the cluster: USER.properties (the Java client, kafka-console-*
// --command-config, klog --command-config), USER.librdkafka.properties
// (kcat -F, confluent-kafka), USER.franzgo.go (a franz-go program), and
// with an mTLS listener USER-mtls.properties and
// USER-mtls.librdkafka.properties with the user's client certificate;
// then README.md, which says what each file is. It returns the paths
// written.
func WriteClientConfigs(f *Files, c ClientConfig) ([]string, error) {
	var written []string
	write := func(name, text string, perm os.FileMode) error {
		path := filepath.Join(f.Dir, name)
		written = append(written, path)
		return writeFile(path, []byte(text), perm)
	}
	for _, u := range c.Users {
		if u.Mechanism == "" {
			u.Mechanism = "SCRAM-SHA-512"
		}
		if err := checkUser(u); err != nil {
			return nil, err
		}
		if err := write(u.Name+".properties", javaSASL(f, c.Bootstrap, u), 0o600); err != nil {
			return nil, err
		}
		if err := write(u.Name+".librdkafka.properties", librdkafkaSASL(f, c.Bootstrap, u), 0o600); err != nil {
			return nil, err
		}
		if err := write(u.Name+".franzgo.go", FranzGoSnippet(c.Bootstrap, f.CA, u), 0o600); err != nil {
			return nil, err
		}
		if c.MTLSBootstrap == "" {
			continue
		}
		cf, err := f.Client(u.Name)
		if err != nil {
			return nil, err
		}
		if err := write(u.Name+"-mtls.properties", javaMTLS(f, c.MTLSBootstrap, cf), 0o600); err != nil {
			return nil, err
		}
		if err := write(u.Name+"-mtls.librdkafka.properties", librdkafkaMTLS(f, c.MTLSBootstrap, cf), 0o644); err != nil {
			return nil, err
		}
	}
	if err := write("README.md", readme(f, c), 0o600); err != nil {
		return nil, err
	}
	return written, nil
}

// checkUser refuses what the files could not hold.
func checkUser(u User) error {
	switch u.Mechanism {
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
	default:
		return fmt.Errorf("dev CA: user %s: mechanism %q: want PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", u.Name, u.Mechanism)
	}
	if u.Name == "" || strings.ContainsAny(u.Name, "/\\\n\r \t") || strings.ContainsAny(u.Password, "\n\r") {
		return fmt.Errorf("dev CA: user %q: want a name without slashes or spaces and a one-line password", u.Name)
	}
	return nil
}

// loginModule is the JAAS login module of a mechanism.
func loginModule(mechanism string) string {
	if mechanism == "PLAIN" {
		return "org.apache.kafka.common.security.plain.PlainLoginModule"
	}
	return "org.apache.kafka.common.security.scram.ScramLoginModule"
}

// javaSASL is the Java client's config over SASL_SSL.
func javaSASL(f *Files, bootstrap string, u User) string {
	jaas := fmt.Sprintf(`%s required username="%s" password="%s";`,
		loginModule(u.Mechanism), jaasEscape(u.Name), jaasEscape(u.Password))
	return properties("Java client (and kafka-console-*, klog) config of "+u.Name+" over SASL_SSL",
		"bootstrap.servers", bootstrap,
		"security.protocol", "SASL_SSL",
		"sasl.mechanism", u.Mechanism,
		"sasl.jaas.config", jaas,
		"ssl.truststore.location", f.Truststore,
		"ssl.truststore.password", f.Password,
		"ssl.truststore.type", "PKCS12")
}

// librdkafkaSASL is librdkafka's config over SASL_SSL.
func librdkafkaSASL(f *Files, bootstrap string, u User) string {
	return properties("librdkafka (kcat -F, confluent-kafka) config of "+u.Name+" over SASL_SSL",
		"bootstrap.servers", bootstrap,
		"security.protocol", "SASL_SSL",
		"sasl.mechanisms", u.Mechanism,
		"sasl.username", u.Name,
		"sasl.password", u.Password,
		"ssl.ca.location", f.CA)
}

// javaMTLS is the Java client's config over SSL with the user's client
// certificate.
func javaMTLS(f *Files, bootstrap string, c ClientFiles) string {
	return properties("Java client config over SSL with a client certificate",
		"bootstrap.servers", bootstrap,
		"security.protocol", "SSL",
		"ssl.truststore.location", f.Truststore,
		"ssl.truststore.password", f.Password,
		"ssl.truststore.type", "PKCS12",
		"ssl.keystore.location", c.Keystore,
		"ssl.keystore.password", f.Password,
		"ssl.keystore.type", "PKCS12",
		"ssl.key.password", f.Password)
}

// librdkafkaMTLS is librdkafka's config over SSL with the user's client
// certificate.
func librdkafkaMTLS(f *Files, bootstrap string, c ClientFiles) string {
	return properties("librdkafka config over SSL with a client certificate",
		"bootstrap.servers", bootstrap,
		"security.protocol", "SSL",
		"ssl.ca.location", f.CA,
		"ssl.certificate.location", c.Cert,
		"ssl.key.location", c.Key)
}

// properties writes key, value pairs as a properties file under a
// comment, escaping backslashes as Java's format needs (librdkafka reads
// the same files; no value here needs it but a password).
func properties(comment string, kv ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s, written by klog's dev CA.\n", comment)
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, "%s=%s\n", kv[i], strings.ReplaceAll(kv[i+1], `\`, `\\`))
	}
	return b.String()
}

// jaasEscape escapes a value quoted in a JAAS option.
func jaasEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}

// franzGoSource is a compiled franz-go program (its test builds every
// variant FranzGoSnippet makes of it) for SCRAM-SHA-512.
//
//go:embed testdata/franzgo/main.go
var franzGoSource string

// FranzGoSnippet is a franz-go program connecting to bootstrap over
// SASL_SSL as u, trusting caFile.
func FranzGoSnippet(bootstrap, caFile string, u User) string {
	r := []string{
		`"127.0.0.1:9093"`, strconv.Quote(bootstrap),
		`"/path/to/ca.pem"`, strconv.Quote(caFile),
		`"app"`, strconv.Quote(u.Name),
		`"app-secret"`, strconv.Quote(u.Password),
	}
	switch u.Mechanism {
	case "PLAIN":
		r = append(r, "sasl/scram", "sasl/plain", "scram.Auth", "plain.Auth", "AsSha512Mechanism()", "AsMechanism()", "SCRAM", "PLAIN")
	case "SCRAM-SHA-256":
		r = append(r, "AsSha512Mechanism()", "AsSha256Mechanism()")
	}
	return strings.NewReplacer(r...).Replace(franzGoSource)
}

// readme says what the directory's files are and how to use them.
func readme(f *Files, c ClientConfig) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Client configs of a secured klog cluster\n\n")
	fmt.Fprintf(&b, "Written by klog's dev CA. SASL_SSL listener: `%s`.", c.Bootstrap)
	if c.MTLSBootstrap != "" {
		fmt.Fprintf(&b, " SSL listener asking for client certificates (mTLS): `%s`.", c.MTLSBootstrap)
	}
	fmt.Fprintf(&b, "\n\nThe password of every `.p12` file here is in `password.txt`.\n\n")
	fmt.Fprintf(&b, "| file | what |\n| --- | --- |\n")
	fmt.Fprintf(&b, "| `ca.pem` | the CA certificate (PEM): trust it (`ssl.ca.location`, `--tls-ca`) |\n")
	fmt.Fprintf(&b, "| `truststore.p12` | the CA as a PKCS12 truststore for the JVM |\n")
	fmt.Fprintf(&b, "| `node-N.pem`, `node-N.p12` | node N's key and certificate (the broker's) |\n")
	for _, u := range c.Users {
		n := u.Name
		fmt.Fprintf(&b, "| `%s.properties` | %s over SASL_SSL, Java client and `kafka-console-* --command-config` |\n", n, n)
		fmt.Fprintf(&b, "| `%s.librdkafka.properties` | %s over SASL_SSL, librdkafka (`kcat -F`, confluent-kafka) |\n", n, n)
		fmt.Fprintf(&b, "| `%s.franzgo.go` | %s over SASL_SSL, a franz-go program (`go run`) |\n", n, n)
		if c.MTLSBootstrap != "" {
			fmt.Fprintf(&b, "| `%s-mtls.properties`, `%s-mtls.librdkafka.properties` | %s over mTLS with `client-%s.pem`/`.key`/`.p12` |\n", n, n, n, n)
		}
	}
	if len(c.Users) > 0 {
		n := c.Users[0].Name
		fmt.Fprintf(&b, "\nFor example:\n\n```\n")
		fmt.Fprintf(&b, "klog --command-config %s topic list\n", filepath.Join(f.Dir, n+".properties"))
		fmt.Fprintf(&b, "kcat -F %s -L\n", filepath.Join(f.Dir, n+".librdkafka.properties"))
		fmt.Fprintf(&b, "kafka-topics.sh --bootstrap-server %s --command-config %s --list\n", c.Bootstrap, filepath.Join(f.Dir, n+".properties"))
		fmt.Fprintf(&b, "```\n")
	}
	return b.String()
}
