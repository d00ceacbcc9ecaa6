// Package natstest starts embedded NATS servers with JetStream for tests:
// one per test, on 127.0.0.1, on a port of the system's choosing, with its
// store in a temporary directory, shut down when the test ends.
package natstest

import (
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// readyTimeout bounds how long Server waits for the server to accept
// connections; it is ready in milliseconds, so reaching it means it failed.
const readyTimeout = 30 * time.Second

// Server starts an embedded NATS server with JetStream on 127.0.0.1 and a
// random free port, storing its streams in t.TempDir(). It fails t if the
// server does not start. At t's cleanup it shuts the server down and waits
// until it has. Connect with s.ClientURL().
func Server(t testing.TB) *server.Server {
	t.Helper()
	return start(t, -1, t.TempDir())
}

// Restart shuts s down, waits until it has, and starts a new server on the
// same port with the same store, so that clients connected to s reconnect
// to it and find its streams. The new server is shut down at t's cleanup.
// s must have been started by Server or Restart.
func Restart(t testing.TB, s *server.Server) *server.Server {
	t.Helper()
	addr, ok := s.Addr().(*net.TCPAddr)
	if !ok {
		t.Fatalf("natstest: Restart: server has no TCP listener")
	}
	// JetStreamConfig's StoreDir is the one Server gave, with the
	// server's own subdirectory added.
	dir := filepath.Dir(s.JetStreamConfig().StoreDir)
	s.Shutdown()
	s.WaitForShutdown()
	return start(t, addr.Port, dir)
}

func start(t testing.TB, port int, dir string) *server.Server {
	t.Helper()
	s, err := server.NewServer(&server.Options{
		Host:      "127.0.0.1",
		Port:      port,
		JetStream: true,
		StoreDir:  dir,
		NoLog:     true,
		NoSigs:    true,
	})
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	s.Start()
	t.Cleanup(func() {
		s.Shutdown()
		s.WaitForShutdown()
	})
	if !s.ReadyForConnections(readyTimeout) {
		t.Fatalf("natstest: server not ready for connections after %v", readyTimeout)
	}
	return s
}
