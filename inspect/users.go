package inspect

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// ErrUserNotFound reports that a user has no SCRAM credential (of the
// mechanism asked for).
var ErrUserNotFound = errors.New("user has no SCRAM credential")

// SCRAMMechanisms are the SCRAM mechanisms a user's password may be
// salted for, by name.
var SCRAMMechanisms = []kadm.ScramMechanism{kadm.ScramSha256, kadm.ScramSha512}

// ParseSCRAMMechanism returns the SCRAM mechanism named s, in any case:
// SCRAM-SHA-256 or SCRAM-SHA-512.
func ParseSCRAMMechanism(s string) (kadm.ScramMechanism, error) {
	for _, m := range SCRAMMechanisms {
		if strings.EqualFold(s, m.String()) {
			return m, nil
		}
	}
	return 0, fmt.Errorf("unknown SCRAM mechanism %q (want SCRAM-SHA-256 or SCRAM-SHA-512)", s)
}

// UserCredential is one of a user's SCRAM credentials: its mechanism and
// iteration count (never its salt or keys, which no broker answers).
type UserCredential struct {
	Mechanism  string `json:"mechanism"`
	Iterations int32  `json:"iterations"`
}

// User is a user with SCRAM credentials; Error is set, and Credentials
// empty, when the user could not be described.
type User struct {
	User        string           `json:"user"`
	Credentials []UserCredential `json:"credentials"`
	Error       string           `json:"error,omitempty"`
}

// ListUsers describes the users named, or every user with a SCRAM
// credential when none is, sorted by name. A named user without one has
// its Error set.
func ListUsers(ctx context.Context, adm *kadm.Client, names ...string) ([]User, error) {
	described, err := adm.DescribeUserSCRAMs(ctx, names...)
	if err != nil {
		return nil, fmt.Errorf("describe users: %w", err)
	}
	users := make([]User, 0, len(described))
	for _, d := range described.Sorted() {
		u := User{User: d.User, Credentials: []UserCredential{}}
		if errors.Is(d.Err, kerr.ResourceNotFound) {
			u.Error = ErrUserNotFound.Error()
		} else if d.Err != nil {
			u.Error = ErrorText(d.Err, d.ErrMessage)
		}
		for _, c := range d.CredInfos {
			u.Credentials = append(u.Credentials, UserCredential{Mechanism: c.Mechanism.String(), Iterations: c.Iterations})
		}
		slices.SortFunc(u.Credentials, func(a, b UserCredential) int { return strings.Compare(a.Mechanism, b.Mechanism) })
		users = append(users, u)
	}
	return users, nil
}

// SetUserPassword sets user's password for mechanism, salted here with
// iterations (4096 to 16384) and a random salt: the cluster receives the
// salted password, never the password. A credential of the same
// mechanism is replaced.
func SetUserPassword(ctx context.Context, adm *kadm.Client, user, password string, mechanism kadm.ScramMechanism, iterations int32) error {
	if user == "" {
		return errors.New("the user name is empty")
	}
	if password == "" {
		return errors.New("the password is empty")
	}
	res, err := adm.AlterUserSCRAMs(ctx, nil, []kadm.UpsertSCRAM{{User: user, Mechanism: mechanism, Iterations: iterations, Password: password}})
	return alterResult(user, res, err)
}

// DeleteUser deletes user's SCRAM credentials of the mechanisms given, or
// all the user has when none is, and returns the mechanisms deleted.
func DeleteUser(ctx context.Context, adm *kadm.Client, user string, mechanisms ...kadm.ScramMechanism) ([]string, error) {
	if len(mechanisms) == 0 {
		users, err := ListUsers(ctx, adm, user)
		if err != nil {
			return nil, err
		}
		for _, u := range users {
			if u.Error != "" {
				return nil, fmt.Errorf("user %q: %s", user, u.Error)
			}
			for _, c := range u.Credentials {
				m, _ := ParseSCRAMMechanism(c.Mechanism)
				mechanisms = append(mechanisms, m)
			}
		}
		if len(mechanisms) == 0 {
			return nil, fmt.Errorf("user %q: %w", user, ErrUserNotFound)
		}
	}
	// One alteration per request: Kafka refuses two of one user in one.
	var deleted []string
	for _, m := range mechanisms {
		res, err := adm.AlterUserSCRAMs(ctx, []kadm.DeleteSCRAM{{User: user, Mechanism: m}}, nil)
		if err := alterResult(user, res, err); err != nil {
			if errors.Is(err, kerr.ResourceNotFound) {
				err = fmt.Errorf("user %q: %s: %w", user, m, ErrUserNotFound)
			}
			return deleted, err
		}
		deleted = append(deleted, m.String())
	}
	return deleted, nil
}

// alterResult is the error of an AlterUserSCRAMs for user, if any.
func alterResult(user string, res kadm.AlteredUserSCRAMs, err error) error {
	if err != nil {
		return fmt.Errorf("alter user %q: %w", user, err)
	}
	r, ok := res[user]
	if !ok {
		return fmt.Errorf("alter user %q: %w", user, ErrNoResponse)
	}
	if r.Err != nil {
		return fmt.Errorf("user %q: %s: %w", user, ErrorText(r.Err, r.ErrMessage), r.Err)
	}
	return nil
}
