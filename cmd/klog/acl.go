package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/twmb/franz-go/pkg/kadm"

	"github.com/klogdev/klog/inspect"
	"github.com/klogdev/klog/nodeapi"
)

// aclJSONVersion is the version of klog acl's JSON outputs.
const aclJSONVersion = 1

// aclsJSON is the JSON output of acl create, list and delete.
type aclsJSON struct {
	Version int       `json:"version"`
	ACLs    []aclJSON `json:"acls"`
}

// aclJSON is one ACL and, for create, its error.
type aclJSON struct {
	inspect.ACL
	Error string `json:"error,omitempty"`
}

// explainTimeout bounds klog acl explain's call to a node.
const explainTimeout = 10 * time.Second

func newACLCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "acl",
		Short: "Create, list, delete and explain ACLs (Kafka's StandardAuthorizer)",
		Long: `ACLs allow or deny a principal (User:alice, User:* for everyone) an
operation (READ, WRITE, DESCRIBE, ALL, ...) on resources: topics, groups,
transactional ids and the cluster, by literal name ('*' for every one) or
by prefix (--prefixed), from a host ('*' by default, an address or a CIDR
range). They take effect on a cluster whose nodes run with the authorizer:
klog up -X authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
-X super.users=User:admin. Deny beats allow; a READ, WRITE, DELETE or ALTER
allowed lets the principal DESCRIBE too; a resource no ACL names is denied
to all but super users unless allow.everyone.if.no.acl.found=true.`,
	}
	cmd.AddCommand(newACLCreateCmd(g), newACLListCmd(g), newACLDeleteCmd(g), newACLExplainCmd(g))
	return cmd
}

// aclFlags registers the flags that say which ACLs: principals, hosts,
// operations and resources.
func aclFlags(cmd *cobra.Command, s *inspect.ACLSpec) {
	f := cmd.Flags()
	f.StringSliceVar(&s.Allow, "allow", nil, "principal to allow (User:NAME, User:* for everyone); repeatable")
	f.StringSliceVar(&s.Deny, "deny", nil, "principal to deny; repeatable")
	f.StringSliceVar(&s.Hosts, "host", nil, "host the principal connects from: an address or a CIDR range (default * for create, any for list and delete)")
	f.StringSliceVar(&s.Operations, "operation", nil, "operation: ALL, READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE; repeatable")
	f.StringSliceVar(&s.Topics, "topic", nil, "topic name, '*' for every topic, a prefix with --prefixed; repeatable")
	f.StringSliceVar(&s.Groups, "group", nil, "group name; repeatable")
	f.StringSliceVar(&s.TransactionalIDs, "transactional-id", nil, "transactional id; repeatable")
	f.BoolVar(&s.Cluster, "cluster", false, "the cluster (CREATE topics, IDEMPOTENT_WRITE, ALTER, CLUSTER_ACTION, ...)")
	f.BoolVar(&s.Prefixed, "prefixed", false, "resource names are prefixes")
}

