package metadata

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// DelegationToken is a delegation token (KIP-48) as the metadata keeps
// it, Kafka's DelegationTokenRecord: who owns it, who asked for it and
// who may renew it (principals, "User:alice"), and its times in Unix
// milliseconds. Its HMAC is never kept: each node computes it from the
// token id with delegation.token.secret.key.
type DelegationToken struct {
	TokenID   string   `json:"tokenID"`
	Owner     string   `json:"owner"`
	Requester string   `json:"requester"`
	Renewers  []string `json:"renewers,omitempty"`
	IssueMs   int64    `json:"issueMs"`
	MaxMs     int64    `json:"maxMs"`
	ExpiryMs  int64    `json:"expiryMs"`
}

// Expired reports whether the token has lapsed at nowMs, past its expiry
// or its maximum lifetime.
func (t DelegationToken) Expired(nowMs int64) bool {
	return t.ExpiryMs < nowMs || t.MaxMs < nowMs
}

// OwnerOrRenewer reports whether principal owns the token or may renew
// it.
func (t DelegationToken) OwnerOrRenewer(principal string) bool {
	return t.Owner == principal || slices.Contains(t.Renewers, principal)
}

// DelegationTokenRecord creates a token (Create) or replaces one the
// image holds with new times (a renewal or an expiry in the future):
// creating a token id the image holds, or replacing one it does not,
// rejects the record, so that a renewal racing the token's removal does
// not bring it back.
type DelegationTokenRecord struct {
	Create bool            `json:"create,omitempty"`
	Token  DelegationToken `json:"token"`
}

// Type returns "DelegationToken".
func (*DelegationTokenRecord) Type() string { return "DelegationToken" }

// apply applies the record to img (see Image.Apply).
func (r *DelegationTokenRecord) apply(img *Image) (*Image, error) {
	t := r.Token
	if err := checkDelegationToken(t); err != nil {
		return nil, err
	}
	_, held := img.DelegationTokens[t.TokenID]
	switch {
	case r.Create && held:
		return nil, fmt.Errorf("%w: delegation token %s created twice", ErrInvalidRecord, t.TokenID)
	case !r.Create && !held:
		return nil, fmt.Errorf("%w: %s", ErrUnknownDelegationToken, t.TokenID)
	}
	tokens := cloneOrNew(img.DelegationTokens)
	t.Renewers = slices.Clone(t.Renewers)
	tokens[t.TokenID] = t
	n := img.shallowCopy()
	n.DelegationTokens = tokens
	return n, nil
}

// checkDelegationToken checks a token to keep.
func checkDelegationToken(t DelegationToken) error {
	switch {
	case t.TokenID == "":
		return fmt.Errorf("%w: delegation token without an id", ErrInvalidRecord)
	case !strings.Contains(t.Owner, ":") || !strings.Contains(t.Requester, ":"):
		return fmt.Errorf("%w: delegation token %s: owner %q or requester %q is not a principal", ErrInvalidRecord, t.TokenID, t.Owner, t.Requester)
	case t.MaxMs < t.IssueMs || t.ExpiryMs > t.MaxMs:
		return fmt.Errorf("%w: delegation token %s: times out of order", ErrInvalidRecord, t.TokenID)
	}
	return nil
}

// RemoveDelegationTokenRecord removes a token: an expiry now, or the
// controller's sweep of the tokens that lapsed. A token the image does
// not hold rejects it.
type RemoveDelegationTokenRecord struct {
	TokenID string `json:"tokenID"`
}

// Type returns "RemoveDelegationToken".
func (*RemoveDelegationTokenRecord) Type() string { return "RemoveDelegationToken" }

// apply applies the record to img (see Image.Apply).
func (r *RemoveDelegationTokenRecord) apply(img *Image) (*Image, error) {
	if _, ok := img.DelegationTokens[r.TokenID]; !ok {
		return nil, fmt.Errorf("%w: %s", ErrUnknownDelegationToken, r.TokenID)
	}
	tokens := maps.Clone(img.DelegationTokens)
	delete(tokens, r.TokenID)
	n := img.shallowCopy()
	n.DelegationTokens = tokens
	if len(tokens) == 0 {
		n.DelegationTokens = nil
	}
	return n, nil
}

// DelegationToken returns the token of id.
func (img *Image) DelegationToken(id string) (DelegationToken, bool) {
	t, ok := img.DelegationTokens[id]
	return t, ok
}

// SortedDelegationTokens returns every delegation token, by id.
func (img *Image) SortedDelegationTokens() []DelegationToken {
	out := slices.Collect(maps.Values(img.DelegationTokens))
	slices.SortFunc(out, func(a, b DelegationToken) int { return cmp.Compare(a.TokenID, b.TokenID) })
	return out
}

// decodeDelegationTokens sets the delegation tokens of an image being
// decoded, checked as DelegationTokenRecord checks them.
func (img *Image) decodeDelegationTokens(tokens []DelegationToken) error {
	if len(tokens) == 0 {
		return nil
	}
	img.DelegationTokens = make(map[string]DelegationToken, len(tokens))
	for _, t := range tokens {
		if err := checkDelegationToken(t); err != nil {
			return fmt.Errorf("%w: image: %v", ErrMalformedRecord, err)
		}
		if _, dup := img.DelegationTokens[t.TokenID]; dup {
			return fmt.Errorf("%w: image delegation token %s twice", ErrMalformedRecord, t.TokenID)
		}
		img.DelegationTokens[t.TokenID] = t
	}
	return nil
}
