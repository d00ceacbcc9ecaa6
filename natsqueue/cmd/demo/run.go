package main

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
	"syscall"
	"time"

	"github.com/crewlib/crew"
	"github.com/crewlib/crew/natsqueue/internal/embed"
	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nuid"
)

// speeds are the worker processes' job durations; the one marked victim
// is killed a third of the way through the run.
var speeds = []struct {
	name   string
	delay  time.Duration
	victim bool
}{
	{"fast", time.Millisecond, false},
	{"medium", 2 * time.Millisecond, false},
	{"slow", 5 * time.Millisecond, true},
}

// A proc is a worker process as the demo sees it.
type proc struct {
	name  string
	delay time.Duration
	cmd   *exec.Cmd
	ran   int // jobs it reported done
	state string
}

// A line is one line a worker process wrote.
type line struct {
	proc *proc
	text string // "" when the process's stdout closed
}

func run(url string, jobs, workers int, ackWait time.Duration, cluster int) error {
	// On SIGINT or SIGTERM the deferred calls still remove the embedded
	// server's store.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	var servers []*server.Server
	switch {
	case cluster > 0:
		dir, err := os.MkdirTemp("", "natsqueue-demo-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if servers, err = embed.Cluster(cluster, dir); err != nil {
			return err
		}
		defer func() { embed.Stop(servers...) }()
		var urls []string
		for _, s := range servers {
			urls = append(urls, s.ClientURL())
		}
		url = strings.Join(urls, ",")
	case url == "":
		s, err := embedded()
		if err != nil {
			return err
		}
		defer s.stop()
		url = s.ClientURL()
	}
	name := "demo_" + nuid.Next()
	nc, q, err := open(ctx, url, name, ackWait, cluster)
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	defer func() { _ = js.DeleteStream(context.Background(), name) }()

	lines := make(chan line, 1024)
	procs := make([]*proc, len(speeds))
	for i, s := range speeds {
		p, err := start(url, name, s.name, s.delay, workers, ackWait, lines)
		if err != nil {
			return err
		}
		defer func() {
			if p.cmd.ProcessState == nil {
				_ = p.cmd.Process.Kill()
				_ = p.cmd.Wait()
			}
		}()
		procs[i] = p
	}
	fmt.Printf("natsqueue demo: %d jobs, %d worker processes of %d workers, AckWait %v, server %s\n",
		jobs, len(procs), workers, ackWait, url)
	for ready := 0; ready < len(procs); {
		if l := <-lines; l.text == "ready" {
			ready++
		} else if l.text == "" {
			return fmt.Errorf("worker %s exited before it was ready", l.proc.name)
		}
	}

	began := time.Now()
	// Tell the jobs from a crew pool of 16 publishers.
	tellers, tctx := crew.WithContext(ctx, 16)
	go func() {
		for i := range jobs {
			if tellers.Submit(tctx, func(ctx context.Context) error { return q.Tell(ctx, Job{ID: i}) }) != nil {
				break
			}
		}
	}()

	runs := make(map[int]int, jobs) // job ID: times reported done
	var victim *proc
	open := len(procs) // processes whose stdout is still open
	for len(runs) < jobs {
		var l line
		select {
		case l = <-lines:
		case <-ctx.Done():
			return fmt.Errorf("%d of %d jobs done: %w", len(runs), jobs, ctx.Err())
		}
		if l.text == "" {
			open--
		}
		id, ok := strings.CutPrefix(l.text, "done ")
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(id)
		runs[n]++
		l.proc.ran++
		if victim == nil && len(runs) >= jobs/3 {
			victim = kill(procs)
			if servers != nil {
				leader, err := stopLeader(ctx, js, name, servers)
				if err != nil {
					return err
				}
				fmt.Printf("shut down %s, the stream's leader, after %d jobs\n", leader, len(runs))
			}
		}
	}
	elapsed := time.Since(began)
	if err := tellers.Wait(); err != nil {
		return err
	}
	// Stop the others gracefully, counting what they report until every
	// process's stdout has closed.
	for _, p := range procs {
		if p != victim {
			_ = p.cmd.Process.Signal(syscall.SIGTERM)
		}
	}
	for open > 0 {
		l := <-lines
		if l.text == "" {
			open--
			continue
		}
		if id, ok := strings.CutPrefix(l.text, "done "); ok {
			n, _ := strconv.Atoi(id)
			runs[n]++
			l.proc.ran++
		}
	}
	for _, p := range procs {
		if err := p.cmd.Wait(); err != nil && p != victim {
			return fmt.Errorf("worker %s: %w", p.name, err)
		}
	}
	cons, err := js.Consumer(ctx, name, "natsqueue")
	if err != nil {
		return err
	}
	ci, err := cons.Info(ctx)
	if err != nil {
		return err
	}
	report(procs, jobs, runs, int(ci.Delivered.Consumer)-jobs, elapsed)
	if len(runs) != jobs {
		return errors.New("jobs were lost")
	}
	return nil
}

