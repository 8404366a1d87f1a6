package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/inspect"
)

// userJSONVersion is the "version" field of every user command's JSON
// output.
const userJSONVersion = 1

// userListJSON is the JSON output of user list, and of user create and
// delete (the credentials set or deleted).
type userListJSON struct {
	Version int            `json:"version"`
	Users   []inspect.User `json:"users"`
}

func newUserCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "user",
		Aliases: []string{"users"},
		Short:   "Create, list and delete users' SCRAM credentials",
		Long: `Create, list and delete the SCRAM credentials (SCRAM-SHA-256, SCRAM-SHA-512)
clients log in with over SASL, kept in the cluster's metadata
(AlterUserScramCredentials, DescribeUserScramCredentials): klog's or any
Kafka's. The password is salted by klog; the cluster never receives it.`,
	}
	cmd.AddCommand(newUserCreateCmd(g), newUserListCmd(g), newUserDeleteCmd(g))
	return cmd
}

// userCreateOptions are the flags of user create.
type userCreateOptions struct {
	password, passwordFile string
	mechanism              string
	iterations             int32
}

func newUserCreateCmd(g *globals) *cobra.Command {
	var o userCreateOptions
	cmd := &cobra.Command{
		Use:   "create USER [--password P | --password-file F] [--mechanism M] [--iterations N]",
		Short: "Set a user's SCRAM password (creating the user)",
		Long: `Set a user's password for one SCRAM mechanism, creating the user if it has
no credential yet, or replacing its password of that mechanism.

The password is --password, the first line of --password-file ("-" reads
stdin), or, in a terminal without either, asked for without echo. klog
salts it with a random salt and --iterations (4096 to 16384) rounds, and
sends the cluster the salted password only.`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUserCreate(cmd.Context(), g, args[0], o, cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&o.password, "password", "", "the password (visible to other local users in the process list; prefer --password-file or the prompt)")
	cmd.Flags().StringVar(&o.passwordFile, "password-file", "", `read the password from the first line of this file ("-" for stdin)`)
	cmd.Flags().StringVar(&o.mechanism, "mechanism", "SCRAM-SHA-512", "SCRAM-SHA-256 or SCRAM-SHA-512")
	cmd.Flags().Int32Var(&o.iterations, "iterations", 8192, "salting rounds, 4096 to 16384")
	return cmd
}

func runUserCreate(ctx context.Context, g *globals, user string, o userCreateOptions, in io.Reader, out, diag io.Writer) error {
	mech, err := inspect.ParseSCRAMMechanism(o.mechanism)
	if err != nil {
		return usagef("--mechanism: %v", err)
	}
	if o.iterations < 4096 || o.iterations > 16384 {
		return usagef("--iterations %d: want 4096 to 16384", o.iterations)
	}
	password, err := readPassword(user, o, in, diag)
	if err != nil {
		return err
	}
	return withAdmin(g, func(adm *kadm.Client) error {
		if err := inspect.SetUserPassword(ctx, adm, user, password, mech, o.iterations); err != nil {
			return err
		}
		cred := inspect.UserCredential{Mechanism: mech.String(), Iterations: o.iterations}
		return writeUsers(g, out, []inspect.User{{User: user, Credentials: []inspect.UserCredential{cred}}}, "SET")
	})
}

// readPassword is the password of user create: --password, the first line
// of --password-file, or asked for at the terminal without echo.
func readPassword(user string, o userCreateOptions, in io.Reader, diag io.Writer) (string, error) {
	var password string
	switch {
	case o.password != "" && o.passwordFile != "":
		return "", usagef("--password and --password-file: give one")
	case o.password != "":
		password = o.password
	case o.passwordFile != "":
		r := in
		if o.passwordFile != "-" {
			f, err := os.Open(o.passwordFile)
			if err != nil {
				return "", fmt.Errorf("--password-file: %w", err)
			}
			defer f.Close()
			r = f
		}
		line, err := bufio.NewReader(io.LimitReader(r, 64<<10)).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return "", fmt.Errorf("--password-file: %w", err)
		}
		password = strings.TrimRight(line, "\r\n")
	case isTerminal(in):
		fmt.Fprintf(diag, "Password for %s: ", user)
		b, err := term.ReadPassword(in.(*os.File).Fd())
		fmt.Fprintln(diag)
		if err != nil {
			return "", fmt.Errorf("read the password: %w", err)
		}
		password = string(b)
	default:
		return "", usagef("no password: pass --password or --password-file (stdin is not a terminal to ask at)")
	}
	if password == "" {
		return "", usagef("the password is empty")
	}
	return password, nil
}

func newUserListCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use:     "list [USER...]",
		Aliases: []string{"ls", "describe"},
		Short:   "List users with their SCRAM mechanisms and iteration counts",
		Long: `List the users that have SCRAM credentials, one row per mechanism with its
iteration count, or only the users named (a named user without a
credential is an error). Salts and keys are never shown: no broker answers
them.`,
		ValidArgsFunction: completeUsers(g, 0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUserList(cmd.Context(), g, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
}

func runUserList(ctx context.Context, g *globals, names []string, out, diag io.Writer) error {
	return withAdmin(g, func(adm *kadm.Client) error {
		users, err := inspect.ListUsers(ctx, adm, names...)
		if err != nil {
			return err
		}
		failed := failures{diag: diag}
		for _, u := range users {
			failed.add(u.Error, "user %q", u.User)
		}
		if err := writeUsers(g, out, users, ""); err != nil {
			return err
		}
		return failed.err("%s could not be listed", plural(failed.n, "user"))
	})
}

// writeUsers prints users, one row per credential, with status (when not
// "") in a last column.
func writeUsers(g *globals, out io.Writer, users []inspect.User, status string) error {
	return writeOutput(g, out, userListJSON{Version: userJSONVersion, Users: users}, func(t *table) {
		head := "USER\tMECHANISM\tITERATIONS"
		if status != "" {
			head += "\tSTATUS"
		}
		t.row("%s\n", head)
		for _, u := range users {
			for _, c := range u.Credentials {
				t.row("%s\t%s\t%s\n", u.User, c.Mechanism, strings.TrimSuffix(fmt.Sprintf("%d\t%s", c.Iterations, status), "\t"))
			}
			if u.Error != "" {
				t.row("%s\t-\t-\tERROR: %s\n", u.User, u.Error)
			}
		}
	})
}

func newUserDeleteCmd(g *globals) *cobra.Command {
	var (
		c         consent
		mechanism string
	)
	cmd := &cobra.Command{
		Use:   "delete USER [--mechanism M] [--yes]",
		Short: "Delete a user's SCRAM credentials",
		Long: `Delete a user's SCRAM credentials: all of them, or the one of --mechanism.
Clients logged in stay connected; their next login fails.`,
		Args:              usageArgs(cobra.ExactArgs(1)),
		ValidArgsFunction: completeUsers(g, 1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runUserDelete(cmd.Context(), g, args[0], mechanism, c, cmd.OutOrStdout())
		},
	}
	cmd.Flags().StringVar(&mechanism, "mechanism", "", "delete only this mechanism's credential (SCRAM-SHA-256 or SCRAM-SHA-512)")
	destructive(cmd, &c, "delete", "deleted")
	return cmd
}

func runUserDelete(ctx context.Context, g *globals, user, mechanism string, c consent, out io.Writer) error {
	var mechs []kadm.ScramMechanism
	what := fmt.Sprintf("user %q's SCRAM credentials", user)
	if mechanism != "" {
		m, err := inspect.ParseSCRAMMechanism(mechanism)
		if err != nil {
			return usagef("--mechanism: %v", err)
		}
		mechs = append(mechs, m)
		what = fmt.Sprintf("user %q's %s credential", user, m)
	}
	if err := c.ask(fmt.Sprintf("Delete %s?", what), "deleted", "delete "+what); err != nil {
		return err
	}
	return withAdmin(g, func(adm *kadm.Client) error {
		deleted, err := inspect.DeleteUser(ctx, adm, user, mechs...)
		u := inspect.User{User: user, Credentials: []inspect.UserCredential{}}
		for _, m := range deleted {
			u.Credentials = append(u.Credentials, inspect.UserCredential{Mechanism: m})
		}
		if len(deleted) > 0 {
			if werr := writeOutput(g, out, userListJSON{Version: userJSONVersion, Users: []inspect.User{u}}, func(t *table) {
				t.row("USER\tMECHANISM\tSTATUS\n")
				for _, m := range deleted {
					t.row("%s\t%s\tDELETED\n", user, m)
				}
			}); werr != nil {
				return werr
			}
		}
		return err
	})
}

// completeUsers completes the names of users with SCRAM credentials.
func completeUsers(g *globals, maxArgs int) cobra.CompletionFunc {
	return completeNames(g, maxArgs, func(ctx context.Context, adm *kadm.Client) []string {
		users, _ := inspect.ListUsers(ctx, adm)
		names := make([]string, 0, len(users))
		for _, u := range users {
			names = append(names, u.User)
		}
		return names
	})
}
