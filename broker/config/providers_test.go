package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestConfigProviders: a broker config's value takes its parts from
// Kafka's FileConfigProvider, DirectoryConfigProvider and
// EnvVarConfigProvider, within their allowed.paths and allowlist.pattern;
// what resolves to nothing stays as written, as in Kafka.
func TestConfigProviders(t *testing.T) {
	secrets := t.TempDir()
	other := t.TempDir()
	write := func(dir, name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write(secrets, "token-secret", "s3cret-key\n")
	users := write(secrets, "users.properties", "# users\nadmin = admin-pw\n")
	write(other, "token-secret", "not-this-one\n")
	t.Setenv("KLOG_TEST_KEYSTORE_PASSWORD", "ks-pw")
	t.Setenv("KLOG_TEST_HIDDEN", "hidden")

	b, err := ParseBroker(map[string]string{
		"config.providers":                             "file, dir,env",
		"config.providers.file.class":                  fileProvider,
		"config.providers.dir.class":                   dirProvider,
		"config.providers.dir.param.allowed.paths":     secrets,
		"config.providers.env.class":                   envProvider,
		"config.providers.env.param.allowlist.pattern": "KLOG_TEST_KEY.*",
		"delegation.token.secret.key":                  "${dir:" + secrets + ":token-secret}",
		"sasl.jaas.config":                             `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="${file:` + users + `:admin}";`,
		"ssl.keystore.password":                        "${env:KLOG_TEST_KEYSTORE_PASSWORD}",
		"ssl.key.password":                             "${env:KLOG_TEST_HIDDEN}",
		"ssl.truststore.password":                      "${dir:" + other + ":token-secret}",
		"ssl.truststore.location":                      "${nope:x}",
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{
		"delegation.token.secret.key": "s3cret-key",
		"sasl.jaas.config":            `org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-pw";`,
		"ssl.keystore.password":       "ks-pw",
		// Outside allowlist.pattern and allowed.paths, and of a provider
		// not configured: as written.
		"ssl.key.password":        "${env:KLOG_TEST_HIDDEN}",
		"ssl.truststore.password": "${dir:" + other + ":token-secret}",
		"ssl.truststore.location": "${nope:x}",
	} {
		if got := b.static[name]; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	for name := range b.static {
		if name == providersConfig || len(name) > len(providersConfig) && name[:len(providersConfig)+1] == providersConfig+"." {
			t.Errorf("%s kept among the broker's configs", name)
		}
	}

	for _, bad := range []map[string]string{
		{"config.providers": "vault", "config.providers.vault.class": "com.example.VaultConfigProvider"},
		{"config.providers": "file", "config.providers.file.class": fileProvider, "ssl.key.password": "${file:" + filepath.Join(secrets, "missing.properties") + ":k}"},
		{"config.providers": "env", "config.providers.env.class": envProvider, "ssl.key.password": "${env:/x:KLOG_TEST_HIDDEN}"},
	} {
		if _, err := ParseBroker(bad); !errors.Is(err, ErrInvalidValue) {
			t.Errorf("ParseBroker(%v): %v, want ErrInvalidValue", bad, err)
		}
	}
}
