package txn

import (
	"errors"
	"testing"
)

// TestRemoteErrorInvertsCode: an error another node's coordinator answered
// is the error the local coordinator would have returned.
func TestRemoteErrorInvertsCode(t *testing.T) {
	for _, want := range []error{ErrNotCoordinator, ErrLoadInProgress, ErrCoordinatorNotAvailable, ErrInvalidTxnState,
		ErrProducerFenced, ErrInvalidProducerEpoch, ErrInvalidProducerIDMapping, ErrConcurrentTransactions, ErrTimedOut} {
		if got := RemoteError(Code(want)); !errors.Is(got, want) {
			t.Errorf("RemoteError(Code(%v)) = %v", want, got)
		}
	}
	if err := RemoteError(0); err != nil {
		t.Errorf("RemoteError(0) = %v, want nil", err)
	}
}
