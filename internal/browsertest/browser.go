package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// ChromiumPath is where Debian's chromium package installs the browser.
// Start looks there first, then for chromium on the PATH.
const ChromiumPath = "/usr/bin/chromium"

// Start starts a headless chromium with a fresh profile in t's temporary
// directory and returns the context of its first tab. The browser is
// closed, and its process and chromedp's goroutines have ended, when t's
// cleanups run. Without chromium, t is skipped with a hint saying how to
// install it.
//
// The returned context bounds the browser's whole life, so it has no
// deadline: callers bound each step themselves.
func Start(t testing.TB) context.Context {
	t.Helper()
	path := ChromiumPath
	if _, err := os.Stat(path); err != nil {
		p, lookErr := exec.LookPath("chromium")
		if lookErr != nil {
			t.Skipf("browser test needs chromium at %s: apt-get update && apt-get install -y chromium", ChromiumPath)
		}
		path = p
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(filepath.Join(t.TempDir(), "profile")),
		chromedp.WindowSize(1280, 1000),
	)
	ctx, cancel := chromedp.NewContext(allocCtx)
	// Cancelling the first tab closes the browser; cancelling the
	// allocator then waits until the process and chromedp's goroutines
	// have ended, before goleak looks and before TempDir is removed.
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// The first run starts the browser; it gets no timeout, because its
	// context bounds the browser's whole life.
	require.NoError(t, chromedp.Do(ctx), "start chromium")
	return ctx
}

// NewTab opens a tab in the browser of the context Start returned and
// returns the tab's context. The tab is closed when t's cleanups run.
func NewTab(t testing.TB, browser context.Context) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(browser)
	t.Cleanup(cancel)
	require.NoError(t, chromedp.Do(tab), "open a tab")
	return tab
}
