package wire

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	"github.com/klogdev/klog/internal/testkit"
)

// large is the size of a frame in the pool's large class.
const large = SmallFrameBytes + 1

func TestPoolWaitsAndServesInOrder(t *testing.T) {
	p := NewPool(10)
	if !p.TryAcquire(large, 8) {
		t.Fatal("TryAcquire(8) of 10 failed")
	}
	if p.TryAcquire(large, 3) {
		t.Fatal("TryAcquire(3) with 2 free succeeded")
	}
	first, second := make(chan error), make(chan error)
	go func() { first <- p.Acquire(context.Background(), large, 5) }()
	waitWaiters(t, p, 1)
	go func() { second <- p.Acquire(context.Background(), large, 1) }()
	waitWaiters(t, p, 2)
	// One byte is free, but the 1-byte request queues behind the 5-byte one.
	if p.TryAcquire(large, 1) {
		t.Fatal("TryAcquire jumped the queue")
	}
	p.ReleaseFrame(large, 8)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if got := p.Reserved(); got != 6 {
		t.Fatalf("reserved %d, want 6", got)
	}
}

func TestPoolAcquireCancelled(t *testing.T) {
	p := NewPool(10)
	p.TryAcquire(large, 10)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- p.Acquire(ctx, large, 4) }()
	waitWaiters(t, p, 1)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire after cancel: %v", err)
	}
	p.ReleaseFrame(large, 10)
	if got := p.Reserved(); got != 0 {
		t.Fatalf("reserved %d after the cancelled waiter, want 0", got)
	}
	if err := p.Acquire(context.Background(), large, 11); !errors.Is(err, ErrPoolTooSmall) {
		t.Fatalf("Acquire beyond the limit: %v", err)
	}
}

// A small frame is granted at once while large frames hold the pool to
// its limit and more wait, and the large ones are still served in order
// once bytes are freed (issue 9, slowloris: a client's ApiVersions waited
// behind stalled 100 MiB frames until it timed out).
func TestPoolSmallFramesPassLargeWaiters(t *testing.T) {
	const limit = 1 << 20
	p := NewPool(limit)
	if !p.TryAcquire(100<<20, limit) {
		t.Fatal("TryAcquire of the whole limit failed")
	}
	first, second := make(chan error, 1), make(chan error, 1)
	go func() { first <- p.Acquire(context.Background(), large, 100) }()
	waitWaiters(t, p, 1)
	go func() { second <- p.Acquire(context.Background(), large, 50) }()
	waitWaiters(t, p, 2)

	// An ApiVersions request: its first bites, then the rest.
	if !p.TryAcquire(50, 10) {
		t.Fatal("a small frame waited behind large ones")
	}
	if err := p.Acquire(context.Background(), 50, 40); err != nil {
		t.Fatal(err)
	}
	// A small frame may use the whole headroom, and no more.
	if !p.TryAcquire(SmallFrameBytes, p.Headroom()-50) {
		t.Fatal("a small frame could not use the headroom")
	}
	if p.TryAcquire(SmallFrameBytes, 1) {
		t.Fatal("a small frame went past the headroom")
	}
	if p.TryAcquire(large, 1) {
		t.Fatal("a large frame jumped the queue")
	}
	p.ReleaseFrame(SmallFrameBytes, p.Headroom()-50)
	p.ReleaseFrame(50, 50)

	// The small frames' bytes went back to the headroom; the large
	// waiters get bytes of the limit, in order.
	select {
	case err := <-first:
		t.Fatalf("a large waiter was granted bytes only small frames freed: %v", err)
	default:
	}
	p.ReleaseFrame(100<<20, 120)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	waitWaiters(t, p, 1)
	p.ReleaseFrame(100<<20, 30)
	if err := <-second; err != nil {
		t.Fatal(err)
	}
	if got := p.Reserved(); got != limit {
		t.Fatalf("reserved %d, want %d", got, limit)
	}
}

// A steady stream of small frames does not starve a large one: while a
// large frame waits, small ones together get no more than the headroom,
// so what they free beyond it goes to the large one.
func TestPoolSmallFramesCannotStarveLarge(t *testing.T) {
	const limit = 1 << 20
	p := NewPool(limit)
	held := 0
	for p.TryAcquire(SmallFrameBytes, SmallFrameBytes) {
		held++
	}
	if want := int((limit + p.Headroom()) / SmallFrameBytes); held != want {
		t.Fatalf("%d small frames of %d bytes fit, want %d", held, SmallFrameBytes, want)
	}
	done := make(chan error, 1)
	go func() { done <- p.Acquire(context.Background(), large, limit/2) }()
	waitWaiters(t, p, 1)
	for i := range held {
		// One small request done, the next one arrives.
		p.ReleaseFrame(SmallFrameBytes, SmallFrameBytes)
		if p.TryAcquire(SmallFrameBytes, SmallFrameBytes) {
			continue
		}
		p.mu.Lock()
		waiting := len(p.mu.waiting)
		p.mu.Unlock()
		if waiting == 0 {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			t.Logf("large frame granted after %d of %d small frames were done", i+1, held)
			return
		}
	}
	t.Fatal("small frames kept the large one waiting")
}

func waitWaiters(t *testing.T, p *Pool, n int) {
	t.Helper()
	testkit.WaitFor(t, fmt.Sprintf("%d waiters", n), func() (bool, string) {
		got := p.Waiting()
		return got == n, fmt.Sprintf("%d waiters", got)
	})
}

