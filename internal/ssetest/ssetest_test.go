package ssetest

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestStreamWritesEachFrameAndHangsUp(t *testing.T) {
	s := NewStream()
	srv := httptest.NewServer(s)
	defer srv.Close()
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	assert.Equal(t, "text/event-stream;charset=UTF-8", resp.Header.Get("Content-Type"))
	lines := bufio.NewScanner(resp.Body)
	next := func() string {
		require.True(t, lines.Scan())
		return lines.Text()
	}
	assert.Equal(t, "ping: ", next())
	assert.Equal(t, "", next())

	require.NoError(t, s.Send(ctx, Data(`{"a":1}`), Data(`{"b":2}`)))
	for _, want := range []string{`data: {"a":1}`, "", `data: {"b":2}`, "", "ping: ", ""} {
		assert.Equal(t, want, next())
	}
	assert.Equal(t, int32(1), s.Connections())
	assert.Equal(t, int32(1), s.Serving())

	require.NoError(t, s.HangUp(ctx))
	assert.False(t, lines.Scan(), "the connection ended")
}

func TestStreamSendGivesUpWithoutAConnection(t *testing.T) {
	s := NewStream()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, s.Send(ctx, Data("x")), context.Canceled)
	assert.ErrorIs(t, s.HangUp(ctx), context.Canceled)
	s.Close()
	s.Close() // again: nothing
}
