package log

import (
	"errors"
	"sync"
	"testing"

	"github.com/klogdev/klog/store/log/logtest"
	"github.com/klogdev/klog/store/log/record"
)

// TestConcurrentReadersAndWriter appends, rolls and deletes segments while
// readers follow the log; every read must return whole, valid batches in
// offset order, or ErrOffsetOutOfRange when retention overtook the reader.
func TestConcurrentReadersAndWriter(t *testing.T) {
	e := newEnv(t)
	e.cfg.SegmentBytes = 2000
	e.cfg.IndexIntervalBytes = 200
	e.cfg.RetentionBytes = 6000
	l := e.open(0)
	defer l.Close()
	const total = 400
	done := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for r := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			off := int64(0)
			var buf []byte
			for {
				end := l.EndOffset()
				if off >= total && end >= total {
					return
				}
				b, err := l.Read(buf[:0], off, 1000+r*500, end, true)
				if errors.Is(err, ErrOffsetOutOfRange) {
					off = l.StartOffset()
					continue
				}
				if err != nil {
					errs <- err
					return
				}
				buf = b
				for _, bt := range logtest.Split(b) {
					if err := record.Batch(bt).CheckCRC(); err != nil {
						errs <- err
						return
					}
					if base := logtest.BaseOffset(bt); base+int64(logtest.RecordCount(bt)) <= off {
						errs <- errors.New("batch before requested offset")
						return
					}
					off = logtest.BaseOffset(bt) + int64(logtest.RecordCount(bt))
				}
				if len(b) == 0 {
					select {
					case <-done:
						if off >= l.EndOffset() {
							return
						}
					default:
					}
				}
			}
		}()
	}
	for i := 0; i < total; i += 2 {
		mustAppend(t, l, e.batch(2, 50), 0)
		if i%20 == 0 {
			if _, err := l.ApplyRetention(e.clk.Now()); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}
