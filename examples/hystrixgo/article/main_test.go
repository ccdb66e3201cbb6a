package main

import (
	"testing"

	"go.uber.org/goleak"
)

// The article's code never closes the responses http.Get returns, so their
// connections stay open (a leak of the article's, kept as it wrote it);
// nothing else may be left running.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"))
}

// The article's first experiment: of fifteen concurrent calls of a command
// that admits ten, ten succeed and five are answered by the fallback.
func TestFifteenCallsTenAdmitted(t *testing.T) {
	url, stop, err := serve("")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	ok, fallbacks := run(url, 15)
	if ok != 10 || fallbacks != 5 {
		t.Fatalf("%d succeeded and %d fell back, want 10 and 5", ok, fallbacks)
	}
}
