package cli

import (
	"bytes"
	"sync"
	"time"
)

// receiverWait bounds the receiver test's waits: generous, for a loaded
// machine; pollEvery is how often it looks.
const (
	receiverWait = 30 * time.Second
	pollEvery    = 10 * time.Millisecond
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader in two
// goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
