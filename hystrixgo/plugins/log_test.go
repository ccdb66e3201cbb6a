package plugins

import (
	"log"
	"testing"
	"time"
)

// logLines is the standard logger's output while a test runs, one write
// (one log line) a receive; lines past the channel's buffer are dropped.
type logLines chan string

func (l logLines) Write(p []byte) (int, error) {
	select {
	case l <- string(p):
	default:
	}
	return len(p), nil
}

// captureLog sends the standard logger's output to the returned channel
// until the test ends.
func captureLog(t *testing.T) logLines {
	t.Helper()
	lines := make(logLines, 64)
	out, flags := log.Writer(), log.Flags()
	log.SetOutput(lines)
	log.SetFlags(0)
	t.Cleanup(func() {
		log.SetOutput(out)
		log.SetFlags(flags)
	})
	return lines
}

// next returns the next line logged, failing the test if none comes.
func (l logLines) next(t *testing.T) string {
	t.Helper()
	select {
	case s := <-l:
		return s
	case <-time.After(10 * time.Second):
		t.Fatal("nothing was logged")
		return ""
	}
}
