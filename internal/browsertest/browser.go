package browsertest

import (
	"context"
	"fmt"
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
	return startAt(t, path)
}

// startAt is Start with chromium at path.
func startAt(t testing.TB, path string) context.Context {
	t.Helper()
	// Chromium now and then exits at launch while the machine is loaded
	// (the test suite's packages run at once), printing nothing but its
	// usual warnings: a launch that fails is tried again, in a fresh
	// profile, before the test fails.
	const launches = 3
	var err error
	for i := range launches {
		ctx, stop := launch(t, path, i)
		// The first run starts the browser; it gets no timeout, because
		// its context bounds the browser's whole life.
		if err = chromedp.Do(ctx); err == nil {
			t.Cleanup(stop)
			return ctx
		}
		stop()
		t.Logf("chromium launch %d of %d failed: %v", i+1, launches, err)
	}
	require.NoError(t, err, "start chromium")
	return nil
}

// launch makes the allocator and first tab of a chromium at path with a
// profile of its own, and returns the tab's context and what closes the
// browser: cancelling the first tab closes it, and cancelling the
// allocator then waits until the process and chromedp's goroutines have
// ended, before goleak looks and before TempDir is removed.
func launch(t testing.TB, path string, n int) (context.Context, func()) {
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
		chromedp.UserDataDir(filepath.Join(t.TempDir(), fmt.Sprintf("profile-%d", n))),
		chromedp.WindowSize(1280, 1000),
	)
	ctx, cancel := chromedp.NewContext(allocCtx)
	return ctx, func() {
		cancel()
		cancelAlloc()
	}
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
