package supervisor

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// How a command picks the running cluster it acts on (Pick), from the
// registrations in the state directory:
//
//  1. --data-dir names it: the one running on that directory, wherever it
//     runs (another network namespace too).
//  2. Else only clusters in the command's network namespace count: one in
//     another namespace is not what the command reaches at 127.0.0.1.
//  3. With brokers (-b or $KLOG_BROKERS), those serving one of them; and
//     when the brokers answer, only those of the cluster id they report.
//  4. Without, the only one running.
//
// None is a *NotFoundError (ErrNotFound); more than one is an
// *AmbiguousError listing them.

// Target is what a command was pointed at.
type Target struct {
	// DataDir is the cluster's data directory (--data-dir); it names
	// the cluster wherever it runs.
	DataDir string
	// Brokers are the addresses given with -b or $KLOG_BROKERS; nil when
	// neither was given.
	Brokers []string
	// ClusterID asks the brokers for their cluster's id; nil, or an
	// error, leaves the clusters serving the brokers' addresses in the
	// command's network namespace.
	ClusterID func(context.Context) (string, error)
}

// ErrAmbiguous reports that more than one running cluster fits what a
// command was pointed at.
var ErrAmbiguous = errors.New("more than one klog up fits")

// AmbiguousError is ErrAmbiguous with the clusters that fit.
type AmbiguousError struct {
	Candidates []Registration
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("%d klog up are running that fit (%s); say which with --data-dir", len(e.Candidates), describe(e.Candidates))
}

func (e *AmbiguousError) Unwrap() error { return ErrAmbiguous }

// NotFoundError is ErrNotFound with what was looked for and the clusters
// running in other network namespaces, which were not.
type NotFoundError struct {
	What      string
	Elsewhere []Registration
}

func (e *NotFoundError) Error() string {
	what := e.What
	if len(e.Elsewhere) > 0 {
		what += fmt.Sprintf(" in this network namespace (in others: %s; name one with --data-dir)", describe(e.Elsewhere))
	}
	return fmt.Sprintf("%v: %s", ErrNotFound, what)
}

func (e *NotFoundError) Unwrap() error { return ErrNotFound }

// Describe is r in a few words, for messages: its data directory, cluster
// id, pid and brokers.
func (r Registration) Describe() string {
	dir, id := r.DataDir, r.ClusterID
	if dir == "" {
		dir = "memory"
	}
	if id == "" {
		id = "unknown"
	}
	return fmt.Sprintf("data dir %s, cluster id %s, pid %d, brokers %s", dir, id, r.PID, strings.Join(r.Brokers, ","))
}

// Serves reports whether r's cluster serves one of the addresses
// (host:port as klog up printed them).
func (r Registration) Serves(addrs []string) bool {
	return slices.ContainsFunc(addrs, func(a string) bool { return slices.Contains(r.Brokers, a) })
}

func describe(regs []Registration) string {
	var out []string
	for _, r := range regs {
		out = append(out, r.Describe())
	}
	return strings.Join(out, "; ")
}

// Pick returns the running cluster t points at, from the registrations in
// stateDir (those of dead processes are removed). It never returns one
// that t does not name or reach.
func Pick(ctx context.Context, stateDir string, t Target) (Registration, error) {
	regs, err := Running(stateDir, nil)
	if err != nil {
		return Registration{}, err
	}
	if t.DataDir != "" {
		abs, err := filepath.Abs(t.DataDir)
		if err != nil {
			return Registration{}, err
		}
		regs = slices.DeleteFunc(regs, func(r Registration) bool { return r.DataDir != abs })
		return only(regs, nil, "no klog up is running on "+abs)
	}
	self := NetNamespace()
	var here, elsewhere []Registration
	for _, r := range regs {
		if r.NetNS == "" || self == "" || r.NetNS == self {
			here = append(here, r)
		} else {
			elsewhere = append(elsewhere, r)
		}
	}
	what := "no klog up is running"
	if t.Brokers != nil {
		here = slices.DeleteFunc(here, func(r Registration) bool { return !r.Serves(t.Brokers) })
		what += " with brokers " + strings.Join(t.Brokers, ",")
		if len(here) > 0 && t.ClusterID != nil {
			if id, err := t.ClusterID(ctx); err == nil && id != "" {
				here = sameCluster(here, id)
				what = fmt.Sprintf("the brokers %s are cluster %s, which no running klog up registered here is", strings.Join(t.Brokers, ","), id)
			}
		}
	}
	return only(here, elsewhere, what)
}

// sameCluster keeps the registrations of cluster id, and those that do not
// know their id yet only when none knows it.
func sameCluster(regs []Registration, id string) []Registration {
	var exact, unknown []Registration
	for _, r := range regs {
		switch r.ClusterID {
		case id:
			exact = append(exact, r)
		case "":
			unknown = append(unknown, r)
		}
	}
	if len(exact) > 0 {
		return exact
	}
	return unknown
}

// only returns the one registration of regs: none is a *NotFoundError
// (what says what was looked for; elsewhere are the clusters of other
// network namespaces), more an *AmbiguousError.
func only(regs, elsewhere []Registration, what string) (Registration, error) {
	switch len(regs) {
	case 1:
		return regs[0], nil
	case 0:
		return Registration{}, &NotFoundError{What: what, Elsewhere: elsewhere}
	}
	return Registration{}, &AmbiguousError{Candidates: regs}
}
