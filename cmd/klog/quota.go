package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/inspect"
)

// quotaJSONVersion is the version of klog quota's JSON.
const quotaJSONVersion = 1

// quotaListJSON is klog quota list's JSON.
type quotaListJSON struct {
	Version int                   `json:"version"`
	Quotas  []inspect.ClientQuota `json:"quotas"`
}

// quotaChangeJSON is klog quota set's and delete's JSON.
type quotaChangeJSON struct {
	Version int                 `json:"version"`
	Entity  inspect.QuotaEntity `json:"entity"`
	Set     map[string]float64  `json:"set,omitempty"`
	Removed []string            `json:"removed,omitempty"`
}

// quotaEntityFlags are the flags that name an entity.
type quotaEntityFlags struct {
	user, clientID               string
	defaultUser, defaultClientID bool
}

func (f *quotaEntityFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.user, "user", "", "the user (a principal's name: alice for User:alice)")
	fl.BoolVar(&f.defaultUser, "default-user", false, "the default of every user")
	fl.StringVar(&f.clientID, "client-id", "", "the client id")
	fl.BoolVar(&f.defaultClientID, "default-client-id", false, "the default of every client id")
}

// entity is the entity the flags name; required says one must be named.
func (f *quotaEntityFlags) entity(cmd *cobra.Command, required bool) (inspect.QuotaEntity, error) {
	var e inspect.QuotaEntity
	for _, k := range []struct {
		typ, name string
		isDefault bool
	}{{"user", f.user, f.defaultUser}, {"client-id", f.clientID, f.defaultClientID}} {
		named := cmd.Flags().Changed(k.typ)
		switch {
		case named && k.isDefault:
			return nil, usagef("--%s and --default-%s are mutually exclusive", k.typ, k.typ)
		case k.isDefault:
			e = append(e, inspect.QuotaEntityPart{Type: k.typ, Default: true})
		case named && k.name == "":
			return nil, usagef("--%s needs a name (--default-%s for the default)", k.typ, k.typ)
		case named:
			e = append(e, inspect.QuotaEntityPart{Type: k.typ, Name: k.name})
		}
	}
	if required && len(e) == 0 {
		return nil, usagef("name whom the quota is for: --user, --default-user, --client-id or --default-client-id")
	}
	return e, nil
}

const quotaKeysHelp = `Quota keys: producer_byte_rate and consumer_byte_rate (bytes a second),
request_percentage (percent of one request handler's time),
controller_mutation_rate (partitions created or deleted a second).
A client gets the quota of the most specific entity that sets one:
user and client id, user and default client id, user, default user and
client id, default user and default client id, default user, client id,
default client id.`

func newQuotaCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "quota",
		Short: "Set, list and delete client quotas",
		Long:  "Set, list and delete client quotas (Kafka's kafka-client-quotas).\n\n" + quotaKeysHelp,
	}
	cmd.AddCommand(newQuotaSetCmd(g), newQuotaListCmd(g), newQuotaDeleteCmd(g))
	return cmd
}

func newQuotaSetCmd(g *globals) *cobra.Command {
	var f quotaEntityFlags
	cmd := &cobra.Command{
		Use:   "set (--user U | --default-user) (--client-id C | --default-client-id) KEY=VALUE...",
		Short: "Set client quotas of a user, a client id or both",
		Long:  "Set client quotas of a user, a client id or both; other keys of the entity stay as they are.\n\n" + quotaKeysHelp,
		Example: `  klog quota set --user alice --client-id app producer_byte_rate=1048576
  klog quota set --default-client-id consumer_byte_rate=2097152 request_percentage=50`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := f.entity(cmd, true)
			if err != nil {
				return err
			}
			set, err := parseQuotaValues(args)
			if err != nil {
				return err
			}
			return withAdmin(g, func(adm *kadm.Client) error {
				if err := inspect.AlterClientQuotas(cmd.Context(), adm, e, set, nil); err != nil {
					return err
				}
				return writeQuotaChange(g, cmd.OutOrStdout(), quotaChangeJSON{Version: quotaJSONVersion, Entity: e, Set: set})
			})
		},
	}
	f.register(cmd)
	return cmd
}

