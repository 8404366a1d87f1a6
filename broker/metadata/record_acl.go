package metadata

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// ACL is one ACL binding, Kafka's AccessControlEntryRecord without its
// id: who (Principal, from Host) may or may not (Permission) do what
// (Operation) on which resources (ResourceType, ResourceName read as
// PatternType says). broker/auth's ACL has the same fields, and the
// authorizer decides over the image's ACLs converted to it; checking an
// ACL before it is proposed is the authorizer's (auth.ACL.Validate).
type ACL struct {
	ResourceType kmsg.ACLResourceType        `json:"resourceType"`
	ResourceName string                      `json:"resourceName"`
	PatternType  kmsg.ACLResourcePatternType `json:"patternType"`
	Principal    string                      `json:"principal"`
	Host         string                      `json:"host"`
	Operation    kmsg.ACLOperation           `json:"operation"`
	Permission   kmsg.ACLPermissionType      `json:"permission"`
}

// ACLEntry is an ACL with its id.
type ACLEntry struct {
	ID  UUID `json:"id"`
	ACL ACL  `json:"acl"`
}

// ACLs is the cluster's ACL bindings. It is never modified: every change
// makes a new one, so that a reader that built something from it (the
// authorizer's index) tells by the pointer whether the ACLs changed. A
// nil *ACLs holds none.
type ACLs struct {
	byID  map[UUID]ACL
	byACL map[ACL]UUID
}

// Len is the number of ACLs.
func (s *ACLs) Len() int {
	if s == nil {
		return 0
	}
	return len(s.byID)
}

// Sorted returns every ACL with its id, by id.
func (s *ACLs) Sorted() []ACLEntry {
	if s == nil {
		return nil
	}
	out := make([]ACLEntry, 0, len(s.byID))
	for _, id := range slices.SortedFunc(maps.Keys(s.byID), func(a, b UUID) int { return strings.Compare(string(a[:]), string(b[:])) }) {
		out = append(out, ACLEntry{ID: id, ACL: s.byID[id]})
	}
	return out
}

// ID returns the id of an ACL equal to acl, if there is one.
func (s *ACLs) ID(acl ACL) (UUID, bool) {
	if s == nil {
		return UUID{}, false
	}
	id, ok := s.byACL[acl]
	return id, ok
}

// clone copies s for a change.
func (s *ACLs) clone() *ACLs {
	if s == nil {
		return &ACLs{byID: map[UUID]ACL{}, byACL: map[ACL]UUID{}}
	}
	return &ACLs{byID: maps.Clone(s.byID), byACL: maps.Clone(s.byACL)}
}

// add adds one ACL: an id in use is an error, an ACL equal to one held is
// skipped (two creations of the same binding racing to the controller
// leave one, as Kafka's controller keeps one).
func (s *ACLs) add(e ACLEntry) error {
	if e.ID == (UUID{}) {
		return fmt.Errorf("%w: ACL without id", ErrInvalidRecord)
	}
	if _, dup := s.byID[e.ID]; dup {
		return fmt.Errorf("%w: ACL id %v in use", ErrInvalidRecord, e.ID)
	}
	if _, dup := s.byACL[e.ACL]; dup {
		return nil
	}
	s.byID[e.ID] = e.ACL
	s.byACL[e.ACL] = e.ID
	return nil
}

// CreateACLsRecord adds ACLs, Kafka's AccessControlEntryRecords of one
// CreateAcls request.
type CreateACLsRecord struct {
	ACLs []ACLEntry `json:"acls"`
}

// Type returns "CreateACLs".
func (*CreateACLsRecord) Type() string { return "CreateACLs" }

// apply applies the record to img (see Image.Apply).
func (r *CreateACLsRecord) apply(img *Image) (*Image, error) {
	acls := img.ACLs.clone()
	for _, e := range r.ACLs {
		if err := acls.add(e); err != nil {
			return nil, err
		}
	}
	n := img.shallowCopy()
	n.ACLs = acls
	return n, nil
}

// RemoveACLsRecord removes ACLs by id, Kafka's
// RemoveAccessControlEntryRecords of one DeleteAcls request. An id no
// ACL has (removed by a request that raced with this one) is skipped.
type RemoveACLsRecord struct {
	IDs []UUID `json:"ids"`
}

// Type returns "RemoveACLs".
func (*RemoveACLsRecord) Type() string { return "RemoveACLs" }

// apply applies the record to img (see Image.Apply).
func (r *RemoveACLsRecord) apply(img *Image) (*Image, error) {
	acls := img.ACLs.clone()
	for _, id := range r.IDs {
		if acl, ok := acls.byID[id]; ok {
			delete(acls.byID, id)
			delete(acls.byACL, acl)
		}
	}
	n := img.shallowCopy()
	n.ACLs = acls
	return n, nil
}
