package share

import "errors"

// ErrInvalidRecordState refuses an acknowledgement of a record that is not
// acquired by the member acknowledging it: never acquired, outside the
// in-flight window, acquired by another member, already acknowledged, or
// whose lock lapsed (INVALID_RECORD_STATE).
var ErrInvalidRecordState = errors.New("share: record not acquired by the member")

// ErrInvalidAcks refuses acknowledgement batches malformed in themselves:
// last before first, overlapping or out of order, a type list of the wrong
// length, an unknown type (INVALID_REQUEST).
var ErrInvalidAcks = errors.New("share: invalid acknowledgement batches")

// ErrSessionNotFound means no share session is open for the group and
// member (SHARE_SESSION_NOT_FOUND).
var ErrSessionNotFound = errors.New("share: no share session")

// ErrInvalidSessionEpoch means a request's share session epoch is not the
// session's next one (INVALID_SHARE_SESSION_EPOCH).
var ErrInvalidSessionEpoch = errors.New("share: share session epoch out of order")

// ErrSessionLimit refuses a new share session when the node holds its
// limit of them (SHARE_SESSION_LIMIT_REACHED).
var ErrSessionLimit = errors.New("share: share session limit reached")

// ErrSessionTooLarge refuses a share session growing past the partitions a
// session may name (INVALID_REQUEST; klog's bound).
var ErrSessionTooLarge = errors.New("share: share session names too many partitions")
