package main

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// destructiveCommands are the commands that delete or move data; each
// must confirm through destructive.
var destructiveCommands = []string{
	"klog topic delete",
	"klog topic trim",
	"klog group delete",
	"klog group seek",
	"klog txn abort",
	"klog quota delete",
	"klog snapshot delete",   // its refusal: TestSnapshotListDelete
	"klog user delete",       // its refusal: TestUserCreateListDelete
	"klog acl delete",        // its refusal: TestACLCommands
	"klog feature downgrade", // its refusal: TestFeatureCommands
}

// TestDestructiveCommandsConfirm: every command that deletes or moves
// data refuses, without a terminal and without --yes, saying to pass
// --yes, and leaves the data as it was; the same help describes the rule
// for all of them, and no other command has --yes.
func TestDestructiveCommandsConfirm(t *testing.T) {
	var withYes []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Flags().Lookup("yes") != nil {
			withYes = append(withYes, c.CommandPath())
			if !strings.Contains(c.Long, "Without a terminal it never asks: without --yes nothing is") {
				t.Errorf("%s: the help does not give the confirmation rule:\n%s", c.CommandPath(), c.Long)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRootCmd(&globals{}))
	slices.Sort(withYes)
	if !slices.Equal(withYes, slices.Sorted(slices.Values(destructiveCommands))) {
		t.Errorf("commands with --yes: %q, want %q", withYes, destructiveCommands)
	}

	b := startBroker(t)
	createTopic(t, b, "scratch", 1)
	seedNumbered(t, b, "scratch", 0, 4, time.Now())
	emptyGroup(t, b, "g-keep", "scratch", map[int32]int64{0: 2})
	createTopic(t, b, "topen", 1)
	openTxn(t, b, "topen", "a")

	for _, c := range []struct {
		args []string
		kept func() string // "" when the data is as it was
	}{
		{[]string{"topic", "delete", "scratch"}, func() string {
			if _, err := testAdmin(t, b).ListTopics(t.Context(), "scratch"); err != nil {
				return err.Error()
			}
			if s := logStarts(t, b, "scratch"); len(s) != 1 {
				return "scratch is gone"
			}
			return ""
		}},
		{[]string{"topic", "trim", "scratch", "--before", "end"}, func() string {
			if s := logStarts(t, b, "scratch"); s[0] != 0 {
				return "scratch/0 trimmed"
			}
			return ""
		}},
		{[]string{"group", "delete", "g-keep"}, func() string {
			if got := committed(t, b, "g-keep"); got["scratch"][0] != 2 {
				return "g-keep lost its offsets"
			}
			return ""
		}},
		{[]string{"group", "seek", "g-keep", "--to", "end"}, func() string {
			if got := committed(t, b, "g-keep"); got["scratch"][0] != 2 {
				return "g-keep moved"
			}
			return ""
		}},
		{[]string{"txn", "abort", "--topic", "topen", "--partition", "0", "--start-offset", "0"}, func() string {
			if r := mustRun(t, b, "", "consume", "topen", "-e", "--read-uncommitted"); r.stdout != "a\n" {
				return "topen: " + r.stdout
			}
			if lso, err := testAdmin(t, b).ListCommittedOffsets(t.Context(), "topen"); err != nil || lso["topen"][0].Offset != 0 {
				return "the open transaction of topen was closed"
			}
			return ""
		}},
	} {
		null, err := os.Open(os.DevNull)
		if err != nil {
			t.Fatal(err)
		}
		r := klogRunReader(t, b, null, c.args...)
		null.Close()
		if r.code != exitFailure || !strings.Contains(r.stderr, "stdin is not a terminal; pass --yes to") {
			t.Errorf("klog %q </dev/null: exit %d, stderr:\n%s", c.args, r.code, r.stderr)
		}
		if what := c.kept(); what != "" {
			t.Errorf("klog %q </dev/null without --yes: %s", c.args, what)
		}
	}
	// --yes goes ahead.
	mustRun(t, b, "", "topic", "delete", "scratch", "--yes")
	if details, err := testAdmin(t, b).ListTopics(t.Context(), "scratch"); err == nil && len(details) > 0 && details["scratch"].Err == nil {
		t.Errorf("scratch not deleted with --yes: %+v", details)
	}
}
