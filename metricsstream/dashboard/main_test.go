package dashboard

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no test leaves a goroutine behind: not the test
// servers' nor the fake streams', and not chromedp's, whose goroutines end
// when the browser test cancels its allocator.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
