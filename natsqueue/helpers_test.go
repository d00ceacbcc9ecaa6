package natsqueue_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/crewlib/crew"
	"github.com/crewlib/crew/natsqueue"
	"github.com/crewlib/crew/natsqueue/natstest"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// testTimeout bounds every wait of a test: generous, so that a slow shared
// machine never fails a test that would pass, yet never a hang.
const testTimeout = 60 * time.Second

// testAckWait keeps redelivery tests quick.
const testAckWait = time.Second

func TestMain(m *testing.M) {
	if os.Getenv(workerEnv) != "" || os.Getenv(serverEnv) != "" {
		// A worker process (see process_test.go) or a server process
		// (crash_test.go): no leak check; it is killed or exits when told.
		os.Exit(m.Run())
	}
	goleak.VerifyTestMain(m,
		// A depth refresh may still be running its query when a
		// test ends; it ends with the query (at most 5 s).
		goleak.IgnoreAnyFunction("github.com/crewlib/crew/natsqueue.(*depths).refresh"),
	)
}

// connect returns a JetStream client of s whose connection closes at t's
// cleanup; it reconnects for ever, so a restarted server is found again.
func connect(t testing.TB, s *server.Server) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL(), nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond))
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	return js
}

// connectThrough returns a JetStream client of s whose connection goes
// through link and closes at t's cleanup; it does not reconnect.
func connectThrough(t testing.TB, s *server.Server, link *holdingLink) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL(), nats.SetCustomDialer(link), nats.NoReconnect())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	return js
}

// A holdingLink dials the server for one nats.Conn, and can hold what the
// client writes as a process's buffers do before it reaches the server:
// after hold, what the client writes is kept until it sends a PING (asks
// the server for a round trip, as Flush does), and then goes out with it.
// cut closes the connection, and what is held is lost, as when a process
// exits.
type holdingLink struct {
	mu      sync.Mutex // guards conn, holding, held
	conn    net.Conn
	holding bool
	held    []byte
}

// Dial is nats.CustomDialer's.
func (l *holdingLink) Dial(network, address string) (net.Conn, error) {
	c, err := net.Dial(network, address)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.conn = c
	return heldConn{Conn: c, l: l}, nil
}

func (l *holdingLink) hold() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.holding = true
}

func (l *holdingLink) cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = nil
	_ = l.conn.Close()
}

// write writes p to c, or holds it.
func (l *holdingLink) write(c net.Conn, p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.holding {
		return c.Write(p)
	}
	l.held = append(l.held, p...)
	if !bytes.Contains(l.held, []byte("PING\r\n")) {
		return len(p), nil
	}
	l.holding = false
	held := l.held
	l.held = nil
	if _, err := c.Write(held); err != nil {
		return 0, err
	}
	return len(p), nil
}

// A heldConn is a connection through a holdingLink.
type heldConn struct {
	net.Conn
	l *holdingLink
}

func (c heldConn) Write(p []byte) (int, error) { return c.l.write(c.Conn, p) }

// open starts a server and opens a queue of ints on it.
func open(t testing.TB, opts ...natsqueue.Option) (*server.Server, jetstream.JetStream, *natsqueue.Queue[int]) {
	t.Helper()
	s := natstest.Server(t)
	js := connect(t, s)
	q, err := natsqueue.Open[int](ctx(t), js, "jobs", append([]natsqueue.Option{natsqueue.WithAckWait(testAckWait)}, opts...)...)
	require.NoError(t, err)
	return s, js, q
}

// ctx returns a context that ends at testTimeout or at t's end.
func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return c
}

// tellAll tells jobs 0..n-1.
func tellAll(t testing.TB, q *natsqueue.Queue[int], n int) {
	t.Helper()
	for i := range n {
		require.NoError(t, q.Tell(ctx(t), i))
	}
}

// serving runs Serve on a goroutine of the test until the returned stop is
// called; stop cancels Serve's context and returns Serve's error.
func serving(t testing.TB, q *natsqueue.Queue[int], workers int, handle func(context.Context, int) error, opts ...natsqueue.Option) (stop func() error) {
	t.Helper()
	c, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- natsqueue.Serve(c, q, workers, handle, opts...) }()
	var once sync.Once
	var err error
	stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(testTimeout):
				t.Fatal("Serve did not return after its context ended")
			}
		})
		return err
	}
	t.Cleanup(func() { _ = stop() })
	return stop
}

// tally counts the runs of each job and signals when all of want have
// succeeded at least once.
type tally struct {
	mu   sync.Mutex // guards runs, ok
	runs map[int]int
	ok   map[int]int
	want int
	all  chan struct{} // closed when len(ok) reaches want
}

func newTally(want int) *tally {
	return &tally{runs: map[int]int{}, ok: map[int]int{}, want: want, all: make(chan struct{})}
}

func (c *tally) ran(job int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runs[job]++
	if err != nil {
		return
	}
	c.ok[job]++
	if len(c.ok) == c.want && c.ok[job] == 1 {
		close(c.all)
	}
}

func (c *tally) wait(t testing.TB) {
	t.Helper()
	select {
	case <-c.all:
	case <-time.After(testTimeout):
		t.Fatalf("jobs not all done after %v", testTimeout)
	}
}

func (c *tally) snapshot() (runs, ok map[int]int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	runs, ok = map[int]int{}, map[int]int{}
	for k, v := range c.runs {
		runs[k] = v
	}
	for k, v := range c.ok {
		ok[k] = v
	}
	return runs, ok
}

// failingOnce returns a handler whose first call returns fail() (or
// panics in it) and whose later calls succeed, counting them in calls and
// recording them in c.
func failingOnce(c *tally, calls *atomic.Int32, fail func() error) func(context.Context, int) error {
	return func(_ context.Context, job int) error {
		if calls.Add(1) == 1 {
			c.ran(job, errors.New("first call"))
			return fail()
		}
		c.ran(job, nil)
		return nil
	}
}

// deadLetters collects dead letters.
type deadLetters struct {
	mu  sync.Mutex // guards got
	got []crew.DeadLetter
	ch  chan crew.DeadLetter
}

func newDeadLetters() *deadLetters { return &deadLetters{ch: make(chan crew.DeadLetter, 100)} }

func (d *deadLetters) sink(dl crew.DeadLetter) {
	d.mu.Lock()
	d.got = append(d.got, dl)
	d.mu.Unlock()
	d.ch <- dl
}

func (d *deadLetters) next(t testing.TB) crew.DeadLetter {
	t.Helper()
	select {
	case dl := <-d.ch:
		return dl
	case <-time.After(testTimeout):
		t.Fatal("no dead letter")
		return crew.DeadLetter{}
	}
}

func (d *deadLetters) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.got)
}

// consumerInfo reads the queue's consumer from the server.
func consumerInfo(t testing.TB, js jetstream.JetStream) *jetstream.ConsumerInfo {
	t.Helper()
	c, err := js.Consumer(ctx(t), "jobs", "natsqueue")
	require.NoError(t, err)
	ci, err := c.Info(ctx(t))
	require.NoError(t, err)
	return ci
}

// eventually polls cond, for state held by the server, until it holds or
// testTimeout passes.
func eventually(t testing.TB, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, testTimeout, 10*time.Millisecond, msg)
}
