package natsqueue_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crewlib/crew"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew/natsqueue"
)

// The crash tests run this test binary again as a nats-server process,
// so that the server can be SIGKILLed: serverEnv holds its port (0 for
// any) and its store directory, joined by a comma. It writes "ready" and
// its client URL to stdout once it accepts connections, and exits when
// its stdin closes (the test ended) or it is killed.
const serverEnv = "NATSQUEUE_TEST_SERVER"

func TestServerProcess(t *testing.T) {
	spec := os.Getenv(serverEnv)
	if spec == "" {
		t.Skip("the server process of the crash tests")
	}
	// port,dir[,server name,cluster name,cluster port,route;route...]
	f := strings.Split(spec, ",")
	p, err := strconv.Atoi(f[0])
	require.NoError(t, err)
	if p == 0 {
		p = -1 // a random free port
	}
	opts := &server.Options{
		Host: "127.0.0.1", Port: p, JetStream: true, StoreDir: f[1], NoLog: true, NoSigs: true,
	}
	if len(f) == 6 {
		cp, err := strconv.Atoi(f[4])
		require.NoError(t, err)
		opts.ServerName = f[2]
		opts.Cluster = server.ClusterOpts{Name: f[3], Host: "127.0.0.1", Port: cp}
		for _, r := range strings.Split(f[5], ";") {
			opts.Routes = append(opts.Routes, &url.URL{Scheme: "nats-route", Host: r})
		}
	}
	s, err := server.NewServer(opts)
	require.NoError(t, err)
	s.Start()
	require.True(t, s.ReadyForConnections(testTimeout), "server ready")
	fmt.Println("ready", s.ClientURL())
	_, _ = io.Copy(io.Discard, os.Stdin)
	s.Shutdown()
	s.WaitForShutdown()
}

// A serverProcess is a nats-server process started by startServer.
type serverProcess struct {
	cmd  *exec.Cmd
	url  string
	port int
	dir  string
}

// startServer starts a server process on port (0: any free one) with its
// store in dir, and returns once it accepts connections; it is killed, if
// still running, at t's cleanup.
func startServer(t testing.TB, port int, dir string) *serverProcess {
	t.Helper()
	return startProcess(t, fmt.Sprintf("%d,%s", port, dir), port, dir)
}

// A serverCluster is a cluster of server processes.
type serverCluster struct {
	procs []*serverProcess
	names []string // the server names, in procs' order
}

// startCluster starts n server processes that form one JetStream
// cluster, each with its store in a directory of its own, and returns
// once the cluster places a stream on all n: a cluster elects its meta
// leader before every server has joined it, and until then refuses a
// stream on n replicas (no suitable peers).
func startCluster(t testing.TB, n int) *serverCluster {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		ports[i] = l.Addr().(*net.TCPAddr).Port
		require.NoError(t, l.Close())
	}
	c := &serverCluster{}
	name := fmt.Sprintf("crash-%d", time.Now().UnixNano())
	for i := range n {
		var routes []string
		for j, p := range ports {
			if j != i {
				routes = append(routes, fmt.Sprintf("127.0.0.1:%d", p))
			}
		}
		dir := t.TempDir()
		server := fmt.Sprintf("%s-%d", name, i)
		spec := fmt.Sprintf("0,%s,%s,%s,%d,%s", dir, server, name, ports[i], strings.Join(routes, ";"))
		c.procs = append(c.procs, startProcess(t, spec, 0, dir))
		c.names = append(c.names, server)
	}
	nc, err := nats.Connect(c.url(), nats.MaxReconnects(-1))
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	for deadline := time.Now().Add(testTimeout); ; time.Sleep(10 * time.Millisecond) {
		actx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err := js.CreateStream(actx, jetstream.StreamConfig{Name: "placed", Replicas: n, Storage: jetstream.MemoryStorage})
		if err == nil {
			err = js.DeleteStream(actx, "placed")
			cancel()
			require.NoError(t, err)
			return c
		}
		cancel()
		if time.Now().After(deadline) {
			t.Fatalf("the cluster places no stream on %d replicas after %v: %v", n, testTimeout, err)
		}
	}
}

// url returns the client URLs of the cluster's servers, joined by commas.
func (c *serverCluster) url() string {
	var urls []string
	for _, p := range c.procs {
		urls = append(urls, p.url)
	}
	return strings.Join(urls, ",")
}

// kill SIGKILLs the server called name.
func (c *serverCluster) kill(t testing.TB, name string) {
	t.Helper()
	for i, n := range c.names {
		if n == name {
			require.NoError(t, c.procs[i].kill())
			return
		}
	}
	t.Fatalf("no server called %q", name)
}

