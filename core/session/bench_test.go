package session

import (
	"fmt"
	"path/filepath"
	"testing"
)

// bigSession writes a 10,000-entry session (user/assistant pairs with a
// compaction halfway) and returns its path.
func bigSession(b *testing.B) string {
	b.Helper()
	s := InMemory("/bench")
	var keep string
	for i := range 4999 {
		id, err := s.AppendMessage(user(fmt.Sprintf("question %d: please look at the file and tell me what it does", i)))
		if err != nil {
			b.Fatal(err)
		}
		if i == 3000 {
			keep = id
		}
		if _, err := s.AppendMessage(assistant(fmt.Sprintf("answer %d: it reads the configuration and starts the server", i))); err != nil {
			b.Fatal(err)
		}
		if i == 3500 {
			if _, err := s.AppendCompaction("summary of the first 3000 turns", keep, 120000, nil, false, nil); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := s.AppendSessionInfo("bench"); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "big.jsonl")
	s.mu.Lock()
	s.path = path
	err := s.sync()
	s.mu.Unlock()
	if err != nil {
		b.Fatal(err)
	}
	return path
}

func BenchmarkOpen(b *testing.B) {
	path := bigSession(b)
	b.ReportAllocs()
	for b.Loop() {
		s, _, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if len(s.Entries()) != 10000 {
			b.Fatalf("got %d entries", len(s.Entries()))
		}
	}
}

func BenchmarkContext(b *testing.B) {
	s, _, err := Open(bigSession(b))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ctx := s.Context()
		if len(ctx.Messages) == 0 {
			b.Fatal("empty context")
		}
		_ = ConvertToLLM(ctx.Messages)
	}
}

func BenchmarkList(b *testing.B) {
	dir := filepath.Dir(bigSession(b))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := List(dir); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAppend is one message written to a session file that already
// holds some: with issue 25's write path (open, lock, check what the file
// holds, append, close) rather than a bare O_APPEND write.
func BenchmarkAppend(b *testing.B) {
	s, err := Create(b.TempDir(), "/bench", Options{})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.AppendMessage(user("start")); err != nil {
		b.Fatal(err)
	}
	if _, err := s.AppendMessage(assistant("the file exists from here on")); err != nil {
		b.Fatal(err)
	}
	msg := assistant("answer: it reads the configuration and starts the server")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.AppendMessage(msg); err != nil {
			b.Fatal(err)
		}
	}
}
