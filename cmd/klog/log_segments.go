package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/klogdev/klog/store/log"
	"github.com/klogdev/klog/store/log/dump"
)

// logSegmentsJSON is the JSON output of log segments.
type logSegmentsJSON struct {
	Version    int              `json:"version"`
	Partitions []dump.Partition `json:"partitions"`
}

func newLogSegmentsCmd(g *globals) *cobra.Command {
	var dataDir string
	cmd := &cobra.Command{
		Use:   "segments DIR|TOPIC/PARTITION...",
		Short: "List a partition's segments from its directory, without a broker",
		Long: `List the segments of partitions on disk: for each, its base and last
offset, size, batch and record counts, first and largest timestamp, and
the entries of its offset, time and transaction indexes; for each
partition, its log start offset, recovery point and high watermark from
the data directory's checkpoints, its log end offset, producer snapshots
and leader epochs.

DIR is a partition directory (<topic>-<partition>), or a data directory:
then every partition in it is listed, in each node-N directory too for the
directory of a local cluster (klog up -n N). TOPIC/PARTITION names a
partition of the data directory --data-dir, by default klog up's
($XDG_DATA_HOME/klog/default), in every node directory holding it.

The counts come from the batch headers and index sizes; run klog log dump
--verify on the files for a full check.`,
		Example: `  klog log segments orders/0
  klog log segments --data-dir ./data orders/0 -f json
  klog log segments ~/.local/share/klog/default/node-0`,
		Args: usageArgs(cobra.MinimumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLogSegments(g, dataDir, args, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	addDataDirFlag(cmd, &dataDir)
	addLogFormatFlag(g, cmd)
	return cmd
}

func runLogSegments(g *globals, dataDir string, args []string, out, diag io.Writer) error {
	failed := failures{diag: diag}
	var parts []dump.Partition
	for _, a := range args {
		dirs, isFile, err := logArgDirs(g, dataDir, a)
		if isFile {
			return usagef("%s: not a directory (klog log dump reads files)", a)
		}
		if err != nil {
			failed.add(err.Error(), "%s", a)
			continue
		}
		for _, d := range dirs {
			ps, err := dump.ReadDir(d)
			if err != nil {
				failed.add(err.Error(), "%s", d)
				continue
			}
			for _, p := range ps {
				for _, s := range p.Segments {
					for _, pr := range s.Problems {
						failed.add(pr, "%s", p.Dir)
					}
				}
				for _, pr := range p.Problems {
					failed.add(pr, "%s", p.Dir)
				}
			}
			parts = append(parts, ps...)
		}
	}
	if err := writeOutput(g, out, logSegmentsJSON{Version: logJSONVersion, Partitions: parts}, func(t *table) {
		for _, p := range parts {
			t.section()
			name := p.Dir
			if p.Partition >= 0 {
				name = fmt.Sprintf("%s/%d", p.Topic, p.Partition)
			}
			t.row("PARTITION\t%s\n", name)
			t.row("DIR\t%s\n", p.Dir)
			t.row("TOPIC_ID\t%s\n", orDash(p.TopicID))
			t.row("LOG_START_OFFSET\t%s\n", optOffset(p.LogStartOffset))
			t.row("RECOVERY_POINT\t%s\n", optOffset(p.RecoveryPoint))
			t.row("HIGH_WATERMARK\t%s\n", optOffset(p.HighWatermark))
			t.row("FIRST_DIRTY\t%s\n", optOffset(p.CleanerCheckpoint))
			t.row("LOG_END_OFFSET\t%d\n", p.LogEndOffset)
			t.row("SIZE\t%d\n", p.Size)
			t.row("SNAPSHOTS\t%s\n", orDash(int64List(p.Snapshots)))
			t.row("LEADER_EPOCHS\t%s\n", orDash(epochList(p.LeaderEpochs)))
			t.flush()
			t.row("\n")
			t.row("BASE\tLAST\tSIZE\tBATCHES\tRECORDS\tFIRST_TIME\tMAX_TIME\tINDEX\tTIMEINDEX\tABORTED\n")
			for _, s := range p.Segments {
				t.row("%d\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\n", s.BaseOffset, offsetOrDash(s.LastOffset), s.Size, s.Batches, s.Records,
					millisCell(s.FirstTimestamp), millisCell(s.MaxTimestamp), countOrDash(s.IndexEntries), countOrDash(s.TimeIndexEntries), countOrDash(s.AbortedTxns))
			}
		}
	}); err != nil {
		return err
	}
	return failed.err("%s reading %s", plural(failed.n, "problem"), plural(len(args), "argument"))
}

// logArgDirs returns the directories an argument of klog log names: the
// argument itself when it is a directory, else TOPIC/PARTITION's in the
// data directory (dataDir, default klog up's); isFile says it is a file.
func logArgDirs(g *globals, dataDir, arg string) (dirs []string, isFile bool, err error) {
	if st, err := os.Stat(arg); err == nil {
		if !st.IsDir() {
			return nil, true, nil
		}
		return []string{arg}, false, nil
	}
	i := strings.LastIndexByte(arg, '/')
	p, err := strconv.ParseInt(arg[i+1:], 10, 32)
	if i <= 0 || err != nil || p < 0 {
		return nil, false, fmt.Errorf("no file or directory %s, and not TOPIC/PARTITION: %w", arg, fs.ErrNotExist)
	}
	if dataDir == "" {
		if dataDir, err = defaultDataDir(g.getenv); err != nil {
			return nil, false, err
		}
	}
	dirs, err = dump.FindPartition(dataDir, log.TopicPartition{Topic: arg[:i], Partition: int32(p)})
	return dirs, false, err
}

// addDataDirFlag adds --data-dir, where TOPIC/PARTITION arguments are
// looked up.
func addDataDirFlag(cmd *cobra.Command, dataDir *string) {
	cmd.Flags().StringVar(dataDir, "data-dir", "", "data directory TOPIC/PARTITION names a partition of (default klog up's, $XDG_DATA_HOME/klog/default)")
}

func countOrDash(n int) string {
	if n < 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

func int64List(s []int64) string {
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = strconv.FormatInt(v, 10)
	}
	return strings.Join(parts, ",")
}

func epochList(es []dump.EpochEntry) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = fmt.Sprintf("%d@%d", e.Epoch, e.StartOffset)
	}
	return strings.Join(parts, ",")
}
