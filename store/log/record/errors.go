package record

import "errors"

// The error classes of a batch. store/log exports the same values as
// log.ErrCorruptMessage and log.ErrInvalidRecord (the produce path maps
// them to Kafka error codes), so their text names store/log.

// ErrCorruptMessage means a batch failed a structural check: truncated,
// impossible length, malformed records, records that do not decompress or
// a CRC mismatch. Kafka: CORRUPT_MESSAGE.
var ErrCorruptMessage = errors.New("store/log: corrupt message")

// ErrInvalidRecord means a batch breaks a rule: magic other than 2, an
// unknown compression codec, a record offset delta outside int32, a
// record count that disagrees with the records, records that decompress
// beyond the bound, a control batch that cannot be read. Kafka:
// INVALID_RECORD.
var ErrInvalidRecord = errors.New("store/log: invalid record")

// errTooLarge reports records that decompress beyond the bound of a
// decompression; Decompressor returns it as ErrInvalidRecord.
var errTooLarge = errors.New("decompressed records exceed the limit")