// startProcess starts a server process of spec (see TestServerProcess).
func startProcess(t testing.TB, spec string, port int, dir string) *serverProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), serverEnv+"="+spec)
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	// The process ends its stdout if it fails to start the server.
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 2 && f[0] == "ready" {
			p := &serverProcess{cmd: cmd, url: f[1], port: port, dir: dir}
			if i := strings.LastIndexByte(p.url, ':'); i >= 0 {
				p.port, _ = strconv.Atoi(p.url[i+1:])
			}
			go func() { _, _ = io.Copy(io.Discard, out) }() // ends at the process's exit
			return p
		}
	}
	t.Fatalf("server process exited before it was ready")
	return nil
}

// ClientURL returns the URL clients connect to.
func (p *serverProcess) ClientURL() string { return p.url }

// kill SIGKILLs the server and waits until it has died.
func (p *serverProcess) kill() error {
	if err := p.cmd.Process.Kill(); err != nil {
		return err
	}
	_, err := p.cmd.Process.Wait()
	return err
}

// warnings sends each slog record at Warn or above whose message contains
// substr to the returned channel, until t's end.
func warnings(t testing.TB, substr string) <-chan slog.Record {
	t.Helper()
	ch := make(chan slog.Record, 100)
	old := slog.Default()
	// Not old's handler: the default one writes through package log,
	// which SetDefault sends back to slog.
	slog.SetDefault(slog.New(watchHandler{slog.NewTextHandler(os.Stderr, nil), substr, ch}))
	t.Cleanup(func() { slog.SetDefault(old) })
	return ch
}

// A watchHandler passes records on to its next handler, and sends those
// it watches for to ch as well.
type watchHandler struct {
	next   slog.Handler
	substr string
	ch     chan<- slog.Record
}

func (h watchHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.next.Enabled(ctx, l)
}

func (h watchHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn && strings.Contains(r.Message, h.substr) {
		select {
		case h.ch <- r.Clone():
		default:
		}
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

func (h watchHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return watchHandler{h.next.WithAttrs(as), h.substr, h.ch}
}

func (h watchHandler) WithGroup(name string) slog.Handler {
	return watchHandler{h.next.WithGroup(name), h.substr, h.ch}
}

// A job's dead letter is delivered twice when its server dies before the
// Term reaches it: the job is delivered again, and ends as a dead letter
// again. The sink kills the server process (SIGKILL) on the first dead
// letter, before Serve sends the Term; the client has no reconnect
// buffer, so that the Term is lost, as one in flight when a server dies
// is, rather than sent to the restarted server.
func TestADeadLetterIsDeliveredAgainWhenTheServerDiesBeforeItsTerm(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, 0, dir)
	disconnected := make(chan struct{}, 1)
	js, q := openOn(t, srv, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond),
		nats.ReconnectBufSize(-1),
		nats.DisconnectErrHandler(func(*nats.Conn, error) {
			select {
			case disconnected <- struct{}{}:
			default:
			}
		}))
	tellAll(t, q, 1)

	unsent := warnings(t, "acknowledgement failed")
	dl := newDeadLetters()
	var sunk atomic.Int32
	sink := func(d crew.DeadLetter) {
		if sunk.Add(1) == 1 {
			if err := srv.kill(); err != nil {
				t.Errorf("killing the server: %v", err)
			}
			select { // Serve's Term then finds the connection down
			case <-disconnected:
			case <-time.After(testTimeout):
				t.Errorf("no disconnection after %v", testTimeout)
			}
		}
		dl.sink(d)
	}
	var calls atomic.Int32
	stop := serving(t, q, 1, func(context.Context, int) error {
		calls.Add(1)
		return natsqueue.Permanent(errors.New("bad job"))
	}, natsqueue.WithDeadLetters(sink))
	first := dl.next(t)
	select {
	case <-unsent: // the Term was lost
	case <-time.After(testTimeout):
		t.Fatal("no failed acknowledgement logged")
	}
	startServer(t, srv.port, srv.dir) // with the store the killed one left
	second := dl.next(t)
	assert.Equal(t, first.Message, second.Message, "the same job")
	assert.ErrorContains(t, second.Reason, "bad job")
	eventually(t, func() bool {
		ci := consumerInfo(t, js)
		return ci.NumPending == 0 && ci.NumAckPending == 0
	}, "the second Term removed the job")
	assert.ErrorContains(t, stop(), "1 acknowledgements not sent")
	assert.Equal(t, 2, dl.count(), "dead-lettered twice")
	assert.EqualValues(t, 2, calls.Load(), "the handler ran twice")
}
