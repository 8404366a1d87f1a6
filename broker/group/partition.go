package group

import "unicode/utf16"

// PartitionFor returns the __consumer_offsets partition that holds group,
// as Kafka computes it: the Java String.hashCode of the group id (over UTF-16
// code units), made non-negative by masking the sign bit, modulo partitions.
func PartitionFor(group string, partitions int32) int32 {
	if partitions <= 0 {
		return 0
	}
	var h int32
	for _, u := range utf16.Encode([]rune(group)) {
		h = 31*h + int32(u)
	}
	return (h & 0x7fffffff) % partitions
}