func newACLCreateCmd(g *globals) *cobra.Command {
	var spec inspect.ACLSpec
	cmd := &cobra.Command{
		Use:   "create (--allow|--deny) PRINCIPAL --operation OP (--topic|--group|--transactional-id NAME|--cluster)",
		Short: "Create ACLs: every principal, host, operation and resource given combined",
		Example: `  klog acl create --allow User:alice --operation WRITE --topic orders
  klog acl create --allow User:alice --operation READ --topic orders --prefixed --group billing
  klog acl create --deny User:* --operation ALL --topic secrets --host 10.0.0.0/8`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runACLCreate(cmd.Context(), g, spec, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	aclFlags(cmd, &spec)
	return cmd
}

func runACLCreate(ctx context.Context, g *globals, spec inspect.ACLSpec, out, diag io.Writer) error {
	return withAdmin(g, func(adm *kadm.Client) error {
		acls, errs, err := inspect.CreateACLs(ctx, adm, spec)
		if err != nil {
			return aclError(err)
		}
		doc := aclsJSON{Version: aclJSONVersion, ACLs: []aclJSON{}}
		failed := failures{diag: diag}
		for i, a := range acls {
			doc.ACLs = append(doc.ACLs, aclJSON{ACL: a, Error: errs[i]})
			failed.add(errs[i], "ACL %s", aclString(a))
		}
		if err := writeACLs(g, out, doc); err != nil {
			return err
		}
		return failed.err("%d of %d ACLs not created", failed.n, len(acls))
	})
}

func newACLListCmd(g *globals) *cobra.Command {
	var spec inspect.ACLSpec
	cmd := &cobra.Command{
		Use:   "list [--allow|--deny PRINCIPAL] [--topic|--group|--transactional-id NAME|--cluster] [--operation OP]",
		Short: "List ACLs, all of them or those the flags select",
		Long: `List ACLs, all of them or those the flags select: a principal, a host, an
operation, resources by name. Literal and prefixed ACLs are listed alike
unless --prefixed is given.`,
		Example: `  klog acl list
  klog acl list --allow User:alice --format json
  klog acl list --topic orders`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withAdmin(g, func(adm *kadm.Client) error {
				acls, err := inspect.ListACLs(cmd.Context(), adm, spec)
				if err != nil {
					return aclError(err)
				}
				return writeACLs(g, cmd.OutOrStdout(), aclsOf(acls))
			})
		},
	}
	aclFlags(cmd, &spec)
	return cmd
}

func newACLDeleteCmd(g *globals) *cobra.Command {
	var spec inspect.ACLSpec
	var c consent
	cmd := &cobra.Command{
		Use:   "delete (--topic|--group|--transactional-id NAME|--cluster) [--allow|--deny PRINCIPAL] [--operation OP] [--yes]",
		Short: "Delete the ACLs the flags select",
		Long: `Delete the ACLs the flags select: those of the resources named (literal
names unless --prefixed, as kafka-acls --remove), narrowed by principal,
host and operation when given. It prints the ACLs deleted.`,
		Example: `  klog acl delete --topic orders --allow User:alice --yes
  klog acl delete --topic orders --prefixed --yes`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runACLDelete(cmd.Context(), g, spec, c, cmd.OutOrStdout())
		},
	}
	aclFlags(cmd, &spec)
	destructive(cmd, &c, "delete", "deleted")
	return cmd
}

func runACLDelete(ctx context.Context, g *globals, spec inspect.ACLSpec, c consent, out io.Writer) error {
	if !spec.HasResource() {
		return usagef("name a resource: --topic, --group, --transactional-id or --cluster")
	}
	if err := c.ask("Delete the ACLs these flags select?", "deleted", "delete the ACLs"); err != nil {
		return err
	}
	return withAdmin(g, func(adm *kadm.Client) error {
		acls, err := inspect.DeleteACLs(ctx, adm, spec)
		if werr := writeACLs(g, out, aclsOf(acls)); werr != nil {
			return werr
		}
		return aclError(err)
	})
}