// start starts a worker process whose stdout lines go to lines.
func start(url, queue, name string, delay time.Duration, workers int, ackWait time.Duration, lines chan<- line) (*proc, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-worker", "-url", url, "-queue", queue, "-delay", delay.String(),
		"-workers", strconv.Itoa(workers), "-ackwait", ackWait.String())
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &proc{name: name, delay: delay, cmd: cmd, state: "stopped"}
	// Owned by the process: it ends when the process's stdout closes.
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- line{p, sc.Text()}
		}
		lines <- line{p, ""}
	}()
	return p, nil
}

// stopLeader shuts down the server that leads stream name, and returns
// its name.
func stopLeader(ctx context.Context, js jetstream.JetStream, name string, servers []*server.Server) (string, error) {
	stream, err := js.Stream(ctx, name)
	if err != nil {
		return "", err
	}
	info, err := stream.Info(ctx)
	if err != nil {
		return "", err
	}
	if info.Cluster == nil {
		return "", errors.New("the stream has no cluster")
	}
	for _, s := range servers {
		if s.Name() == info.Cluster.Leader {
			embed.Stop(s)
			return s.Name(), nil
		}
	}
	return "", fmt.Errorf("the stream's leader %q is none of the demo's servers", info.Cluster.Leader)
}

// kill SIGKILLs the victim process and returns it.
func kill(procs []*proc) *proc {
	for i, s := range speeds {
		if s.victim {
			p := procs[i]
			_ = p.cmd.Process.Kill()
			p.state = fmt.Sprintf("SIGKILLed after %d jobs", p.ran)
			return p
		}
	}
	return nil
}

// report prints the table of processes and the totals.
func report(procs []*proc, jobs int, runs map[int]int, redelivered int, elapsed time.Duration) {
	fmt.Printf("\n%-8s %-8s %8s  %s\n", "process", "job time", "jobs run", "")
	total := 0
	for _, p := range procs {
		fmt.Printf("%-8s %-8v %8d  %s\n", p.name, p.delay, p.ran, p.state)
		total += p.ran
	}
	dups := total - len(runs)
	fmt.Printf("\njobs told     %d\n", jobs)
	fmt.Printf("jobs done     %d\n", len(runs))
	fmt.Printf("lost          %d\n", jobs-len(runs))
	fmt.Printf("duplicates    %d (runs beyond the first: jobs done whose ack was lost, with the killed process or a stopped server)\n", dups)
	fmt.Printf("redeliveries  %d (deliveries beyond one per job: the killed process's jobs, after AckWait)\n", redelivered)
	fmt.Printf("elapsed       %v (including AckWait before the killed process's jobs ran elsewhere)\n", elapsed.Round(time.Millisecond))
	fmt.Printf("throughput    %.0f jobs/s\n", float64(jobs)/elapsed.Seconds())
}

// An embeddedServer is the demo's own NATS server, with its store in a
// temporary directory.
type embeddedServer struct {
	*server.Server
	dir string
}

func embedded() (*embeddedServer, error) {
	dir, err := os.MkdirTemp("", "natsqueue-demo-")
	if err != nil {
		return nil, err
	}
	s, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true})
	if err != nil {
		return nil, err
	}
	s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		return nil, errors.New("embedded NATS server not ready")
	}
	return &embeddedServer{s, dir}, nil
}

func (s *embeddedServer) stop() {
	s.Shutdown()
	s.WaitForShutdown()
	_ = os.RemoveAll(s.dir)
}
