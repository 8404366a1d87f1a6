package share_test

import (
	"errors"
	"testing"

	"github.com/klogdev/klog/broker/share"
)

func TestSessionEpochs(t *testing.T) {
	s := share.NewSessions(2, 3)
	key := share.SessionKey{Group: "g", Member: "m"}
	tp := func(p int32) share.TopicPartition { return share.TopicPartition{TopicID: [16]byte{1}, Partition: p} }

	if _, err := s.Next(key, 1, nil, nil); !errors.Is(err, share.ErrSessionNotFound) {
		t.Fatalf("next without a session: %v", err)
	}
	if err := s.Open(key, []share.TopicPartition{tp(0)}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(key, 2, nil, nil); !errors.Is(err, share.ErrInvalidSessionEpoch) {
		t.Fatalf("epoch 2 first: %v", err)
	}
	parts, err := s.Next(key, 1, []share.TopicPartition{tp(1)}, nil)
	if err != nil || len(parts) != 2 {
		t.Fatalf("epoch 1: %v %v", parts, err)
	}
	if _, err := s.Next(key, 1, nil, nil); !errors.Is(err, share.ErrInvalidSessionEpoch) {
		t.Fatalf("epoch 1 again: %v", err)
	}
	if err := s.Ack(key, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Ack(key, 0); !errors.Is(err, share.ErrInvalidSessionEpoch) {
		t.Fatalf("acknowledge at epoch 0: %v", err)
	}
	parts, err = s.Next(key, 3, nil, []share.TopicPartition{tp(0)})
	if err != nil || len(parts) != 1 || parts[0] != tp(1) {
		t.Fatalf("forget: %v %v", parts, err)
	}
	if _, err := s.Next(key, 4, []share.TopicPartition{tp(2), tp(3), tp(4)}, nil); !errors.Is(err, share.ErrSessionTooLarge) {
		t.Fatalf("past the partition bound: %v", err)
	}
	// The refused request changed nothing: epoch 4 is still next.
	if _, err := s.Next(key, 4, nil, nil); err != nil {
		t.Fatal(err)
	}

	// The limit counts sessions; reopening one's own is not a new one.
	if err := s.Open(share.SessionKey{Group: "g", Member: "n"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Open(share.SessionKey{Group: "g", Member: "o"}, nil); !errors.Is(err, share.ErrSessionLimit) {
		t.Fatalf("third session of two: %v", err)
	}
	if err := s.Open(key, nil); err != nil {
		t.Fatalf("reopening: %v", err)
	}
	if _, err := s.Close(key); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Close(key); !errors.Is(err, share.ErrSessionNotFound) {
		t.Fatalf("closing twice: %v", err)
	}
}
