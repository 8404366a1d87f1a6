package txn

import "unicode/utf16"

// PartitionFor returns the __transaction_state partition that holds
// transactionalID, as Kafka computes it: the Java String.hashCode of the id
// (over UTF-16 code units, int32 overflow), made non-negative with Kafka's
// Utils.abs (math.MinInt32 maps to 0, every other value to its absolute
// value), modulo partitions.
func PartitionFor(transactionalID string, partitions int32) int32 {
	if partitions <= 0 {
		return 0
	}
	var h int32
	for _, u := range utf16.Encode([]rune(transactionalID)) {
		h = 31*h + int32(u)
	}
	switch {
	case h == -1<<31:
		h = 0
	case h < 0:
		h = -h
	}
	return h % partitions
}
