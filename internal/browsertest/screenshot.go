package browsertest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// ScreenshotEnv names the environment variable that asks a browser test to
// save its screenshot: its value is the file to write.
const ScreenshotEnv = "DASHBOARD_SCREENSHOT"

// ScreenshotFile returns the file that ScreenshotEnv names, or "" when it
// is unset or empty, in which case WriteScreenshot writes nothing.
func ScreenshotFile() string {
	return os.Getenv(ScreenshotEnv)
}

// Screenshot returns a PNG of the whole page of tab, taken at the best
// quality. It fails t when the page cannot be captured within timeout.
func Screenshot(t testing.TB, tab context.Context, timeout time.Duration) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(tab, timeout)
	defer cancel()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	require.NoError(t, err, "screenshot")
	return png
}

// WriteScreenshot writes png to the file that ScreenshotEnv names and logs
// where; without one it does nothing. It fails t when the file cannot be
// written.
func WriteScreenshot(t testing.TB, png []byte) {
	t.Helper()
	dst := ScreenshotFile()
	if dst == "" {
		return
	}
	require.NoError(t, os.WriteFile(dst, png, 0o644), ScreenshotEnv)
	t.Logf("screenshot written to %s", dst)
}