// ReadFrame reserves what has arrived, not what the size prefix claims,
// and stops reading while reserve waits.
func TestReadFrameReservesAsBytesArrive(t *testing.T) {
	const size = 1 << 20
	pr, pw := io.Pipe()
	type result struct {
		frame    []byte
		reserved int
		err      error
	}
	asked := make(chan int)
	granted := make(chan struct{})
	done := make(chan result, 1)
	go func() {
		total := 0
		f, n, err := ReadFrame(bufio.NewReaderSize(pr, 4096), size, nil, func(frame, n int) error {
			if frame != size {
				t.Errorf("reserve told of a %d-byte frame, want %d", frame, size)
			}
			total += n
			asked <- total
			<-granted
			return nil
		})
		done <- result{f, n, err}
	}()
	if _, err := pw.Write(binary.BigEndian.AppendUint32(nil, size)); err != nil {
		t.Fatal(err)
	}
	go pw.Write(make([]byte, 100))
	if got := <-asked; got != 100 {
		t.Fatalf("reserved %d for the first 100 bytes of a %d-byte frame", got, size)
	}
	granted <- struct{}{}
	// Feed the rest; each reservation covers at most twice what arrived.
	// A pipe write returns once read, so what arrived is at most what was
	// written plus the write under way.
	var written atomic.Int64
	written.Store(100)
	go func() {
		for sent := 100; sent < size; sent += 4096 {
			n, _ := pw.Write(make([]byte, min(4096, size-sent)))
			written.Add(int64(n))
		}
	}()
	for {
		select {
		case total := <-asked:
			if arrived := int(written.Load()) + 4096; total > 2*arrived {
				t.Fatalf("reserved %d with at most %d bytes arrived", total, arrived)
			}
			granted <- struct{}{}
		case r := <-done:
			if r.err != nil || len(r.frame) != size || r.reserved != size {
				t.Fatalf("frame of %d bytes, reserved %d, err %v", len(r.frame), r.reserved, r.err)
			}
			return
		}
	}
}

// Take goes past the pool's limit, and Over tells a caller at the limit
// when bytes are released.
func TestPoolTakeAndOver(t *testing.T) {
	p := NewPool(10)
	if over, _ := p.Over(); over {
		t.Fatal("empty pool over its limit")
	}
	p.Take(6)
	p.Take(6)
	if got := p.Reserved(); got != 12 {
		t.Fatalf("used %d after taking 6 twice, want 12", got)
	}
	over, freed := p.Over()
	if !over {
		t.Fatal("pool of 10 holding 12 not over")
	}
	select {
	case <-freed:
		t.Fatal("freed before anything was released")
	default:
	}
	p.Release(1)
	select {
	case <-freed:
	default:
		t.Fatal("a release did not close the channel Over returned")
	}
	if over, _ := p.Over(); !over {
		t.Fatal("pool of 10 holding 11 not over")
	}
	p.Release(1)
	if over, _ := p.Over(); !over {
		t.Fatal("pool at its limit not over")
	}
	p.Release(1)
	if over, _ := p.Over(); over {
		t.Fatal("pool of 10 holding 9 over")
	}
}

// TakeUpTo stops at the limit; TakeIfAlone goes past it only for a caller
// whose own bytes are all the pool holds.
func TestPoolTakeUpToAndTakeIfAlone(t *testing.T) {
	p := NewPool(10)
	if got := p.TakeUpTo(6); got != 6 {
		t.Fatalf("TakeUpTo(6) of an empty pool of 10 took %d", got)
	}
	if got := p.TakeUpTo(6); got != 4 {
		t.Fatalf("TakeUpTo(6) with 4 free took %d", got)
	}
	if got := p.TakeUpTo(1); got != 0 {
		t.Fatalf("TakeUpTo(1) of a full pool took %d", got)
	}
	if p.TakeIfAlone(1, 6) {
		t.Fatal("TakeIfAlone past the limit while others hold bytes")
	}
	p.Release(4)
	if !p.TakeIfAlone(3, 0) {
		t.Fatal("TakeIfAlone refused bytes that fit")
	}
	if !p.TakeIfAlone(20, 9) {
		t.Fatal("TakeIfAlone refused the caller holding all of the pool")
	}
	if got := p.Reserved(); got != 29 {
		t.Fatalf("reserved %d, want 29", got)
	}
	freed := p.Freed()
	p.Release(29)
	select {
	case <-freed:
	default:
		t.Fatal("a release did not close the channel Freed returned")
	}
}

// TakeAlone lets one caller at a time past the limit, counting only what
// is left below it, so that small frames keep their headroom; and the
// next only once the pool is below its limit again: what the previous one
// kept (a decoded Produce, while it is handled) is given back first.
func TestPoolTakeAloneWaitsForThePool(t *testing.T) {
	p := NewPool(10)
	p.TryAcquire(large, 4)
	if took, err := p.TakeAlone(context.Background(), 30); err != nil || took != 6 {
		t.Fatalf("TakeAlone of 30 with 6 free took %d (%v), want 6", took, err)
	}
	if !p.TryAcquire(SmallFrameBytes, 1) {
		t.Fatal("a small frame was refused its headroom while a caller was past the pool")
	}
	p.ReleaseFrame(SmallFrameBytes, 1)
	p.Take(6) // the caller keeps 12 (counted, as Take would), past the limit
	p.DoneAlone()
	done := make(chan error, 1)
	go func() {
		_, err := p.TakeAlone(context.Background(), 30)
		done <- err
	}()
	testkit.WaitFor(t, "the second caller to wait for the pool", func() (bool, string) {
		select {
		case err := <-done:
			t.Fatalf("TakeAlone took its bytes with %d of 10 taken (%v)", p.Reserved(), err)
		default:
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.mu.freed != nil, ""
	})
	p.Release(12)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := p.Reserved(); got != 10 {
		t.Fatalf("reserved %d, want 10: the 4 acquired and 6 up to the limit", got)
	}
}