func newACLExplainCmd(g *globals) *cobra.Command {
	var q nodeapi.ACLQuery
	var spec inspect.ACLSpec
	cmd := &cobra.Command{
		Use:   "explain --principal PRINCIPAL --operation OP (--topic|--group|--transactional-id NAME|--cluster) [--host H]",
		Short: "Say whether the cluster allows a principal an operation, and which ACL or default decided",
		Long: `Say whether the cluster's authorizer allows a principal an operation on a
resource, and why: the ACL that allows or denies it, super.users, or the
default for a resource no ACL names (allow.everyone.if.no.acl.found). The
node decides with the authorizer its requests are decided by, its ACLs and
its configs, so the answer is the one a client gets. klog nodes only: it
asks a node's admin API.

` + adminHelp,
		Example: `  klog acl explain --principal User:alice --operation WRITE --topic orders
  klog acl explain --principal User:bob --operation READ --group billing --host 10.1.2.3`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(spec.Operations) != 1 {
				return usagef("name one --operation")
			}
			q.Operation = spec.Operations[0]
			if len(spec.Hosts) > 0 {
				q.Host = spec.Hosts[0]
			}
			var err error
			if q.ResourceType, q.Name, err = explainResource(spec); err != nil {
				return err
			}
			return runACLExplain(cmd.Context(), g, q, cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&q.Principal, "principal", "", "the principal asking (User:NAME)")
	f.StringSliceVar(&spec.Operations, "operation", nil, "the operation: READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, ...")
	f.StringSliceVar(&spec.Hosts, "host", nil, "the address the principal connects from (default 127.0.0.1)")
	f.StringSliceVar(&spec.Topics, "topic", nil, "the topic")
	f.StringSliceVar(&spec.Groups, "group", nil, "the group")
	f.StringSliceVar(&spec.TransactionalIDs, "transactional-id", nil, "the transactional id")
	f.BoolVar(&spec.Cluster, "cluster", false, "the cluster")
	_ = cmd.MarkFlagRequired("principal")
	return cmd
}

// explainResource is the one resource klog acl explain asks about.
func explainResource(s inspect.ACLSpec) (typ, name string, _ error) {
	var out [][2]string
	for _, t := range s.Topics {
		out = append(out, [2]string{"TOPIC", t})
	}
	for _, gr := range s.Groups {
		out = append(out, [2]string{"GROUP", gr})
	}
	for _, x := range s.TransactionalIDs {
		out = append(out, [2]string{"TRANSACTIONAL_ID", x})
	}
	if s.Cluster {
		out = append(out, [2]string{"CLUSTER", "kafka-cluster"})
	}
	if len(out) != 1 {
		return "", "", usagef("name one resource: --topic, --group, --transactional-id or --cluster")
	}
	return out[0][0], out[0][1], nil
}

func runACLExplain(ctx context.Context, g *globals, q nodeapi.ACLQuery, out io.Writer) error {
	nodes, err := g.adminNodes(ctx, explainTimeout)
	if err != nil {
		return err
	}
	ex, err := nodes[0].ExplainACL(ctx, q)
	if err != nil {
		return err
	}
	if g.format == formatJSON {
		return writeJSON(out, ex)
	}
	verdict := "DENIED"
	if ex.Allowed {
		verdict = "ALLOWED"
	}
	_, err = fmt.Fprintf(out, "%s: %s %s on %s %s from %s\n  %s (%s)\n", verdict, ex.Query.Principal, ex.Query.Operation,
		ex.Query.ResourceType, ex.Query.Name, ex.Query.Host, ex.Reason, ex.Rule)
	return err
}

// aclsOf is the JSON document of acls.
func aclsOf(acls []inspect.ACL) aclsJSON {
	doc := aclsJSON{Version: aclJSONVersion, ACLs: []aclJSON{}}
	for _, a := range acls {
		doc.ACLs = append(doc.ACLs, aclJSON{ACL: a})
	}
	return doc
}

// writeACLs prints ACLs as a table (with a STATUS column when one has an
// error) or as JSON.
func writeACLs(g *globals, out io.Writer, doc aclsJSON) error {
	return writeOutput(g, out, doc, func(t *table) {
		t.row("RESOURCE\tPRINCIPAL\tHOST\tOPERATION\tPERMISSION\tSTATUS\n")
		for _, a := range doc.ACLs {
			status := "OK"
			if a.Error != "" {
				status = "ERROR: " + a.Error
			}
			t.row("%s:%s:%s\t%s\t%s\t%s\t%s\t%s\n", a.ResourceType, a.PatternType, a.ResourceName, a.Principal, a.Host, a.Operation, a.Permission, status)
		}
	})
}

// aclString says one ACL in a line.
func aclString(a inspect.ACL) string {
	return fmt.Sprintf("%s %s %s on %s:%s:%s from %s", a.Permission, a.Principal, a.Operation, a.ResourceType, a.PatternType, a.ResourceName, a.Host)
}

// aclError makes an error of the flags (inspect.ErrACLSpec) a usage
// error.
func aclError(err error) error {
	if errors.Is(err, inspect.ErrACLSpec) {
		return usagef("%v", err)
	}
	return err
}