// parseQuotaValues parses KEY=VALUE arguments.
func parseQuotaValues(args []string) (map[string]float64, error) {
	set := make(map[string]float64, len(args))
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" {
			return nil, usagef("%q is not KEY=VALUE", a)
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return nil, usagef("%s: %q is not a number", k, v)
		}
		if _, dup := set[k]; dup {
			return nil, usagef("%s is given twice", k)
		}
		set[k] = n
	}
	return set, nil
}

func writeQuotaChange(g *globals, out io.Writer, doc quotaChangeJSON) error {
	return writeOutput(g, out, doc, func(t *table) {
		for _, k := range slices.Sorted(maps.Keys(doc.Set)) {
			t.row("%s\tset %s=%s\n", doc.Entity, k, inspect.QuotaValue(doc.Set[k]))
		}
		for _, k := range doc.Removed {
			t.row("%s\tremoved %s\n", doc.Entity, k)
		}
	})
}

func newQuotaListCmd(g *globals) *cobra.Command {
	var f quotaEntityFlags
	var strict bool
	cmd := &cobra.Command{
		Use:   "list [--user U | --default-user] [--client-id C | --default-client-id] [--strict]",
		Short: "List client quotas",
		Long: `List client quotas: all of them, or those of the entities with the parts
named (--user alice lists alice's and those of alice with a client id);
--strict lists only the entity named exactly.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			e, err := f.entity(cmd, false)
			if err != nil {
				return err
			}
			return withAdmin(g, func(adm *kadm.Client) error {
				qs, err := inspect.ListClientQuotas(cmd.Context(), adm, e, strict)
				if err != nil {
					return err
				}
				return writeOutput(g, cmd.OutOrStdout(), quotaListJSON{Version: quotaJSONVersion, Quotas: qs}, func(t *table) {
					t.row("ENTITY\tKEY\tVALUE\n")
					for _, q := range qs {
						for _, k := range slices.Sorted(maps.Keys(q.Values)) {
							t.row("%s\t%s\t%s\n", q.Entity, k, inspect.QuotaValue(q.Values[k]))
						}
					}
				})
			})
		},
	}
	f.register(cmd)
	cmd.Flags().BoolVar(&strict, "strict", false, "only the entity named exactly, not those it is part of")
	return cmd
}

func newQuotaDeleteCmd(g *globals) *cobra.Command {
	var f quotaEntityFlags
	var c consent
	cmd := &cobra.Command{
		Use:   "delete (--user U | --default-user) (--client-id C | --default-client-id) [KEY...] [--yes]",
		Short: "Delete client quotas of a user, a client id or both",
		Long: `Delete client quotas of a user, a client id or both: the keys given, or
every key of that entity when none is given.`,
		Example: `  klog quota delete --user alice --client-id app producer_byte_rate --yes`,
		RunE: func(cmd *cobra.Command, args []string) error {
			e, err := f.entity(cmd, true)
			if err != nil {
				return err
			}
			return runQuotaDelete(cmd.Context(), g, e, args, c, cmd.OutOrStdout())
		},
	}
	f.register(cmd)
	destructive(cmd, &c, "delete", "deleted")
	return cmd
}

func runQuotaDelete(ctx context.Context, g *globals, e inspect.QuotaEntity, keys []string, c consent, out io.Writer) error {
	return withAdmin(g, func(adm *kadm.Client) error {
		if len(keys) == 0 {
			qs, err := inspect.ListClientQuotas(ctx, adm, e, true)
			if err != nil {
				return err
			}
			for _, q := range qs {
				keys = slices.AppendSeq(keys, maps.Keys(q.Values))
			}
			if len(keys) == 0 {
				return fmt.Errorf("%s has no client quotas: %w", e, ErrItemsFailed)
			}
			slices.Sort(keys)
		}
		what := fmt.Sprintf("%s of %s", strings.Join(keys, ", "), e)
		if err := c.ask("Delete the client quotas "+what+"?", "deleted", "delete "+what); err != nil {
			return err
		}
		if err := inspect.AlterClientQuotas(ctx, adm, e, nil, keys); err != nil {
			return err
		}
		return writeQuotaChange(g, out, quotaChangeJSON{Version: quotaJSONVersion, Entity: e, Removed: keys})
	})
}
