package clock

import (
	"errors"
	"sync"
	"testing"
	"time"
)

// TestAdvance: Now runs ahead by what was advanced, concurrent advances
// all count, and the clock never goes back.
func TestAdvance(t *testing.T) {
	c := New()
	before := time.Now()
	if off, err := c.Advance(2 * time.Hour); err != nil || off != 2*time.Hour {
		t.Fatalf("Advance(2h) = %v, %v", off, err)
	}
	if got := c.Now().Sub(before); got < 2*time.Hour || got > 2*time.Hour+time.Minute {
		t.Fatalf("Now is %v after the start, want 2h", got)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if _, err := c.Advance(time.Second); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if got, want := c.Offset(), 2*time.Hour+800*time.Second; got != want {
		t.Fatalf("offset %v, want %v", got, want)
	}
	if _, err := c.Advance(-time.Second); !errors.Is(err, ErrBackwards) {
		t.Fatalf("Advance(-1s) = %v, want ErrBackwards", err)
	}
	if _, err := c.Advance(time.Duration(maxOffset)); err == nil {
		t.Fatal("an advance past the bound was taken")
	}
	if got, want := c.Offset(), 2*time.Hour+800*time.Second; got != want {
		t.Fatalf("refused advances moved the clock to %v", got)
	}
	var nilClock *Clock
	if d := time.Since(nilClock.Now()); d < 0 || d > time.Minute || nilClock.Offset() != 0 {
		t.Fatalf("a nil clock is not the wall clock")
	}
}
