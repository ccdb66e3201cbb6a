// Package browsertest starts the headless chromium that the browser tests
// of the dashboard and of the demo drive, and saves the screenshots they
// take.
//
// Every function takes the test it serves: a browser, a tab and the
// temporary profile are all released by the test's cleanups, so a test that
// uses this package leaves no process or goroutine behind for goleak to
// find. A test whose machine has no chromium is skipped with a hint saying
// how to install it, not failed.
package browsertest
