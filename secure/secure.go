// Package secure is the security of a development cluster, klog up
// --secure: the dev CA and the nodes' certificates (package devca), the
// broker configs of the SASL_SSL listener and of the SSL listener that
// asks clients for certificates (mTLS), the users admin and app with
// SCRAM-SHA-512 and SCRAM-SHA-256 credentials, and the client configs
// that connect as them. Everything lives in one directory of the
// cluster's data directory and is kept across restarts:
//
//	DATA-DIR/secure/users.json   the users' generated passwords (mode 0600)
//	DATA-DIR/secure/token-secret the cluster's delegation.token.secret.key (mode 0600)
//	DATA-DIR/secure/...          the dev CA's files and the client configs (package devca)
//
// The PLAINTEXT listener stays beside the secure ones, for klog's own
// commands and tools on the developer's machine; its clients and the
// nodes' traffic between them are User:ANONYMOUS. The authorizer is on
// (Kafka's StandardAuthorizer): admin and User:ANONYMOUS are super users,
// and app is given the ACLs an application needs (AppACLs) when it is
// first created. Delegation tokens are on: every node has the cluster's
// delegation.token.secret.key, generated once.
//
// It imports nothing of broker/ or store/.
package secure

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/devca"
	"github.com/klogdev/klog/inspect"
)

// Dir is the directory of the cluster's security, under its data
// directory.
const Dir = "secure"

// The users klog up --secure makes: Admin is a super user, App what an
// application needs.
const (
	Admin = "admin"
	App   = "app"
)

// Listener names of the secure listeners, as in the listeners config,
// and of the metadata quorum's (controller.listener.names).
const (
	SASLSSL    = "SASL_SSL"
	MTLS       = "SSL"
	Controller = "CONTROLLER"
)

// Mechanisms are the SASL mechanisms of the SASL_SSL listener, the users'
// SCRAM credentials first (PLAIN checks the same passwords).
var Mechanisms = []string{"SCRAM-SHA-512", "SCRAM-SHA-256", "PLAIN"}

// PrincipalRules maps a client certificate's subject to its CN on the
// SSL listener: devca's client certificate of USER is User:USER.
const PrincipalRules = "RULE:^CN=([^,]+)$/$1/,DEFAULT"

// Authorizer is the authorizer.class.name of --secure.
const Authorizer = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

// SuperUsers are the super.users of --secure: admin, and the PLAINTEXT
// listener's clients, the developer's own tools.
var SuperUsers = []string{"User:" + Admin, "User:ANONYMOUS"}

// AppACLs are the ACLs app is given when it is created: ALL on every
// topic, group and transactional id, and IDEMPOTENT_WRITE on the cluster,
// what an application (a transactional one too) needs.
var AppACLs = []inspect.ACLSpec{
	{Allow: []string{"User:" + App}, Operations: []string{"ALL"}, Topics: []string{"*"}, Groups: []string{"*"}, TransactionalIDs: []string{"*"}},
	{Allow: []string{"User:" + App}, Operations: []string{"IDEMPOTENT_WRITE"}, Cluster: true},
}

// usersFile holds the users' passwords in Dir.
const usersFile = "users.json"

// tokenSecretFile holds the cluster's delegation.token.secret.key in Dir.
const tokenSecretFile = "token-secret"

// scramIterations is the iteration count of the users' credentials.
const scramIterations = 8192

// Cluster is the security of one cluster: its dev CA, the users and
// their passwords.
type Cluster struct {
	CA *devca.Files
	// Users are admin and app, with their passwords and SCRAM-SHA-512.
	Users []devca.User
	// UsersFile holds the passwords.
	UsersFile string
	// TokenSecretKey is the delegation.token.secret.key of every node,
	// kept in TokenSecretFile. The nodes' configs name the file (Kafka's
	// DirectoryConfigProvider) rather than holding the key, so that it
	// stays off the command lines of the nodes of klog up -n.
	TokenSecretKey  string
	TokenSecretFile string
}

// Ensure makes, or keeps, the security of the cluster in dataDir: the
// dev CA with a certificate for each of nodes naming hosts, and the
// users with a password each, generated once.
func Ensure(dataDir string, hosts []string, nodes []int32) (*Cluster, error) {
	dir := filepath.Join(dataDir, Dir)
	ca, err := devca.Ensure(dir, hosts, nodes)
	if err != nil {
		return nil, err
	}
	c := &Cluster{CA: ca, UsersFile: filepath.Join(ca.Dir, usersFile)}
	passwords, err := ensurePasswords(c.UsersFile, Admin, App)
	if err != nil {
		return nil, err
	}
	for _, name := range []string{Admin, App} {
		c.Users = append(c.Users, devca.User{Name: name, Password: passwords[name], Mechanism: Mechanisms[0]})
	}
	c.TokenSecretFile = filepath.Join(ca.Dir, tokenSecretFile)
	if c.TokenSecretKey, err = ensureSecret(c.TokenSecretFile); err != nil {
		return nil, fmt.Errorf("the delegation token secret key: %w", err)
	}
	return c, nil
}

