package broker

import (
	"strings"
	"time"

	"github.com/klogdev/klog/broker/auth"
)

// nodeCredentials is the CredentialSource of the SASL mechanisms, and
// their TokenSource: the SCRAM credentials and delegation tokens of the
// node's current metadata image, looked up at each exchange.
type nodeCredentials struct{ n *Node }

// SCRAMCredential implements auth.CredentialSource.
func (c nodeCredentials) SCRAMCredential(user, mechanism string) (auth.SCRAMCredential, bool) {
	m, ok := c.n.ctrl.Image().SCRAMCredential(user, mechanism)
	if !ok {
		return auth.SCRAMCredential{}, false
	}
	return auth.SCRAMCredential{Salt: m.Salt, StoredKey: m.StoredKey, ServerKey: m.ServerKey, Iterations: m.Iterations}, true
}

// DelegationToken implements auth.TokenSource: the token of id with its
// HMAC under delegation.token.secret.key, unless tokens are disabled or
// it lapsed by the node's clock (the controller removes it at its next
// sweep). Its expiry is in wall-clock time, what is left of it by the
// node's clock from now, for the session's lifetime.
func (c nodeCredentials) DelegationToken(id string) (auth.DelegationToken, bool) {
	secret := c.n.settings().DelegationToken.SecretKey
	tok, ok := c.n.ctrl.Image().DelegationToken(id)
	now := c.n.clock.Now()
	if secret == "" || !ok || tok.Expired(now.UnixMilli()) {
		return auth.DelegationToken{}, false
	}
	_, owner, _ := strings.Cut(tok.Owner, ":")
	left := time.UnixMilli(tok.ExpiryMs).Sub(now)
	return auth.DelegationToken{Owner: owner, HMAC: auth.DelegationTokenHMAC(secret, id), Expiry: time.Now().Add(left)}, true
}

// credentials is the CredentialSource over n's metadata, for
// auth.Mechanisms. It may be made before the controller starts: the image
// is looked up at each exchange, and none comes before the node serves.
func (n *Node) credentials() auth.CredentialSource { return nodeCredentials{n: n} }
