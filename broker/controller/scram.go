package controller

import (
	"context"
	"errors"
	"fmt"

	"github.com/klogdev/klog/broker/auth"
	"github.com/klogdev/klog/broker/errmsg"
	"github.com/klogdev/klog/broker/metadata"
)

// ErrUnsupportedSASLMechanism is returned for a SCRAM credential of a
// mechanism other than SCRAM-SHA-256 and SCRAM-SHA-512.
var ErrUnsupportedSASLMechanism = errors.New("unsupported SASL mechanism")

// ErrUnacceptableCredential is returned for a SCRAM credential of an
// empty user name, an iteration count outside [4096, 16384], or an empty
// salt or salted password.
var ErrUnacceptableCredential = auth.ErrUnacceptableCredential

// ErrResourceNotFound is returned for the deletion of a SCRAM credential
// that does not exist.
var ErrResourceNotFound = errors.New("resource not found")

// ErrDuplicateResource is returned for a user whose credentials one
// request alters more than once.
var ErrDuplicateResource = errors.New("duplicate resource")

// SCRAMDeletion deletes a user's credential for a mechanism.
type SCRAMDeletion struct {
	User, Mechanism string
}

// SCRAMUpsertion sets a user's credential for a mechanism from a salted
// password (the client salts the password; the server never sees it).
type SCRAMUpsertion struct {
	User, Mechanism      string
	Iterations           int32
	Salt, SaltedPassword []byte
}

// UserResult is the outcome of a request's changes for one user.
type UserResult struct {
	User string
	Err  error
}

// AlterSCRAMCredentials deletes and upserts SCRAM credentials as Kafka's
// ScramControlManager does: a user is altered at most once per request
// (DUPLICATE_RESOURCE for every change of a user named twice), each
// change is checked on its own, and those that pass are committed
// together in one record. The results say each user's outcome: the
// deletions, then the upsertions that passed, then the failures. An error
// is returned, and nothing changed, when the proposal itself fails.
func (c *Controller) AlterSCRAMCredentials(ctx context.Context, deletions []SCRAMDeletion, upsertions []SCRAMUpsertion) ([]UserResult, error) {
	if err := c.CatchUp(ctx); err != nil {
		return nil, err
	}
	img := c.Image()
	failed := map[string]error{}
	var failedOrder []string
	fail := func(user string, err error) {
		failed[user] = err
		failedOrder = append(failedOrder, user)
	}
	dels := map[string]metadata.SCRAMUser{}
	var delOrder []string
	for _, d := range deletions {
		if _, ok := failed[d.User]; ok {
			continue
		}
		if _, dup := dels[d.User]; dup {
			delete(dels, d.User)
			fail(d.User, duplicateUser())
			continue
		}
		if err := checkDeletion(img, d); err != nil {
			fail(d.User, err)
			continue
		}
		dels[d.User] = metadata.SCRAMUser{User: d.User, Mechanism: d.Mechanism}
		delOrder = append(delOrder, d.User)
	}
	ups := map[string]metadata.SCRAMCredential{}
	var upOrder []string
	for _, u := range upsertions {
		if _, ok := failed[u.User]; ok {
			continue
		}
		_, dupDel := dels[u.User]
		if _, dupUp := ups[u.User]; dupDel || dupUp {
			delete(dels, u.User)
			delete(ups, u.User)
			fail(u.User, duplicateUser())
			continue
		}
		cred, err := upsertion(u)
		if err != nil {
			fail(u.User, err)
			continue
		}
		ups[u.User] = cred
		upOrder = append(upOrder, u.User)
	}
	return c.commitSCRAM(ctx, dels, delOrder, ups, upOrder, failed, failedOrder)
}

// commitSCRAM proposes the changes that passed and returns every user's
// result.
func (c *Controller) commitSCRAM(ctx context.Context, dels map[string]metadata.SCRAMUser, delOrder []string,
	ups map[string]metadata.SCRAMCredential, upOrder []string, failed map[string]error, failedOrder []string) ([]UserResult, error) {
	rec := &metadata.AlterSCRAMCredentialsRecord{}
	var results []UserResult
	for _, user := range delOrder {
		if d, ok := dels[user]; ok {
			rec.Delete = append(rec.Delete, d)
			results = append(results, UserResult{User: user})
		}
	}
	for _, user := range upOrder {
		if u, ok := ups[user]; ok {
			rec.Upsert = append(rec.Upsert, u)
			results = append(results, UserResult{User: user})
		}
	}
	if len(results) > 0 {
		res, err := c.propose(ctx, rec)
		if err != nil {
			return nil, err
		}
		if res.err != nil {
			err := res.err
			if errors.Is(err, metadata.ErrUnknownSCRAMCredential) {
				err = notFound(err)
			}
			for i := range results {
				results[i].Err = err
			}
		} else {
			c.spread(ctx)
		}
	}
	for _, user := range failedOrder {
		results = append(results, UserResult{User: user, Err: failed[user]})
	}
	return results, nil
}

func duplicateUser() error {
	return errmsg.With(ErrDuplicateResource, "A user credential cannot be altered twice in the same request")
}

func notFound(err error) error {
	return errmsg.With(fmt.Errorf("%w: %w", ErrResourceNotFound, err), "Attempt to delete a user credential that does not exist")
}

// checkUserAndMechanism is Kafka's validateScramUsernameAndMechanism.
func checkUserAndMechanism(user, mechanism string) error {
	if user == "" {
		return errmsg.With(fmt.Errorf("%w: empty user name", ErrUnacceptableCredential), "Username must not be empty")
	}
	if mechanism != auth.SCRAMSHA256 && mechanism != auth.SCRAMSHA512 {
		return errmsg.With(fmt.Errorf("%w: %q", ErrUnsupportedSASLMechanism, mechanism), "Unknown SCRAM mechanism")
	}
	return nil
}

// checkDeletion checks a deletion against img.
func checkDeletion(img *metadata.Image, d SCRAMDeletion) error {
	if err := checkUserAndMechanism(d.User, d.Mechanism); err != nil {
		return err
	}
	if _, ok := img.SCRAMCredential(d.User, d.Mechanism); !ok {
		return notFound(fmt.Errorf("%w: %s of user %q", metadata.ErrUnknownSCRAMCredential, d.Mechanism, d.User))
	}
	return nil
}

// upsertion checks an upsertion and derives the credential kept for it.
func upsertion(u SCRAMUpsertion) (metadata.SCRAMCredential, error) {
	if err := checkUserAndMechanism(u.User, u.Mechanism); err != nil {
		return metadata.SCRAMCredential{}, err
	}
	switch {
	case u.Iterations < auth.MinSCRAMIterations:
		return metadata.SCRAMCredential{}, errmsg.With(fmt.Errorf("%w: %d iterations, fewer than %d", ErrUnacceptableCredential, u.Iterations, auth.MinSCRAMIterations), "Too few iterations")
	case u.Iterations > auth.MaxSCRAMIterations:
		return metadata.SCRAMCredential{}, errmsg.With(fmt.Errorf("%w: %d iterations, more than %d", ErrUnacceptableCredential, u.Iterations, auth.MaxSCRAMIterations), "Too many iterations")
	}
	cred, err := auth.SaltedSCRAMCredential(u.Mechanism, u.Salt, u.SaltedPassword, u.Iterations)
	if err != nil {
		return metadata.SCRAMCredential{}, err
	}
	return metadata.SCRAMCredential{User: u.User, Mechanism: u.Mechanism, Salt: cred.Salt,
		StoredKey: cred.StoredKey, ServerKey: cred.ServerKey, Iterations: cred.Iterations}, nil
}
