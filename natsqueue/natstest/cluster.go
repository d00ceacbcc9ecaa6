package natstest

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// Cluster starts n embedded NATS servers with JetStream on 127.0.0.1 that
// form one JetStream cluster, each on random free client and cluster
// ports with its store in t.TempDir(), and returns once every server
// accepts connections and the cluster has elected its meta leader, so
// that streams can be created. It fails t otherwise. At t's cleanup it
// shuts every server down (those still running) and waits until they
// have. Connect with every server's ClientURL, joined by commas, so that
// a client reconnects to another when its server is lost.
func Cluster(t testing.TB, n int) []*server.Server {
	t.Helper()
	if n < 1 {
		t.Fatalf("natstest: Cluster: n must be at least 1, got %d", n)
	}
	ports := make([]int, n)
	for i := range ports {
		ports[i] = freePort(t)
	}
	name := fmt.Sprintf("natstest-%d", time.Now().UnixNano())
	servers := make([]*server.Server, n)
	for i := range servers {
		var routes []*url.URL
		for j, p := range ports {
			if j != i {
				routes = append(routes, &url.URL{Scheme: "nats-route", Host: fmt.Sprintf("127.0.0.1:%d", p)})
			}
		}
		s, err := server.NewServer(&server.Options{
			ServerName: fmt.Sprintf("%s-%d", name, i),
			Host:       "127.0.0.1",
			Port:       -1,
			JetStream:  true,
			StoreDir:   filepath.Join(t.TempDir(), fmt.Sprint(i)),
			Cluster:    server.ClusterOpts{Name: name, Host: "127.0.0.1", Port: ports[i]},
			Routes:     routes,
			NoLog:      true,
			NoSigs:     true,
		})
		if err != nil {
			t.Fatalf("natstest: Cluster: %v", err)
		}
		s.Start()
		t.Cleanup(func() {
			s.Shutdown()
			s.WaitForShutdown()
		})
		servers[i] = s
	}
	for _, s := range servers {
		if !s.ReadyForConnections(readyTimeout) {
			t.Fatalf("natstest: Cluster: server not ready for connections after %v", readyTimeout)
		}
	}
	// The servers elect a meta leader once their routes are up; there is
	// no event to wait on, so look every few milliseconds.
	for deadline := time.Now().Add(readyTimeout); ; time.Sleep(10 * time.Millisecond) {
		for _, s := range servers {
			if s.JetStreamIsLeader() && len(s.JetStreamClusterPeers()) == n {
				return servers
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("natstest: Cluster: no JetStream meta leader of %d servers after %v", n, readyTimeout)
		}
	}
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("natstest: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
