package browsertest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// A chromium that exits at its first launch is launched again.
func TestStartRetriesALaunchThatFails(t *testing.T) {
	if _, err := os.Stat(ChromiumPath); err != nil {
		t.Skipf("needs chromium at %s", ChromiumPath)
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "launched")
	script := filepath.Join(dir, "chromium")
	require.NoError(t, os.WriteFile(script, []byte("#!/bin/sh\n"+
		"if [ ! -e "+marker+" ]; then touch "+marker+"; exit 1; fi\n"+
		"exec "+ChromiumPath+" \"$@\"\n"), 0o755))
	ctx := startAt(t, script)
	_, err := chromedp.Run(ctx, chromedp.Navigate("about:blank"))
	require.NoError(t, err)
	require.FileExists(t, marker, "the first launch ran and failed")
}
