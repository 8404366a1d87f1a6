package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// ErrNotConfirmed reports that a destructive command did nothing because it
// was not confirmed: declined at the prompt, or run without a terminal and
// without --yes.
var ErrNotConfirmed = errors.New("not confirmed")

// consent is what lets a destructive command go ahead: --yes, or a yes at
// the terminal.
type consent struct {
	yes         bool      // --yes: go ahead without asking
	interactive bool      // stdin is a terminal: ask
	in          io.Reader // the answer
	diag        io.Writer // the question
}

// destructive makes cmd, a command that deletes or moves data (topic
// delete and trim, group delete and seek, txn abort, user delete), confirm as every
// such command does: it registers --yes (-y), adds the rule to the help,
// and fills in c, which the command asks through, from cmd's stdin and
// stderr when it runs. verb says what the command does ("delete"), done
// what did not happen when it is not confirmed ("deleted").
func destructive(cmd *cobra.Command, c *consent, verb, done string) {
	cmd.Flags().BoolVarP(&c.yes, "yes", "y", false, verb+" without asking")
	if cmd.Long == "" {
		cmd.Long = cmd.Short + "."
	}
	cmd.Long += fmt.Sprintf(`

In a terminal klog asks before it goes ahead; --yes (-y) skips the
question. Without a terminal it never asks: without --yes nothing is %s,
and klog exits 1 saying to pass --yes.`, done)
	cmd.PreRun = func(cmd *cobra.Command, _ []string) {
		c.in, c.diag = cmd.InOrStdin(), cmd.ErrOrStderr()
		c.interactive = isTerminal(c.in)
	}
}

// asks reports whether ask will put a question at the terminal.
func (c consent) asks() bool { return !c.yes && c.interactive }

// refuses reports whether ask will refuse: no --yes and no terminal.
func (c consent) refuses() bool { return !c.yes && !c.interactive }

// ask returns nil when the command may go ahead: --yes was given, or the
// answer to question was yes. Otherwise it returns an error wrapping
// ErrNotConfirmed saying that nothing was done ("nothing deleted") and,
// without a terminal, what --yes would do ("pass --yes to <withYes>").
func (c consent) ask(question, done, withYes string) error {
	if c.yes {
		return nil
	}
	if !c.interactive {
		return fmt.Errorf("nothing %s: stdin is not a terminal; pass --yes to %s: %w", done, withYes, ErrNotConfirmed)
	}
	ok, err := confirm(c.in, c.diag, question)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("nothing %s: %w", done, ErrNotConfirmed)
	}
	return nil
}

// confirmLineMax bounds the answer read from the terminal.
const confirmLineMax = 256

// confirm asks question on diag and reads the answer from in; only "y" or
// "yes" confirms. End of input declines.
func confirm(in io.Reader, diag io.Writer, question string) (bool, error) {
	fmt.Fprintf(diag, "%s [y/N] ", question)
	line, err := bufio.NewReader(io.LimitReader(in, confirmLineMax)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("read answer: %w", err)
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return true, nil
	}
	if line == "" {
		fmt.Fprintln(diag)
	}
	return false, nil
}

// isTerminal reports whether r is an interactive terminal: a character
// device other than the null device.
func isTerminal(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok || f == nil {
		return false
	}
	fi, err := f.Stat()
	if err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return false
	}
	if null, err := os.Stat(os.DevNull); err == nil && os.SameFile(fi, null) {
		return false
	}
	return true
}
