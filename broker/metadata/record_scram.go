package metadata

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
)

// SCRAMCredential is a user's credential for one SCRAM mechanism
// (SCRAM-SHA-256 or SCRAM-SHA-512): the salt, the iteration count and the
// keys derived from the salted password (RFC 5802's StoredKey and
// ServerKey), never the password. Byte fields are base64 in the encoding.
type SCRAMCredential struct {
	User       string `json:"user"`
	Mechanism  string `json:"mechanism"`
	Salt       []byte `json:"salt"`
	StoredKey  []byte `json:"storedKey"`
	ServerKey  []byte `json:"serverKey"`
	Iterations int32  `json:"iterations"`
}

// SCRAMUser names one credential of a user: the user and the mechanism.
type SCRAMUser struct {
	User      string `json:"user"`
	Mechanism string `json:"mechanism"`
}

// scramMechanisms are the mechanisms a SCRAM credential may be for.
var scramMechanisms = map[string]bool{"SCRAM-SHA-256": true, "SCRAM-SHA-512": true}

// AlterSCRAMCredentialsRecord upserts and deletes users' SCRAM
// credentials, all or none: the changes of one AlterUserScramCredentials.
// A credential named twice, or a deletion of a credential the image does
// not hold, rejects the record. Which iteration counts are acceptable is
// the controller's rule; the record needs them positive.
type AlterSCRAMCredentialsRecord struct {
	Upsert []SCRAMCredential `json:"upsert,omitempty"`
	Delete []SCRAMUser       `json:"delete,omitempty"`
}

// Type returns "AlterSCRAMCredentials".
func (*AlterSCRAMCredentialsRecord) Type() string { return "AlterSCRAMCredentials" }

// apply applies the record to img (see Image.Apply).
func (r *AlterSCRAMCredentialsRecord) apply(img *Image) (*Image, error) {
	seen := map[SCRAMUser]bool{}
	creds := cloneOrNew(img.SCRAMCredentials)
	for _, d := range r.Delete {
		if err := checkSCRAMUser(d, seen); err != nil {
			return nil, err
		}
		if _, ok := img.SCRAMCredentials[d.User][d.Mechanism]; !ok {
			return nil, fmt.Errorf("%w: %s of user %q", ErrUnknownSCRAMCredential, d.Mechanism, d.User)
		}
		byMech := maps.Clone(creds[d.User])
		delete(byMech, d.Mechanism)
		creds[d.User] = byMech
		if len(byMech) == 0 {
			delete(creds, d.User)
		}
	}
	for _, c := range r.Upsert {
		if err := checkSCRAMCredential(c, seen); err != nil {
			return nil, err
		}
		byMech := cloneOrNew(creds[c.User])
		byMech[c.Mechanism] = cloneSCRAMCredential(c)
		creds[c.User] = byMech
	}
	n := img.shallowCopy()
	n.SCRAMCredentials = creds
	if len(creds) == 0 {
		n.SCRAMCredentials = nil
	}
	return n, nil
}

// checkSCRAMUser checks a credential's name, and that seen does not hold
// it yet.
func checkSCRAMUser(u SCRAMUser, seen map[SCRAMUser]bool) error {
	switch {
	case u.User == "":
		return fmt.Errorf("%w: SCRAM credential of an empty user name", ErrInvalidRecord)
	case !scramMechanisms[u.Mechanism]:
		return fmt.Errorf("%w: SCRAM mechanism %q of user %q", ErrInvalidRecord, u.Mechanism, u.User)
	case seen[u]:
		return fmt.Errorf("%w: %s credential of user %q changed twice", ErrInvalidRecord, u.Mechanism, u.User)
	}
	seen[u] = true
	return nil
}

// checkSCRAMCredential checks a credential to keep.
func checkSCRAMCredential(c SCRAMCredential, seen map[SCRAMUser]bool) error {
	if err := checkSCRAMUser(SCRAMUser{c.User, c.Mechanism}, seen); err != nil {
		return err
	}
	if c.Iterations <= 0 || len(c.Salt) == 0 || len(c.StoredKey) == 0 || len(c.ServerKey) == 0 {
		return fmt.Errorf("%w: %s credential of user %q without salt, keys or iterations", ErrInvalidRecord, c.Mechanism, c.User)
	}
	return nil
}

// cloneSCRAMCredential copies c's byte slices, which the image must not
// share with a record.
func cloneSCRAMCredential(c SCRAMCredential) SCRAMCredential {
	c.Salt, c.StoredKey, c.ServerKey = slices.Clone(c.Salt), slices.Clone(c.StoredKey), slices.Clone(c.ServerKey)
	return c
}

// SCRAMCredential returns user's credential for mechanism.
func (img *Image) SCRAMCredential(user, mechanism string) (SCRAMCredential, bool) {
	c, ok := img.SCRAMCredentials[user][mechanism]
	return c, ok
}

// SortedSCRAMCredentials returns every SCRAM credential, by user and then
// mechanism.
func (img *Image) SortedSCRAMCredentials() []SCRAMCredential {
	var out []SCRAMCredential
	for _, byMech := range img.SCRAMCredentials {
		for _, c := range byMech {
			out = append(out, c)
		}
	}
	slices.SortFunc(out, func(a, b SCRAMCredential) int {
		return cmp.Or(cmp.Compare(a.User, b.User), cmp.Compare(a.Mechanism, b.Mechanism))
	})
	return out
}
