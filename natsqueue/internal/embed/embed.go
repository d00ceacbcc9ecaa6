// Package embed starts embedded NATS servers with JetStream on 127.0.0.1,
// for natstest and the demo.
package embed

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// ReadyTimeout bounds how long a server may take to accept connections,
// and a cluster to elect its meta leader; they take milliseconds, so
// reaching it means they failed.
const ReadyTimeout = 30 * time.Second

// Cluster starts n servers with JetStream on 127.0.0.1 that form one
// JetStream cluster, on random free ports, each with its store in a
// directory of its own under dir, and returns them once each accepts
// connections and the cluster has elected its meta leader. On an error,
// the servers it started are shut down.
func Cluster(n int, dir string) ([]*server.Server, error) {
	servers, err := NewCluster(n, dir)
	if err != nil {
		return nil, err
	}
	if err := Start(servers...); err != nil {
		return nil, err
	}
	// The servers elect a meta leader once their routes are up; there is
	// no event to wait on, so look every few milliseconds.
	for deadline := time.Now().Add(ReadyTimeout); ; time.Sleep(10 * time.Millisecond) {
		for _, s := range servers {
			if s.JetStreamIsLeader() && len(s.JetStreamClusterPeers()) == n {
				return servers, nil
			}
		}
		if time.Now().After(deadline) {
			Stop(servers...)
			return nil, fmt.Errorf("no JetStream meta leader of %d servers after %v", n, ReadyTimeout)
		}
	}
}

// NewCluster makes, and does not start, n servers with JetStream on
// 127.0.0.1 that form one JetStream cluster once a majority of them has
// started (see Start), on random free ports, each with its store in a
// directory of its own under dir.
func NewCluster(n int, dir string) ([]*server.Server, error) {
	if n < 1 {
		return nil, fmt.Errorf("a cluster of %d servers", n)
	}
	ports := make([]int, n)
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	name := fmt.Sprintf("natsqueue-%d", time.Now().UnixNano())
	servers := make([]*server.Server, n)
	for i := range n {
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
			StoreDir:   filepath.Join(dir, fmt.Sprint(i)),
			Cluster:    server.ClusterOpts{Name: name, Host: "127.0.0.1", Port: ports[i]},
			Routes:     routes,
			NoLog:      true,
			NoSigs:     true,
		})
		if err != nil {
			return nil, err
		}
		servers[i] = s
	}
	return servers, nil
}

// Start starts the servers and returns once each accepts connections; a
// server of a cluster does so before the cluster has a meta leader. If
// one is not ready within ReadyTimeout, it shuts them all down and returns
// an error.
func Start(servers ...*server.Server) error {
	for _, s := range servers {
		s.Start()
	}
	for _, s := range servers {
		if !s.ReadyForConnections(ReadyTimeout) {
			Stop(servers...)
			return fmt.Errorf("server not ready for connections after %v", ReadyTimeout)
		}
	}
	return nil
}

// Stop shuts the servers down and waits until they have.
func Stop(servers ...*server.Server) {
	for _, s := range servers {
		s.Shutdown()
		s.WaitForShutdown()
	}
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New("no TCP address")
	}
	return addr.Port, nil
}
