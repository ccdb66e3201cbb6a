package redisserver

import (
	"bufio"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ping sends PING to addr and returns the reply line, or the error.
func ping(addr string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return "", err
	}
	return bufio.NewReader(conn).ReadString('\n')
}

func TestStartStopRestart(t *testing.T) {
	s, err := Start(t.TempDir())
	require.NoError(t, err, "tests of package fleet need redis-server")
	defer s.Stop()
	reply, err := ping(s.Addr)
	require.NoError(t, err)
	assert.Equal(t, "+PONG\r\n", reply)

	require.NoError(t, s.Stop())
	_, err = ping(s.Addr)
	assert.Error(t, err, "a stopped server refuses connections")

	require.NoError(t, s.Restart())
	reply, err = ping(s.Addr)
	require.NoError(t, err)
	assert.Equal(t, "+PONG\r\n", reply, "a restarted server answers on the same address")
}
