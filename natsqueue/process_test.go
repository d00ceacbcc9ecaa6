package natsqueue_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/crewlib/crew/natsqueue"
	"github.com/crewlib/crew/natsqueue/natstest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The multi-process tests run this test binary again as worker processes:
// workerEnv holds the server's URL, delayEnv how long each job takes. A
// worker writes a line to stdout when it is ready, when it starts and ends
// a job, and when Serve has returned; SIGTERM stops it gracefully.
const (
	workerEnv = "NATSQUEUE_TEST_WORKER"
	delayEnv  = "NATSQUEUE_TEST_DELAY"
	// deadEnv, if set to n, makes a worker fail every job divisible by n
	// permanently, writing "failed <job>", so that it ends as a dead
	// letter.
	deadEnv = "NATSQUEUE_TEST_DEAD"
)

func TestWorkerProcess(t *testing.T) {
	url := os.Getenv(workerEnv)
	if url == "" {
		t.Skip("the worker process of the multi-process tests")
	}
	delay, err := time.ParseDuration(os.Getenv(delayEnv))
	require.NoError(t, err)
	nc, err := nats.Connect(url, nats.MaxReconnects(-1))
	require.NoError(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	q, err := natsqueue.Open[int](ctx, js, "jobs", natsqueue.WithAckWait(testAckWait))
	require.NoError(t, err)
	dead, _ := strconv.Atoi(os.Getenv(deadEnv))
	fmt.Println("ready")
	err = natsqueue.Serve(ctx, q, 2, func(_ context.Context, job int) error {
		fmt.Println("start", job)
		time.Sleep(delay) // the job's work
		if dead > 0 && job%dead == 0 {
			fmt.Println("failed", job)
			return natsqueue.Permanent(errors.New("a job that cannot succeed"))
		}
		fmt.Println("done", job)
		return nil
	})
	require.NoError(t, err)
	fmt.Println("stopped")
}

// An event is a line a worker process wrote.
type event struct {
	proc string
	what string // ready, start, done, stopped
	job  int
}

// A worker is a worker process and its event stream.
type worker struct {
	name string
	cmd  *exec.Cmd
	read sync.WaitGroup // the goroutine reading its stdout
}

// startWorker starts a worker process whose jobs take delay, with env
// (NAME=value) added to its environment, sending its events to events;
// it is killed, if still running, at t's cleanup.
func startWorker(t testing.TB, url, name string, delay time.Duration, events chan<- event, env ...string) *worker {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWorkerProcess$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), workerEnv+"="+url, delayEnv+"="+delay.String()), env...)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	w := &worker{name: name, cmd: cmd}
	// Owned by the worker: it ends at the process's exit (EOF).
	w.read.Go(func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 0 {
				continue
			}
			e := event{proc: name, what: f[0]}
			if len(f) == 2 {
				e.job, _ = strconv.Atoi(f[1])
			}
			events <- e
		}
	})
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			w.read.Wait()
			_ = cmd.Wait()
		}
	})
	return w
}

// stop ends the worker gracefully and waits until it has exited.
func (w *worker) stop(t testing.TB) {
	t.Helper()
	require.NoError(t, w.cmd.Process.Signal(syscall.SIGTERM))
	w.read.Wait()
	require.NoError(t, w.cmd.Wait(), "%s exits cleanly", w.name)
}

// kill SIGKILLs the worker and waits until it has died.
func (w *worker) kill(t testing.TB) {
	t.Helper()
	require.NoError(t, w.cmd.Process.Kill())
	w.read.Wait()
	_ = w.cmd.Wait()
}

// await reads events until until returns true for one.
func await(t testing.TB, events <-chan event, until func(event) bool, record func(event)) {
	t.Helper()
	deadline := time.After(testTimeout)
	for {
		select {
		case e := <-events:
			record(e)
			if until(e) {
				return
			}
		case <-deadline:
			t.Fatalf("no awaited event after %v", testTimeout)
		}
	}
}