// ensureSecret reads the secret of path, making it first when there is
// none.
func ensureSecret(path string) (string, error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil && strings.TrimSpace(string(b)) != "":
		return strings.TrimSpace(string(b)), nil
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return "", err
	}
	secret := rand.Text() + rand.Text()
	return secret, writeSecret(path, []byte(secret+"\n"))
}

// ensurePasswords reads the passwords of path, by user, and adds one for
// each of names without.
func ensurePasswords(path string, names ...string) (map[string]string, error) {
	passwords := map[string]string{}
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &passwords); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	changed := false
	for _, name := range names {
		if passwords[name] == "" {
			passwords[name] = strings.ToLower(rand.Text())
			changed = true
		}
	}
	if !changed {
		return passwords, nil
	}
	if b, err = json.MarshalIndent(passwords, "", "  "); err != nil {
		return nil, err
	}
	if err := writeSecret(path, append(b, '\n')); err != nil {
		return nil, fmt.Errorf("write the users' passwords: %w", err)
	}
	return passwords, nil
}

// writeSecret replaces path with data, readable by its owner only,
// through a temporary file renamed over it: a reader sees all or nothing.
func writeSecret(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// Listeners are a node's addresses, host:port, under --secure.
type Listeners struct {
	Plaintext, SASLSSL, MTLS string
	// Quorum is set for a node of a cluster of several (klog up -n): the
	// metadata quorum's connections between nodes are mutual TLS too.
	Quorum bool
}

// NodeConfigs are the broker configs of node id under --secure: its
// PLAINTEXT listener first (the inter-broker one), then SASL_SSL and SSL,
// with the node's certificate and the CA, SSL asking every client for a
// certificate of the CA and naming it by its CN. With l.Quorum the
// metadata quorum's listener is SSL: the nodes present their
// certificates to each other and take no other.
func (c *Cluster) NodeConfigs(id int32, l Listeners) map[string]string {
	configs := c.listenerConfigs(id, l)
	if l.Quorum {
		configs["controller.listener.names"] = Controller
		configs["listener.security.protocol.map"] = "PLAINTEXT:PLAINTEXT," + SASLSSL + ":SASL_SSL," + MTLS + ":SSL," + Controller + ":SSL"
	}
	return configs
}

// listenerConfigs are the configs of NodeConfigs' listeners.
func (c *Cluster) listenerConfigs(id int32, l Listeners) map[string]string {
	return map[string]string{
		"listeners":                                     "PLAINTEXT://" + l.Plaintext + "," + SASLSSL + "://" + l.SASLSSL + "," + MTLS + "://" + l.MTLS,
		"ssl.keystore.type":                             "PEM",
		"ssl.keystore.location":                         c.CA.Nodes[id].PEM,
		"ssl.truststore.type":                           "PEM",
		"ssl.truststore.location":                       c.CA.CA,
		"sasl.enabled.mechanisms":                       strings.Join(Mechanisms, ","),
		"listener.name.ssl.ssl.client.auth":             "required",
		"listener.name.ssl.ssl.principal.mapping.rules": PrincipalRules,
		"authorizer.class.name":                         Authorizer,
		"super.users":                                   strings.Join(SuperUsers, ";"),
		"config.providers":                              "secure",
		"config.providers.secure.class":                 "org.apache.kafka.common.config.provider.DirectoryConfigProvider",
		"config.providers.secure.param.allowed.paths":   c.CA.Dir,
		"delegation.token.secret.key":                   "${secure:" + c.CA.Dir + ":" + tokenSecretFile + "}",
	}
}

// Provision gives each user the SCRAM credentials it lacks, with its
// password; a credential there already (from an earlier start, or
// changed since with klog user) is kept. A user created here is given its
// ACLs (AppACLs for app); those of a user there already are left as the
// developer made them.
func (c *Cluster) Provision(ctx context.Context, adm *kadm.Client) error {
	var names []string
	for _, u := range c.Users {
		names = append(names, u.Name)
	}
	users, err := inspect.ListUsers(ctx, adm, names...)
	if err != nil {
		return err
	}
	for _, u := range c.Users {
		i := slices.IndexFunc(users, func(d inspect.User) bool { return d.User == u.Name })
		if u.Name == App && (i < 0 || len(users[i].Credentials) == 0) {
			if err := createACLs(ctx, adm, AppACLs); err != nil {
				return fmt.Errorf("user %s: %w", u.Name, err)
			}
		}
		for _, m := range inspect.SCRAMMechanisms {
			if i >= 0 && slices.ContainsFunc(users[i].Credentials, func(c inspect.UserCredential) bool { return c.Mechanism == m.String() }) {
				continue
			}
			if err := inspect.SetUserPassword(ctx, adm, u.Name, u.Password, m, scramIterations); err != nil {
				return fmt.Errorf("user %s: %w", u.Name, err)
			}
		}
	}
	return nil
}

// createACLs creates the ACLs of specs.
func createACLs(ctx context.Context, adm *kadm.Client, specs []inspect.ACLSpec) error {
	for _, spec := range specs {
		acls, errs, err := inspect.CreateACLs(ctx, adm, spec)
		if err != nil {
			return fmt.Errorf("create ACLs: %w", err)
		}
		for i, e := range errs {
			if e != "" {
				return fmt.Errorf("create ACL %s %s on %s:%s: %s", acls[i].Principal, acls[i].Operation, acls[i].ResourceType, acls[i].ResourceName, e)
			}
		}
	}
	return nil
}

// describeACLs says what the ACLs of spec allow: OPERATIONS on
// TYPE:NAME, ....
func describeACLs(spec inspect.ACLSpec) string {
	var resources []string
	for _, r := range []struct {
		kind  string
		names []string
	}{{"TOPIC", spec.Topics}, {"GROUP", spec.Groups}, {"TRANSACTIONAL_ID", spec.TransactionalIDs}} {
		for _, n := range r.names {
			resources = append(resources, r.kind+":"+n)
		}
	}
	if spec.Cluster {
		resources = append(resources, "CLUSTER")
	}
	return strings.Join(spec.Operations, ",") + " on " + strings.Join(resources, ", ")
}

// Info is what a client of the secure listeners needs, as klog up
// --secure prints it.
type Info struct {
	// Bootstrap is the SASL_SSL listeners, MTLSBootstrap the SSL ones,
	// comma-separated.
	Bootstrap     string   `json:"bootstrap"`
	MTLSBootstrap string   `json:"mtls_bootstrap"`
	Mechanisms    []string `json:"mechanisms"`
	// Dir holds the files below.
	Dir string `json:"dir"`
	// CA is the CA certificate (PEM), Truststore the same as PKCS12, and
	// StorePassword the password of every PKCS12 store of Dir.
	CA            string `json:"ca"`
	Truststore    string `json:"truststore"`
	StorePassword string `json:"store_password"`
	// UsersFile holds the users' passwords.
	UsersFile string     `json:"users_file"`
	Users     []UserInfo `json:"users"`
	// Files are the client configs written, and the README saying what
	// each is.
	Files []string `json:"files"`
	// Authorizer is authorizer.class.name, SuperUsers super.users and
	// AppACLs what app was given when it was created.
	Authorizer string   `json:"authorizer"`
	SuperUsers []string `json:"super_users"`
	AppACLs    []string `json:"app_acls"`
}

// UserInfo is one user of Info.
type UserInfo struct {
	Name     string `json:"name"`
	Password string `json:"password"`
	// Cert, Key and Keystore are the user's client certificate for the
	// SSL listener.
	Cert     string `json:"cert"`
	Key      string `json:"key"`
	Keystore string `json:"keystore"`
}

// WriteClientConfigs writes the client configs of every user for the
// SASL_SSL listeners at bootstrap and the SSL ones at mtlsBootstrap, and
// returns what they hold.
func (c *Cluster) WriteClientConfigs(bootstrap, mtlsBootstrap string) (*Info, error) {
	files, err := devca.WriteClientConfigs(c.CA, devca.ClientConfig{Bootstrap: bootstrap, MTLSBootstrap: mtlsBootstrap, Users: c.Users})
	if err != nil {
		return nil, err
	}
	info := &Info{
		Bootstrap: bootstrap, MTLSBootstrap: mtlsBootstrap, Mechanisms: Mechanisms, Dir: c.CA.Dir,
		CA: c.CA.CA, Truststore: c.CA.Truststore, StorePassword: c.CA.Password, UsersFile: c.UsersFile, Files: files,
		Authorizer: Authorizer, SuperUsers: SuperUsers,
	}
	for _, spec := range AppACLs {
		info.AppACLs = append(info.AppACLs, describeACLs(spec))
	}
	for _, u := range c.Users {
		cf, err := c.CA.Client(u.Name)
		if err != nil {
			return nil, err
		}
		info.Users = append(info.Users, UserInfo{Name: u.Name, Password: u.Password, Cert: cf.Cert, Key: cf.Key, Keystore: cf.Keystore})
	}
	return info, nil
}
