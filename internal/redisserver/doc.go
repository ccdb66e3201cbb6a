// Package redisserver starts and stops a throwaway redis-server, for the
// tests and the example of package fleet. The server listens on a free
// loopback port, keeps nothing on disk (no snapshot, no append-only file) and
// works in a directory of the caller's choosing; Debian's redis-server
// package provides the binary (.ci/run installs it).
package redisserver
