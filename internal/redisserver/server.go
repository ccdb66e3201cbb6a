package redisserver

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// ErrNotInstalled is returned by Start when no redis-server is on the
// PATH.
var ErrNotInstalled = errors.New("redisserver: redis-server is not on the PATH: install it with apt-get install -y redis-server (.ci/run does)")

// readyLine is what redis-server logs once it accepts connections.
const readyLine = "Ready to accept connections"

// startTimeout bounds how long Start waits for the server to be ready.
const startTimeout = 10 * time.Second

// Server is a running redis-server. Stop it when done.
type Server struct {
	// Addr is the server's host:port on the loopback interface.
	Addr string
	dir  string
	port int

	mu   sync.Mutex
	cmd  *exec.Cmd
	logs sync.WaitGroup // the goroutine that drains the server's output
	tail []string       // the latest output lines, for errors
}

// Start starts a redis-server on a free loopback port working in dir and
// returns once it accepts connections.
func Start(dir string) (*Server, error) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		return nil, ErrNotInstalled
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, port: port}
	if err := s.start(); err != nil {
		return nil, err
	}
	return s, nil
}

// freePort returns a loopback port nobody listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("redisserver: finding a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Restart starts the server again, on the same port, after Stop. Its data
// is gone: nothing was kept on disk.
func (s *Server) Restart() error { return s.start() }

func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		return errors.New("redisserver: server is running")
	}
	cmd := exec.Command("redis-server",
		"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", s.dir)
	dieWithParent(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = cmd.Stdout
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("redisserver: starting redis-server: %w", err)
	}
	s.tail = nil // the previous server's drain has ended (Stop waited)
	ready, ended := make(chan struct{}), make(chan struct{})
	s.logs.Add(1)
	go s.drain(out, ready, ended)
	problem := fmt.Sprintf("not ready after %v", startTimeout)
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case <-ready:
		s.cmd = cmd
		return nil
	case <-ended:
		problem = "exited before it was ready"
	case <-timer.C:
	}
	_ = cmd.Process.Kill()
	s.logs.Wait() // the output ends with the process
	_ = cmd.Wait()
	return fmt.Errorf("redisserver: redis-server on port %d %s: %s", s.port, problem, strings.Join(s.tail, " | "))
}

// drain reads the server's output until it ends, closing ready at the
// line that says the server accepts connections, and ended once the
// output has ended (the server has exited, or closed it).
func (s *Server) drain(out io.Reader, ready, ended chan struct{}) {
	defer s.logs.Done()
	defer close(ended)
	sc := bufio.NewScanner(out)
	signalled := false
	for sc.Scan() {
		line := sc.Text()
		if !signalled && strings.Contains(line, readyLine) {
			close(ready)
			signalled = true
		}
		if !signalled {
			s.tail = append(s.tail, line)
		}
	}
	_, _ = io.Copy(io.Discard, out)
}

// Stop kills the server and waits for it to exit. Stopping a stopped
// server does nothing.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		return nil
	}
	_ = s.cmd.Process.Kill()
	s.logs.Wait()    // the output ends with the process
	_ = s.cmd.Wait() // killed: the exit status says so
	s.cmd = nil
	return nil
}
