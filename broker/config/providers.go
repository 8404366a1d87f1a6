package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/klogdev/klog/internal/javaprops"
)

// Config providers, as Kafka's (KIP-297, KIP-421): a broker config's value
// may take parts from files or the environment instead of holding them,
// so that a secret need not appear where the configs are given (a command
// line, which every user of the machine can read).
//
//	config.providers=file,dir,env
//	config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
//	config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider
//	config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
//	config.providers.dir.param.allowed.paths=/etc/klog/secrets
//	delegation.token.secret.key=${dir:/etc/klog/secrets:token-secret}
//	sasl.jaas.config=... password="${file:/etc/klog/users.properties:admin}";
//	ssl.keystore.password=${env:KEYSTORE_PASSWORD}
//
// A variable is ${PROVIDER:PATH:KEY}, or ${PROVIDER:KEY} without a path.
// FileConfigProvider reads KEY of the properties file PATH,
// DirectoryConfigProvider the contents of the file KEY in the directory
// PATH, EnvVarConfigProvider the environment variable KEY (its param
// allowlist.pattern, a regular expression, limits which). FileConfigProvider
// and DirectoryConfigProvider take the param allowed.paths, a comma
// separated list: a PATH outside them resolves nothing. As in Kafka, a
// variable that resolves to nothing is left in the value as written, and
// a file or directory that cannot be read is an error at start.
const (
	providersConfig = "config.providers"
	fileProvider    = "org.apache.kafka.common.config.provider.FileConfigProvider"
	dirProvider     = "org.apache.kafka.common.config.provider.DirectoryConfigProvider"
	envProvider     = "org.apache.kafka.common.config.provider.EnvVarConfigProvider"
)

// configVariable is Kafka's ConfigTransformer pattern: provider, an
// optional path, key.
var configVariable = regexp.MustCompile(`\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`)

// provider looks up a key under a path; ok false: nothing there.
type provider func(path, key string) (value string, ok bool, err error)

// resolveProviders takes the config.providers settings out of kv and
// replaces the variables of the other values; env reads the environment.
func resolveProviders(kv map[string]string, env func(string) (string, bool)) (map[string]string, error) {
	out := make(map[string]string, len(kv))
	for k, v := range kv {
		if k != providersConfig && !strings.HasPrefix(k, providersConfig+".") {
			out[k] = v
		}
	}
	names := strings.TrimSpace(kv[providersConfig])
	if names == "" {
		return out, nil
	}
	providers := make(map[string]provider)
	for name := range strings.SplitSeq(names, ",") {
		name = strings.TrimSpace(name)
		class, ok := kv[providersConfig+"."+name+".class"]
		if !ok {
			continue
		}
		p, err := newProvider(name, strings.TrimSpace(class), providerParams(kv, name), env)
		if err != nil {
			return nil, err
		}
		providers[name] = p
	}
	for k, v := range out {
		r, err := replaceVariables(v, providers)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrInvalidValue, k, err)
		}
		out[k] = r
	}
	return out, nil
}

// providerParams are the config.providers.NAME.param.* settings of one
// provider, by param name.
func providerParams(kv map[string]string, name string) map[string]string {
	prefix := providersConfig + "." + name + ".param."
	params := make(map[string]string)
	for k, v := range kv {
		if p, ok := strings.CutPrefix(k, prefix); ok && p != "" {
			params[p] = v
		}
	}
	return params
}

// newProvider makes the provider of class, Kafka's class names.
func newProvider(name, class string, params map[string]string, env func(string) (string, bool)) (provider, error) {
	switch class {
	case fileProvider:
		allowed := allowedPaths(params["allowed.paths"])
		return func(path, key string) (string, bool, error) {
			if path = allowed(path); path == "" {
				return "", false, nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return "", false, fmt.Errorf("could not read properties from file %s: %w", path, err)
			}
			props, err := javaprops.Parse(string(data))
			if err != nil {
				return "", false, fmt.Errorf("properties file %s: %w", path, err)
			}
			for _, p := range props {
				if p.Key == key {
					return p.Value, true, nil
				}
			}
			return "", false, nil
		}, nil
	case dirProvider:
		allowed := allowedPaths(params["allowed.paths"])
		return func(path, key string) (string, bool, error) {
			if path = allowed(path); path == "" || key == "" || strings.ContainsRune(key, filepath.Separator) {
				return "", false, nil
			}
			if fi, err := os.Stat(path); err != nil || !fi.IsDir() {
				return "", false, nil
			}
			file := filepath.Join(path, key)
			if fi, err := os.Stat(file); err != nil || !fi.Mode().IsRegular() {
				return "", false, nil
			}
			data, err := os.ReadFile(file)
			if err != nil {
				return "", false, fmt.Errorf("could not read file %s: %w", file, err)
			}
			return string(data), true, nil
		}, nil
	case envProvider:
		allow := regexp.MustCompile(".*")
		if p, ok := params["allowlist.pattern"]; ok {
			re, err := regexp.Compile("^(?:" + p + ")$")
			if err != nil {
				return nil, fmt.Errorf("%w: %s.%s.param.allowlist.pattern: %w", ErrInvalidValue, providersConfig, name, err)
			}
			allow = re
		}
		return func(path, key string) (string, bool, error) {
			if path != "" {
				return "", false, fmt.Errorf("path is not supported for EnvVarConfigProvider, invalid value '%s'", path)
			}
			if !allow.MatchString(key) {
				return "", false, nil
			}
			v, ok := env(key)
			return v, ok, nil
		}, nil
	}
	return nil, fmt.Errorf("%w: %s.%s.class=%s: klog's config providers are %s, %s and %s", ErrInvalidValue, providersConfig, name, class, fileProvider, dirProvider, envProvider)
}

// allowedPaths returns what a provider may read of a path: the path, its
// normalised form when allowed.paths (comma separated) is set and it lies
// under one of them, "" when it does not.
func allowedPaths(list string) func(string) string {
	var allowed []string
	for p := range strings.SplitSeq(list, ",") {
		if p = strings.TrimSpace(p); p != "" {
			allowed = append(allowed, filepath.Clean(p))
		}
	}
	return func(path string) string {
		if len(allowed) == 0 || path == "" {
			return path
		}
		clean := filepath.Clean(path)
		for _, a := range allowed {
			if rel, err := filepath.Rel(a, clean); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return clean
			}
		}
		return ""
	}
}

// replaceVariables replaces v's variables that a provider resolves.
func replaceVariables(v string, providers map[string]provider) (string, error) {
	var firstErr error
	r := configVariable.ReplaceAllStringFunc(v, func(m string) string {
		sub := configVariable.FindStringSubmatch(m)
		p, ok := providers[sub[1]]
		if !ok || firstErr != nil {
			return m
		}
		got, ok, err := p(sub[3], sub[4])
		if err != nil {
			firstErr = err
		}
		if !ok {
			return m
		}
		return got
	})
	return r, firstErr
}
