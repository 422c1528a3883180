package testkit

import (
	"strings"
	"sync"
	"testing"
)

// TestSyncBufferConcurrentWrites writes from several goroutines while reading; under -race a
// buffer without its lock fails, and every byte written must be there at the end.
func TestSyncBufferConcurrentWrites(t *testing.T) {
	tests := []struct {
		name            string
		writers, writes int
	}{
		{"one writer", 1, 100},
		{"eight writers", 8, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b SyncBuffer
			var wg sync.WaitGroup
			for range tt.writers {
				wg.Go(func() {
					for range tt.writes {
						if _, err := b.Write([]byte("x\n")); err != nil {
							t.Error(err)
							return
						}
						_ = b.String()
					}
				})
			}
			wg.Wait()
			if got, want := strings.Count(b.String(), "x\n"), tt.writers*tt.writes; got != want {
				t.Errorf("buffer holds %d writes, want %d", got, want)
			}
		})
	}
}
