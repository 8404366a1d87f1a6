// Package record is klog's one view of Kafka's v2 record batch: the only
// code that knows the header offsets, the attribute bits, the record
// encoding, control records and the CRC. The byte layout is drawn in the
// package doc of store/log, which stores batches byte for byte; everything
// else — the log, its tests, the broker's internal topics — reads and
// builds batches through this package.
//
// Reading:
//
//	b, err := record.Parse(raw)      // header checks, whole batch present
//	err = b.CheckCRC()
//	b.BaseOffset(), b.LastOffset(), b.Size(), b.MaxTimestamp(), b.ProducerID(), ...
//	b.Attributes().Compression(), .TimestampType(), .Transactional(), .Control()
//	it, err := b.Records(dec)       // dec decompresses; nil for uncompressed batches
//	it, err = b.RecordsWithin(dec, limit) // decompressed records bounded to limit bytes
//	for it.Next() { r := it.Record(); r.Key, r.Value, r.Headers, r.OffsetDelta, ... }
//	err = it.Err()
//	m, ok, err := b.TxnMarker()     // the commit or abort of a control batch
//
// ParseBatches parses the headers of a run of batches once — a produce
// request's records for one partition — into a view that the produce
// checks and the log's append read instead of the bytes; it also frames
// the first two batches as Kafka's produce path does (FirstFrame,
// NextFrame).
//
// ParseHeader checks just the first ScanHeaderSize bytes, for walking a
// segment file header by header. Walking uncompressed records does not
// allocate: records alias the batch and headers stay encoded (Headers).
//
// Writing:
//
//	bb := record.NewBuilder(ts)     // or b.Rewrite() to rebuild b with fewer records
//	bb.Compression, bb.ProducerID, bb.Transactional, ... = ...
//	bb.Append(record.Record{OffsetDelta: 0, Key: k, Value: v, Headers: record.MakeHeaders(hs...)})
//	batch, err := bb.Build()
//	raw := record.TxnMarker{...}.AppendBatch(nil, ts)
//
// In place, the log patches the base offset and partition leader epoch
// (before the CRC) and, with Seal, the timestamp type and max timestamp.
//
// Errors are store/log's classes: ErrCorruptMessage for structural faults,
// ErrInvalidRecord for rule violations (log.ErrCorruptMessage and
// log.ErrInvalidRecord are these values).
//
// The package must never import store/log or broker/; it imports kmsg for
// the control record schemas.
package record
