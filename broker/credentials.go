package broker

import (
	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/metadata"
)

// imageCredentials is the CredentialSource of the SASL mechanisms: the
// SCRAM credentials of the node's current metadata image, looked up at
// each exchange.
type imageCredentials struct {
	image func() *metadata.Image
}

// SCRAMCredential implements auth.CredentialSource.
func (c imageCredentials) SCRAMCredential(user, mechanism string) (auth.SCRAMCredential, bool) {
	m, ok := c.image().SCRAMCredential(user, mechanism)
	if !ok {
		return auth.SCRAMCredential{}, false
	}
	return auth.SCRAMCredential{Salt: m.Salt, StoredKey: m.StoredKey, ServerKey: m.ServerKey, Iterations: m.Iterations}, true
}

// credentials is the CredentialSource over n's metadata, for
// auth.Mechanisms.
func (n *Node) credentials() auth.CredentialSource {
	return imageCredentials{image: n.ctrl.Image}
}
