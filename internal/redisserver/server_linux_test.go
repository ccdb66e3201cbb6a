package redisserver

import (
	"bufio"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A redis-server that exits before it is ready (here: its directory does
// not exist) fails Start as soon as it has exited, with what it said, not
// after startTimeout.
func TestStartFailsOnceTheServerHasExited(t *testing.T) {
	began := time.Now()
	s, err := Start(t.TempDir() + "/missing")
	if s != nil {
		t.Cleanup(func() { _ = s.Stop() })
	}
	require.Error(t, err)
	assert.Contains(t, err.Error(), "No such file or directory", "the error tells what redis-server said")
	assert.NotContains(t, err.Error(), "not ready after", "the server had exited: nothing was left to wait for")
	assert.Less(t, time.Since(began), startTimeout/2, "Start waited for a server that had exited")
}

// A failed Restart reports what the new server said, not what the first
// one said on its way up.
func TestFailedRestartReportsOnlyItsOwnOutput(t *testing.T) {
	s, err := Start(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Stop() })
	require.NoError(t, s.Stop())
	ln, err := net.Listen("tcp", s.Addr) // the port is taken meanwhile
	require.NoError(t, err)
	defer ln.Close()
	err = s.Restart()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Address already in use")
	assert.Equal(t, 1, strings.Count(err.Error(), "Redis is starting"), "output of one server: %v", err)
}

const orphanEnv = "REDISSERVER_ORPHAN_DIR"

// TestHelperStartThenDie is the test binary that starts a server and
// dies without stopping it, as a test binary does on a panic in any
// goroutine or on go test's -timeout: no cleanup runs.
func TestHelperStartThenDie(t *testing.T) {
	dir := os.Getenv(orphanEnv)
	if dir == "" {
		t.Skip("helper of TestServerDiesWithTheProcessThatStartedIt")
	}
	s, err := Start(dir)
	if err != nil {
		os.Stdout.WriteString("error " + err.Error() + "\n")
		os.Exit(2)
	}
	os.Stdout.WriteString("pid " + strconv.Itoa(s.cmd.Process.Pid) + "\n")
	os.Exit(3)
}

// A server outlives no test binary: one that dies without Stop (a panic,
// go test's -timeout, a kill) takes its redis-server with it, instead of
// leaving it listening for good.
func TestServerDiesWithTheProcessThatStartedIt(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^TestHelperStartThenDie$")
	child.Env = append(os.Environ(), orphanEnv+"="+t.TempDir())
	out, err := child.Output()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "the helper exits with an error: %v, %s", err, out)
	line, _ := bufio.NewReader(strings.NewReader(string(out))).ReadString('\n')
	pidText, ok := strings.CutPrefix(strings.TrimSpace(line), "pid ")
	require.True(t, ok, "the helper started a server: %s", out)
	pid, err := strconv.Atoi(pidText)
	require.NoError(t, err)
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }) // when the test fails

	// The kernel signals the orphan as its parent dies; wait until it has
	// gone (or is a zombie for its new parent to reap).
	deadline := time.Now().Add(5 * time.Second)
	for alive(pid) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	assert.False(t, alive(pid), "redis-server %d outlived the process that started it", pid)
}

// alive reports whether process pid exists and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces, the state follows its ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
