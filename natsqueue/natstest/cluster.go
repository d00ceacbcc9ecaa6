package natstest

import (
	"testing"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/crewlib/crew/natsqueue/internal/embed"
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
	servers, err := embed.Cluster(n, t.TempDir())
	if err != nil {
		t.Fatalf("natstest: Cluster: %v", err)
	}
	t.Cleanup(func() { embed.Stop(servers...) })
	return servers
}
