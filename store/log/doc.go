// Package log stores partition logs in Kafka's on-disk format.
//
// A Log is one partition: a directory "<topic>-<partition>/" of segments.
// A Manager owns all partitions of one data directory and its node-level
// checkpoint files. The package imports nothing from broker/; files are
// reached only through store/vfs, so crash and fault tests run in memory.
//
// # Files
//
//	<data dir>/
//	  recovery-point-offset-checkpoint   offsets known fsynced, per partition
//	  log-start-offset-checkpoint        log start offsets, per partition
//	  replication-offset-checkpoint      high watermarks, per partition (written by the broker)
//	  cleaner-offset-checkpoint          first dirty offset, per compacted partition
//	  .kafka_cleanshutdown               present only after a clean Close
//	  meta.properties                    the cluster and node the directory belongs to (written by the broker)
//	  <topic>-<partition>/
//	    00000000000000000000.log         segment data; name = 20-digit base offset
//	    00000000000000000000.index       sparse offset index
//	    00000000000000000000.timeindex   sparse time index
//	    00000000000000000000.txnindex    aborted transactions whose marker is in the segment
//	    00000000000000001200.snapshot    producer state before offset 1200
//	    leader-epoch-checkpoint
//	    partition.metadata
//	  <topic>-<partition>.<topic id>-stray/  a stray log moved aside at open
//
// A stray log is one whose partition.metadata names a topic ID the
// cluster does not have under its name (ManagerOptions.TopicID): the
// topic was deleted, or deleted and created again, while the node was
// away. Its directory is renamed, not opened and never served, and kept
// for the operator to remove. Create refuses to hand out an open log of
// another topic ID (ErrInconsistentTopicID).
//
// All integers are big endian. Format version: every file below is version
// 0 of Kafka's layout; the text files carry the version on their first line,
// the binary ones are fixed by their file extension.
//
// # .log: record batches (magic 2), stored byte for byte as produced
//
//	offset  size  field
//	     0     8  baseOffset            assigned by Append, patched in place
//	     8     4  batchLength           bytes after this field (size - 12)
//	    12     4  partitionLeaderEpoch  patched in place by Append
//	    16     1  magic                 always 2
//	    17     4  crc                   CRC-32C (Castagnoli) of bytes 21..end
//	    21     2  attributes            bits 0-2 codec (0 none, 1 gzip, 2 snappy,
//	                                    3 lz4, 4 zstd), 3 LogAppendTime,
//	                                    4 transactional, 5 control,
//	                                    6 delete horizon (set by the cleaner)
//	    23     4  lastOffsetDelta       recordCount - 1
//	    27     8  baseTimestamp         timestamp of the first record
//	    35     8  maxTimestamp
//	    43     8  producerId
//	    51     2  producerEpoch
//	    53     4  baseSequence
//	    57     4  recordCount
//	    61     …  records (compressed as a whole when codec != 0)
//
// Each record: length varint, attributes int8, timestampDelta varlong,
// offsetDelta varint, keyLength varint (-1 null), key, valueLength varint
// (-1 null), value, headerCount varint, then per header keyLength varint,
// key, valueLength varint (-1 null), value. Varints are zig-zag encoded.
//
// The base offset and leader epoch precede the CRC, so patching them keeps
// the producer's CRC valid. Batches never straddle segments. Records stay
// compressed on disk; only OffsetForTimestamp decompresses (gzip, snappy
// raw or xerial-framed, lz4 frame, zstd; at most 64 MiB per batch) to
// answer at record level.
//
// In code, package store/log/record is the one view of these bytes and the
// only code that knows the offsets above, the attribute bits, the record
// encoding, control records and the CRC:
//
//	record.Parse(b) (Batch, error)             header checks, whole batch present
//	record.ParseHeader(b) (Batch, error)       the same on the first ScanHeaderSize bytes
//	record.ParseBatches(b) Batches             the view of batches appended together, parsed once
//	                                           (Batches.Parse in place): All, Err, First, Transactional,
//	                                           FirstFrame/NextFrame (Kafka's framing of a produce)
//	Batch.BaseOffset, Size, LastOffset, MaxTimestamp, ProducerID, ... (accessors)
//	Batch.Attributes() Attributes              Compression, TimestampType, Transactional, Control
//	Batch.CheckCRC() error, Batch.Seal()       verify, recompute after patching
//	Batch.SetBaseOffset, SetPartitionLeaderEpoch, SetMaxTimestamp, ... (in-place patches)
//	Batch.Records(*Decompressor) (Iter, error) record iterator; no allocation when uncompressed
//	Batch.TxnMarker() (TxnMarker, bool, error) the commit or abort of a control batch
//	record.NewBuilder(ts) *Builder, Batch.Rewrite() *Builder, Builder.Append(Record), Builder.Build()
//	TxnMarker.AppendBatch(dst, ts) []byte      a transaction marker's control batch
//
// Its errors are this package's ErrCorruptMessage and ErrInvalidRecord (the
// same values). The log adds its rules on top (validation below);
// store/log/logtest is a test convenience layer over the builder.
//
// # .index: offset index, 8-byte entries
//
//	offset  size  field
//	     0     4  relativeOffset  last offset of a batch - segment base
//	     4     4  position        byte position of that batch in the .log
//
// An entry is added for a batch when more than index.interval.bytes were
// appended since the previous entry. Entries strictly increase in both
// fields. Lookup: the last entry with relativeOffset <= target - base gives
// a position at or before the batch holding target; batch headers are then
// walked forward.
//
// # .timeindex: time index, 12-byte entries
//
//	offset  size  field
//	     0     8  timestamp       largest timestamp seen so far in the segment
//	     8     4  relativeOffset  last offset of the batch holding it - segment base
//
// The offset is the batch's last offset, as Kafka's LogSegment writes it
// on append and on recovery alike, so a segment rebuilt by recovery has
// the index of one that never crashed.
//
// An entry is added together with each offset index entry, and once more
// when the segment is rolled or closed, whenever the segment's largest
// timestamp grew since the last entry. So the last entry of an inactive
// segment holds its largest timestamp.
//
// klog writes index files append-only without preallocation; entries are
// kept in memory for every segment (8 and 12 bytes per index.interval.bytes
// of log) and written to the files when the segment is flushed, rolled or
// closed. Zero-filled trailing entries (a preallocated file) are accepted on
// open and rewritten compactly.
//
// # .txnindex: transaction index, 34-byte entries
//
//	offset  size  field
//	     0     2  version           0
//	     2     8  producerId
//	    10     8  firstOffset       first batch of the aborted transaction
//	    18     8  lastOffset        its abort marker (inside this segment)
//	    26     8  lastStableOffset  first offset of the earliest other open
//	                                transaction when the marker was written,
//	                                else lastOffset + 1
//
// Every segment has the file (empty without aborts). Entries are kept in
// memory and written with the other indexes. AbortedTransactions(from,
// upTo) walks the segments from the one holding from and stops at the first
// entry whose lastStableOffset >= upTo. Recovery rebuilds the file of every
// re-scanned segment, and of any segment whose file is missing or invalid,
// by replaying producer state.
//
// # .snapshot: producer state, version 1
//
//	offset  size  field
//	     0     2  version           1
//	     2     4  crc               CRC-32C of bytes 6..end
//	     6     4  entryCount
//	    10    46  entries, ordered by producerId:
//	                 0  8  producerId
//	                 8  2  producerEpoch
//	                10  4  lastSequence       -1 when no batch is retained
//	                14  8  lastOffset         last offset of that batch, -1 none
//	                22  4  offsetDelta        its lastOffset - firstOffset
//	                26  8  timestamp          last batch or marker max timestamp
//	                34  4  coordinatorEpoch   -1 until a marker was written
//	                38  8  currentTxnFirstOffset  -1 when no transaction is open
//
// The name is the offset of the next batch: the state holds every batch
// below it. A snapshot is written (atomically, fsynced) when a segment
// rolls, at the new segment's base, and by Close at the log end. Roll keeps
// the snapshots of the last two segments; retention deletes those below the
// first remaining segment; Truncate deletes those above the new end.
//
// # leader-epoch-checkpoint
//
//	0                  version
//	2                  number of entries
//	0 0                epoch startOffset
//	3 1200
//
// # partition.metadata
//
//	version: 0
//	topic_id: AQIDBAUGBwgJCgsMDQ4PEA     16-byte topic ID, base64url without padding
//
// # meta.properties (Kafka's, version 1; MetaProperties)
//
//	version=1
//	cluster.id=q1Sh-9_ISia_zwGINzRvyQ
//	node.id=1
//
// A node refuses a data directory whose meta.properties names another
// cluster or node (CheckMetaProperties).
//
// # recovery-point-offset-checkpoint, log-start-offset-checkpoint, replication-offset-checkpoint, cleaner-offset-checkpoint
//
//	0                  version
//	2                  number of entries
//	orders 0 1500      topic partition offset
//	orders 1 1432
//
// Text files end every line with "\n", except partition.metadata, whose
// last line has none. A checkpoint that ends before its count line (Kafka
// creates cleaner-offset-checkpoint empty) holds no entries, as Kafka's
// CheckpointFile reads it. Every checkpoint file is replaced
// atomically: written to "<name>.tmp", fsynced, renamed over the old file,
// and the directory fsynced.
//
// Offline tools (klog log, package store/log/dump) read every file above
// with the decoders the log uses, exported read-only in decode.go:
// DecodeOffsetIndex, DecodeTimeIndex, DecodeTxnIndex, DecodeSnapshot,
// DecodeLeaderEpochs, DecodeOffsetCheckpoint, DecodePartitionMetadata.
//
// # Appending
//
// Append validates every batch of the call before changing anything
// (AppendBatches takes them parsed, as the produce path parsed them once
// for its own checks, and reads the headers no more): length
// within the bytes given and <= max.message.bytes (else ErrMessageTooLarge),
// magic 2 (else ErrInvalidRecord), CRC, recordCount > 0 and lastOffsetDelta == recordCount-1. Then
// each record is parsed: in place and without allocation when the batch is
// uncompressed; compressed ones are decompressed first, as Kafka's
// LogValidator does, within a budget of max(max.message.bytes, 64 MiB) of
// records (a bomb is refused, ErrInvalidRecord, once decompression passes
// it; data that does not decompress is ErrCorruptMessage). The records
// must be as many as recordCount and fill the (decompressed) records
// section exactly (else ErrInvalidRecord; a malformed record is
// ErrCorruptMessage), and their offset deltas must run 0..n-1.
// CreateTime record timestamps must lie within
// message.timestamp.before.max.ms / after.max.ms of now
// (ErrInvalidTimestamp); -1 (no timestamp) is accepted. In a compacted log
// (cleanup.policy includes compact) every record of a data batch needs a
// key (else ErrInvalidRecord). Records refused for a timestamp or a key
// are all listed, each with Kafka's message, in a *RecordErrors. A batch whose
// header maxTimestamp disagrees with its records is corrected (and its CRC
// recomputed); compressed batches stay as the producer compressed them. With LogAppendTime the header gets maxTimestamp
// = now and the timestamp-type bit, and a new CRC. Any invalid batch fails
// the whole call; nothing is written.
//
// Then producer state is checked for every batch with producerId >= 0
// (batches without one skip it entirely). Per producer the log keeps the
// epoch, the last five batches (first and last sequence, last offset,
// offset delta, max timestamp), the last timestamp, the coordinator epoch
// and the first offset of its open transaction. In call order:
//
//   - a data batch whose epoch and sequence range equal one of the five
//     retained batches is a duplicate: nothing of the call is appended and
//     the result carries the original offsets with Duplicate set;
//   - an epoch below the producer's is ErrInvalidProducerEpoch;
//   - a new epoch must start at sequence 0, and within an epoch a batch
//     must start right after the last sequence (MaxInt32 wraps to 0), else
//     ErrOutOfOrderSequence — except for a producer the log does not know
//     (never seen, or expired), which may start anywhere;
//   - a transactional batch opens a transaction (or continues the open
//     one); a non-transactional batch while one is open is
//     ErrInvalidTxnState;
//   - a control batch holding a transaction marker (key: version int16 0,
//     type int16 0 abort / 1 commit; value: version int16 0, coordinator
//     epoch int32) must not have an older producer epoch
//     (ErrInvalidProducerEpoch) or coordinator epoch
//     (ErrTransactionCoordinatorFenced); it ends the open transaction and,
//     for an abort, adds a .txnindex entry to the segment holding it. A
//     marker for a producer without open transaction is written and
//     records nothing. AppendMarker builds such a batch;
//     AppendCoordinatorMarker builds it for a coordinator that knows the
//     highest coordinator epoch ever held, and is not fenced by a
//     recorded epoch above that one (forged by a client).
//
// Later batches of a call are checked against the state the earlier ones
// leave; any failure fails the whole call. The state changes only once the
// batches are written. FirstUnstableOffset is the first offset of the
// earliest open transaction. ExpireProducers (Manager.ExpireProducers,
// which the broker runs every producer.id.expiration.check.interval.ms,
// default 10 minutes, as Kafka does) forgets producers idle for
// producer.id.expiration.ms (default 24 hours), never one with an open
// transaction; a producer whose last timestamp lies ahead of the clock
// counts as last active when an expiry pass first sees it (a klog
// deviation: Kafka would keep it until that future time).
//
// Valid batches are patched in place and written with one Write call.
// Before the write the active segment is rolled when the append would make
// it exceed segment.bytes, when it is older than segment.ms minus
// segment.jitter.ms (measured from the first batch's max timestamp, or the
// segment's creation when that is -1), when an index would exceed
// segment.index.bytes, or when an offset would not fit a relative index
// entry.
//
// # Producer state memory
//
// Kafka, and klog with it, accepts idempotent batches from producer ids no
// broker gave out (ProducerAppendInfo.checkSequence accepts any sequence
// from an unknown id), so a client can make a partition keep state for as
// many ids as it invents, until they expire. The cost per producer id and
// partition (BenchmarkProducerMemory: 600,000 ids with one batch each, Go
// heap after GC):
//
//   - live: 96 bytes — a 64-byte producerEntry holding its one retained
//     batch inline, plus its slot in the map of producers (about 32 bytes,
//     by the map's load). A producer with two or more batches retained also
//     holds a 128-byte window of its last five: about 224 bytes;
//   - loaded from a snapshot: the same 96 bytes (a producer comes back
//     with its last batch only, into a map made to size, unless recovery
//     finds the earlier batches of its window, see Recovery), after a
//     transient 143 bytes allocated per producer by the load, 46 of them
//     the snapshot file, read whole;
//   - on disk: 46 bytes per snapshot entry; a log keeps the snapshots of
//     its last two segments.
//
// Expiry is the only bound, in Kafka too: the state holds the new producer
// ids of one producer.id.expiration.ms (plus up to one check interval).
// 1,000 new ids a second for the default 24 hours is 86.4 million ids,
// about 8 GB; lower producer.id.expiration.ms where clients are not
// trusted. A map emptied by expiry to a quarter of its peak size is
// remade, since a Go map never shrinks. Loading drops the producers
// expired at load time, those of the snapshot and those the replay after
// it re-creates alike.
//
// # Flushing and durability
//
// As in Kafka, data is left to the page cache by default. A segment is
// fsynced (log and both indexes) when it is rolled, every flush.messages
// records, when flush.ms has passed since the last flush (checked by
// Manager.Maintain) and on Close. The recovery point is the log end offset
// at the last complete flush; Manager.Checkpoint persists it.
//
// A failed write or fsync is sticky: the Log refuses every later write
// with an *IOError wrapping the first failure, and an fsync is never
// retried. Reads keep working. Reopening recovers from what is on disk.
//
// # Recovery
//
// On open, segments that may hold offsets at or above the recovery point —
// all of them after an unclean shutdown without checkpoint — are re-read
// batch by batch: header sanity, offsets not going backwards, CRC. The
// first bad or incomplete batch ends the log: the segment is truncated
// there, later segments are deleted, and the indexes are rebuilt. Other
// segments keep their index files if they are consistent with the log
// (ordered, inside the file, matching batch boundaries) and are rebuilt
// otherwise. Damage to the bytes before the CRC that keeps offsets
// increasing (the low bytes of baseOffset, partitionLeaderEpoch) cannot be
// detected, as in Kafka. Recovered segments are fsynced before use. After
// Manager.Close wrote the clean-shutdown marker no segment is re-scanned on
// the next open; the marker is removed once the logs are open.
//
// Producer state is then loaded from the latest readable snapshot at or
// below the log end (snapshots beyond it are deleted, unreadable ones too)
// and the batches after it are replayed, without checks; a clean Close's
// snapshot at the log end means nothing is replayed. Transaction indexes to
// rebuild are filled by the same replay, started earlier (from an older
// snapshot or the first segment) when they lie before the snapshot.
// Truncate reloads producer state the same way.
//
// A snapshot keeps each producer's last batch only, as Kafka's does, and
// Kafka's recovery stops there: a producer whose last five batches
// straddle the snapshot (a roll between them, or a clean close) comes back
// knowing the newer ones only, and the retry of an older one still in
// flight is answered OUT_OF_ORDER_SEQUENCE_NUMBER; a client that then
// resets its producer id writes it a second time. klog rebuilds the
// windows: for every producer whose oldest retained batch lies before the
// snapshot, the log before it is read backwards (batch headers only, from
// index entry to index entry) for the batches of its epoch in sequence
// before that one, until it has five, reaches sequence 0, a gap, another
// epoch or the log start, or 16 MiB of batches were read.
//
// # Retention and deletion
//
// ApplyRetention deletes leading, inactive segments whose largest timestamp
// is older than retention.ms, then as many leading segments as keep the log
// within retention.bytes — both only when cleanup.policy includes delete —
// and, whatever the policy, segments wholly below the log start offset
// (SetStartOffset, i.e. DeleteRecords). The log start offset moves to the
// first remaining segment when that is higher. A node runs ApplyRetention
// over every log (Manager.ApplyRetention) every
// log.retention.check.interval.ms, apart from the rolls and flushes of
// Manager.Maintain; SetStartOffset deletes its segments at once.
// Files are unlinked at once
// (file.delete.delay.ms is not applied); readers that pinned a segment keep
// reading it while its files stay open, and the handles are closed when the
// last reader is done. A reader that must reopen a file of a dropped
// segment (see Open files) finds it gone and reads on from the segments
// that remain, as a read that came a moment later would.
//
// # Compaction
//
// A log whose cleanup.policy includes compact is cleaned by Log.Clean, one
// pass at a time, as Kafka's Cleaner does (Manager.CleanDirtiest picks the
// log; the broker runs it every log.cleaner.backoff.ms).
//
// The dirty section is [first dirty offset, first uncleanable offset). The
// first dirty offset is the cleaner checkpoint (cleaner-offset-checkpoint,
// the log start when absent or outside the log). The first uncleanable
// offset is the lowest of the active segment's base, the caller's upper
// bound (the high watermark, or the last stable offset when an open
// transaction starts below it) and the base of the first dirty segment
// holding a record newer than now - min.compaction.lag.ms. The dirty ratio
// is the bytes of the segments from the first dirty offset to the first
// uncleanable one over those and the clean segments before them;
// CleanDirtiest takes, among compacted logs whose ratio exceeds
// min.cleanable.dirty.ratio or whose first dirty batch is older than
// max.compaction.lag.ms (those first), the one with the highest ratio.
//
// A pass indexes the keys of the dirty section's whole batches into a
// bounded offset map (key hash, 128 bits, to the latest offset; 24 bytes a
// slot, filled to 0.9, at most log.cleaner.dedupe.buffer.size and no more
// than the section's offsets need), skipping control batches and batches
// of aborted transactions (from the .txnindex). Where the map fills, the
// pass ends: the new checkpoint is the offset after the last batch indexed.
// Then every segment from the log start below that offset is rewritten,
// in groups whose sizes (before cleaning) stay within segment.bytes,
// segment.index.bytes and relative offsets an index entry holds (Kafka's
// groupSegmentsBySize), each group into one segment based at the group's
// first base. Per batch:
//
//   - a record is kept when no later offset of its key is in the map; a
//     record without key is dropped, as Kafka does;
//   - a tombstone (null value) is kept until its batch's delete horizon:
//     the first pass that keeps it rewrites the batch with the delete
//     horizon bit and base timestamp now + delete.retention.ms (record
//     timestamp deltas rebased, so record timestamps stay), and a pass
//     after the horizon drops it (KIP-534);
//   - the batches of aborted transactions are dropped;
//   - a transaction marker is kept while any batch of its transaction was
//     read earlier in the pass (since the producer's previous marker);
//     once none is, it gets a delete horizon the same way, and a pass
//     after it drops the marker with its .txnindex entry;
//   - a batch that keeps every record (and needs no horizon) is copied as
//     it is; else it is rebuilt with record.Batch.Rewrite: same base
//     offset, last offset delta, leader epoch, attributes, producer id,
//     epoch and base sequence, compressed again with its codec;
//   - a batch left without records goes, unless it is its producer's last
//     data batch, a marker of the current epoch of a producer without data
//     batch, or the last batch below the first uncleanable offset
//     (BatchRetention.RETAIN_EMPTY): that one keeps its header, with no
//     records, so the producer's sequence and epoch, and the log's last
//     offset, survive a reload.
//
// Offsets are preserved and gaps allowed: a read at an offset inside a gap
// returns the next batch after it, across segments too. The rewritten
// group's indexes are built as an append builds them, its .txnindex holds
// the entries whose marker it kept, and its largest timestamp is that of
// the batches kept. The active segment is never touched.
//
// Swap. A group's segment is written as "<base>.log.cleaned" (and
// .index.cleaned, .timeindex.cleaned, .txnindex.cleaned) and fsynced,
// without Log.mu. Then, under Log.mu and only if the group's segments are
// still in the log (else the pass is dropped): the .cleaned files are
// renamed to ".swap" (.log last), the old segments' files to ".deleted",
// the .swap files to their final names (.log last), the directory fsynced
// after each of the three steps; then the new segment list is published
// and the .deleted files removed. Readers that pinned an old segment keep
// its files (LimitFS handles follow renames). An I/O error after the first
// rename fails the log (sticky); a pass that fails before only removes its
// .cleaned files. On open, recovery first completes every swap whose
// "<base>.log.swap" it finds: it deletes the segments based in [base, the
// swap's next offset) and renames the .swap files into place; the
// segment is then re-scanned. Then every ".cleaned", ".swap" (without its
// .log.swap) and ".deleted" file is removed. So a crash at any step leaves
// the old segments or the new one, with every key's latest value either
// way (TestCleanCrashAtEveryStep, TestCleanProperty).
//
// Log.CleanerState reports the first dirty and uncleanable offsets, the
// clean and dirty bytes and their ratio, the last pass (start, duration,
// bytes and records removed) and the totals since open.
//
// Manager.CleanNow cleans one log whatever its dirty ratio (klog topic
// compact), pass after pass while a pass ends where its offset map filled.
// A dry run (CleanOptions.DryRun) takes every decision of a pass and writes
// nothing: its CleanPlan counts the records per key it would remove (the
// keys losing most, bounded), aborted and keyless records, and the
// tombstones it keeps with their delete horizon. CleanOptions.Stop ends a
// pass before its next batch read (never inside a swap) with
// ErrCleanStopped; the groups swapped in so far stay, the checkpoint does
// not move.
//
// # Open files
//
// Every segment has four files, and nothing else bounds how many segments
// a node holds, so a Manager opens all files through a vfs.LimitFS that
// keeps at most ManagerOptions.MaxOpenFiles of them open, all partitions
// together (DefaultMaxOpenFiles: half of RLIMIT_NOFILE). A Log holds
// handles; a file is opened when it is used and closed again, least
// recently used first, when another needs the slot. Indexes live in memory,
// so their files are only touched by flushes and by recovery, and a
// partition being appended to keeps its active .log open as long as it is
// among the most recently used. Recovery goes through the same cap: a node
// starts on its data directory whatever the limit, however many segments
// it holds. A file with unsynced writes is fsynced before it is closed (a
// clean one is closed first when there is one), and an error of that fsync
// fails the Log's next write or flush, as the write's own fsync would.
// Kafka keeps every segment's .log open, opens its offset and time indexes
// on first use (LazyIndex), and leaves the bound to the operator's ulimit.
//
// # Concurrency
//
// One writer at a time (Log.mu). Readers take no Log lock: they load the
// immutable segment list, the end offset and a segment's visible size
// atomically, and pin the segment with a reference count. Read, Offsets and
// OffsetForTimestamp therefore never wait for a write to finish. Truncate
// rewrites the active segment in place; callers must not read above the
// truncation point while it runs (the replication layer only truncates
// above the high watermark, which bounds consumer reads).
package log
