package tui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/klogdev/klog/inspect"
)

// The security screens: :users (the SCRAM users, their mechanisms and
// iterations; never a secret), :acls (every ACL, grouped by principal)
// and :quotas (the client quotas), read with the calls klog user list,
// klog acl list and klog quota list make. Each is a list refreshed like
// the others, dimmed and marked stale when a refresh fails.

// listScreen is a flat screen of one table, its rows made from the
// answer of one fetch.
type listScreen struct {
	flat
	cmd, label string
	rows       table
	read       fetchFunc
	// toRows makes the table's rows of the answer; note is a line shown
	// above them ("" for none).
	toRows func(v any) (rows []row, note string)
	// refused says an error is the cluster's answer that the screen has
	// nothing to show, and says why (an authorizer off); "" otherwise.
	refused func(err error) string
	ready   bool
	note    string
	// empty is what the screen says without rows, unless refusedNow:
	// the last answer was refused, its note says why.
	empty      string
	refusedNow bool
}

func (l *listScreen) name() string  { return l.cmd }
func (l *listScreen) title() string { return l.label }
func (l *listScreen) list() *table  { return &l.rows }

func (l *listScreen) fetch() (string, fetchFunc) { return "", l.read }

func (l *listScreen) loaded(_ string, v any, err error, _ time.Time) error {
	if err != nil && l.refused != nil {
		if why := l.refused(err); why != "" {
			l.rows.setRows(nil)
			l.note, l.ready, l.refusedNow = why, true, true
			return nil
		}
	}
	l.refusedNow = false
	if err != nil {
		return err
	}
	rows, note := l.toRows(v)
	l.rows.setRows(rows)
	l.note, l.ready = note, true
	return nil
}

func (l *listScreen) view(s Styles, width, height int) string {
	if !l.ready {
		return s.Dim.Render("listing " + l.label + "…")
	}
	var b strings.Builder
	if l.note != "" {
		b.WriteString(l.note + "\n\n")
		height -= 2
	}
	if len(l.rows.rows) == 0 {
		if !l.refusedNow {
			b.WriteString(s.Dim.Render(l.empty))
		}
		return b.String()
	}
	b.WriteString(l.rows.view(s, width, height))
	return b.String()
}

func newUsersScreen() *listScreen {
	return &listScreen{
		cmd: "users", label: "users", empty: "no user has a SCRAM credential (klog user create NAME)",
		rows: table{cols: []column{{title: "USER"}, {title: "MECHANISM"}, {title: "ITERATIONS", right: true}, {title: "ERROR"}}},
		read: func(ctx context.Context, src Source) (any, error) { return src.Users(ctx) },
		toRows: func(v any) ([]row, string) {
			var rows []row
			for _, u := range v.([]inspect.User) {
				if len(u.Credentials) == 0 {
					rows = append(rows, row{key: u.User, cells: []string{u.User, "-", "-", u.Error}, bad: []bool{3: u.Error != ""}})
				}
				for _, c := range u.Credentials {
					rows = append(rows, row{key: u.User + "/" + c.Mechanism, cells: []string{
						u.User, c.Mechanism, strconv.Itoa(int(c.Iterations)), u.Error,
					}, bad: []bool{3: u.Error != ""}})
				}
			}
			return rows, ""
		},
	}
}

func newACLsScreen() *listScreen {
	return &listScreen{
		cmd: "acls", label: "ACLs", empty: "no ACLs (klog acl create)",
		rows: table{cols: []column{
			{title: "PRINCIPAL"}, {title: "PERMISSION"}, {title: "OPERATION"}, {title: "RESOURCE"}, {title: "PATTERN"}, {title: "NAME"}, {title: "HOST"},
		}},
		read: func(ctx context.Context, src Source) (any, error) { return src.ACLs(ctx) },
		toRows: func(v any) ([]row, string) {
			acls := slices.Clone(v.([]inspect.ACL))
			// By principal, then resource as listed.
			slices.SortStableFunc(acls, func(a, b inspect.ACL) int { return strings.Compare(a.Principal, b.Principal) })
			rows := make([]row, 0, len(acls))
			principals := 0
			for i, a := range acls {
				if i == 0 || a.Principal != acls[i-1].Principal {
					principals++
				}
				rows = append(rows, row{key: strings.Join([]string{a.Principal, a.ResourceType, a.PatternType, a.ResourceName, a.Host, a.Operation, a.Permission}, "\x00"),
					cells: []string{a.Principal, a.Permission, a.Operation, a.ResourceType, a.PatternType, a.ResourceName, a.Host},
					bad:   []bool{1: a.Permission == "DENY"}})
			}
			return rows, fmt.Sprintf("%d ACLs of %d principals; klog acl explain says which one decides a request", len(acls), principals)
		},
		refused: func(err error) string {
			if strings.Contains(err.Error(), kerr.SecurityDisabled.Message) {
				return "no authorizer (authorizer.class.name): every request is allowed, and there are no ACLs"
			}
			return ""
		},
	}
}

func newQuotasScreen() *listScreen {
	return &listScreen{
		cmd: "quotas", label: "client quotas", empty: "no client quotas (klog quota set)",
		rows: table{cols: []column{{title: "ENTITY"}, {title: "QUOTA"}, {title: "VALUE", right: true}}},
		read: func(ctx context.Context, src Source) (any, error) { return src.Quotas(ctx) },
		toRows: func(v any) ([]row, string) {
			var rows []row
			for _, q := range v.([]inspect.ClientQuota) {
				entity := q.Entity.String()
				keys := make([]string, 0, len(q.Values))
				for k := range q.Values {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				for _, k := range keys {
					rows = append(rows, row{key: entity + "/" + k, cells: []string{entity, k, inspect.QuotaValue(q.Values[k])}})
				}
			}
			return rows, ""
		},
	}
}