// ledger records the jobs each process started and finished.
type ledger struct {
	started map[int][]string
	done    map[int][]string
	per     map[string]int
}

func newLedger() *ledger {
	return &ledger{started: map[int][]string{}, done: map[int][]string{}, per: map[string]int{}}
}

func (l *ledger) record(e event) {
	switch e.what {
	case "start":
		l.started[e.job] = append(l.started[e.job], e.proc)
	case "done":
		l.done[e.job] = append(l.done[e.job], e.proc)
		l.per[e.proc]++
	}
}

// drain records the events left once every worker has exited.
func (l *ledger) drain(events chan event) {
	for {
		select {
		case e := <-events:
			l.record(e)
		default:
			return
		}
	}
}

func TestProcessesRunEachJobExactlyOnce(t *testing.T) {
	s := natstest.Server(t)
	events := make(chan event, 10000)
	l := newLedger()
	ready := 0
	isReady := func(e event) bool {
		if e.what == "ready" {
			ready++
		}
		return ready == 2
	}
	a := startWorker(t, s.ClientURL(), "a", 0, events)
	b := startWorker(t, s.ClientURL(), "b", 100*time.Microsecond, events)
	await(t, events, isReady, l.record)

	_, q := openOn(t, s)
	const n = 400
	tellAll(t, q, n)
	await(t, events, func(event) bool { return len(l.done) == n }, l.record)
	a.stop(t)
	b.stop(t)
	l.drain(events)

	for i := range n {
		assert.Len(t, l.done[i], 1, "job %d ran once", i)
	}
	t.Logf("jobs per process: %v", l.per)
	ci := consumerInfo(t, connect(t, s))
	assert.Zero(t, ci.NumPending)
	assert.Zero(t, ci.NumAckPending)
	assert.Zero(t, ci.NumRedelivered)
}

func TestAKilledProcessLosesNothing(t *testing.T) {
	s := natstest.Server(t)
	events := make(chan event, 10000)
	l := newLedger()
	// a takes jobs and never finishes them: it is killed in the middle.
	a := startWorker(t, s.ClientURL(), "a", time.Hour, events)
	await(t, events, func(e event) bool { return e.what == "ready" }, l.record)
	js, q := openOn(t, s)
	const n = 20
	tellAll(t, q, n)
	await(t, events, func(e event) bool { return e.what == "start" }, l.record)
	a.kill(t)
	l.drain(events)
	require.NotEmpty(t, l.started, "a was running a job")
	held := consumerInfo(t, js).NumAckPending
	t.Logf("a held %d jobs when killed, running %d", held, len(l.started))

	b := startWorker(t, s.ClientURL(), "b", 0, events)
	await(t, events, func(event) bool { return len(l.done) == n }, l.record)
	b.stop(t)
	l.drain(events)

	for i := range n {
		assert.Equal(t, []string{"b"}, l.done[i], "job %d ran to its end once, in b", i)
	}
	for job, procs := range l.started {
		if procs[0] == "a" {
			assert.Equal(t, []string{"a", "b"}, procs, "job %d, cut short in a, ran again in b", job)
		}
	}
	ci := consumerInfo(t, js)
	assert.Zero(t, ci.NumPending)
	assert.Zero(t, ci.NumAckPending)
	assert.EqualValues(t, n+held, ci.Delivered.Consumer, "the jobs a held were delivered again, the others once")
}

// openOn opens the test queue on s, connected with opts.
func openOn(t testing.TB, s interface{ ClientURL() string }, opts ...nats.Option) (jetstream.JetStream, *natsqueue.Queue[int]) {
	t.Helper()
	nc, err := nats.Connect(s.ClientURL(), opts...)
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	q, err := natsqueue.Open[int](ctx(t), js, "jobs", natsqueue.WithAckWait(testAckWait))
	require.NoError(t, err)
	return js, q
}
