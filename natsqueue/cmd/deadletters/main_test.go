package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/crewlib/crew"
	"github.com/crewlib/crew/natsqueue"
	"github.com/crewlib/crew/natsqueue/natstest"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// testTimeout bounds every wait of a test: generous, so that a slow shared
// machine never fails a test that would pass, yet never a hang.
const testTimeout = 60 * time.Second

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// A depth refresh may still be running its query when a test
		// ends; it ends with the query.
		goleak.IgnoreAnyFunction("github.com/crewlib/crew/natsqueue.(*depths).refresh"),
	)
}

// A result is what a run of deadletters did.
type result struct {
	stdout, stderr string
	code           int
	err            error
}

// deadletters runs the command line args as main does.
func deadletters(ctx context.Context, args ...string) result {
	var stdout, stderr bytes.Buffer
	err := run(ctx, args, &stdout, &stderr)
	code := report(err, &stderr)
	return result{stdout: stdout.String(), stderr: stderr.String(), code: code, err: err}
}

// A fixture is a queue "jobs" on its own server, whose jobs 1 to 4 have
// ended as dead letters: 1 to 3 as permanent failures ("bad"), 4 after
// failing its one allowed delivery ("flaky").
type fixture struct {
	js      jetstream.JetStream
	q       *natsqueue.Queue[int]
	url     string
	letters map[int]natsqueue.DeadLetter // by job
}

// newFixture starts the fixture's server, tells the jobs, and serves them
// until all four are dead letters.
func newFixture(t *testing.T, ctx context.Context) *fixture {
	t.Helper()
	s := natstest.Server(t)
	nc, err := nats.Connect(s.ClientURL())
	require.NoError(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	require.NoError(t, err)
	q, err := natsqueue.Open[int](ctx, js, "jobs")
	require.NoError(t, err)
	for job := 1; job <= 4; job++ {
		require.NoError(t, q.Tell(ctx, job))
	}

	// The sink is called once the dead letter is stored.
	died := make(chan crew.DeadLetter, 4)
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { // ends when stop ends Serve
		served <- natsqueue.Serve(sctx, q, 1, func(_ context.Context, job int) error {
			if job == 4 {
				return errors.New("flaky")
			}
			return natsqueue.Permanent(errors.New("bad"))
		}, natsqueue.WithMaxDeliveries(1), natsqueue.WithDeadLetters(func(d crew.DeadLetter) { died <- d }))
	}()
	for range 4 {
		select {
		case <-died:
		case <-ctx.Done():
			stop()
			t.Fatalf("the jobs did not all end as dead letters: %v", ctx.Err())
		}
	}
	stop()
	require.NoError(t, <-served)

	f := &fixture{js: js, q: q, url: s.ClientURL(), letters: map[int]natsqueue.DeadLetter{}}
	for d, err := range q.DeadLetters().All(ctx) {
		require.NoError(t, err)
		job, err := q.Decode(d)
		require.NoError(t, err)
		f.letters[job] = d
	}
	require.Len(t, f.letters, 4)
	return f
}

// run runs deadletters on the fixture's queue with args after -queue.
func (f *fixture) run(ctx context.Context, args ...string) result {
	return deadletters(ctx, append([]string{"-url", f.url, "-queue", "jobs"}, args...)...)
}

// seq returns the sequence number of job's dead letter, as an argument.
func (f *fixture) seq(job int) string { return strconv.FormatUint(f.letters[job].Seq, 10) }

// count returns how many dead letters the queue has.
func (f *fixture) count(t *testing.T, ctx context.Context) int {
	t.Helper()
	n, err := f.q.DeadLetters().Count(ctx)
	require.NoError(t, err)
	return n
}

// pending returns how many jobs the queue holds that no one has taken.
func (f *fixture) pending(t *testing.T, ctx context.Context) uint64 {
	t.Helper()
	cons, err := f.js.Consumer(ctx, "jobs", "natsqueue")
	require.NoError(t, err)
	info, err := cons.Info(ctx)
	require.NoError(t, err)
	return info.NumPending
}

// rows returns the rows of list's table, each a slice of its cells,
// found at the columns of the table's heading.
func rows(t *testing.T, stdout string) [][]string {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	require.NotEmpty(t, lines)
	heading := []rune(lines[0])
	require.Equal(t, []string{"SEQ", "ID", "REASON", "ATTEMPTS", "DIED", "ERROR", "DATA"}, strings.Fields(lines[0]))
	var starts []int
	for i, r := range heading {
		if r != ' ' && (i == 0 || heading[i-1] == ' ') {
			starts = append(starts, i)
		}
	}
	var cells [][]string
	for _, line := range lines[1:] {
		row := []rune(line) // tabwriter aligns characters, not bytes
		var cs []string
		for i, start := range starts {
			end := len(row)
			if i+1 < len(starts) {
				end = starts[i+1]
			}
			require.LessOrEqual(t, start, len(row), "row %q", line)
			cs = append(cs, strings.TrimSpace(string(row[start:min(end, len(row))])))
		}
		cells = append(cells, cs)
	}
	return cells
}

// assertNoDeadLetter asserts that r failed for a sequence number that has
// no dead letter, and said so.
func assertNoDeadLetter(t *testing.T, r result) {
	t.Helper()
	assert.ErrorIs(t, r.err, natsqueue.ErrNoDeadLetter)
	assert.Equal(t, 1, r.code)
	// ErrNoDeadLetter's message, whose "natsqueue: " may come once.
	assert.Contains(t, r.stderr, strings.TrimPrefix(natsqueue.ErrNoDeadLetter.Error(), "natsqueue: "))
	if r.err != nil {
		assert.Equal(t, "deadletters: "+r.err.Error()+"\n", r.stderr)
	}
}

func TestListShowCount(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	f := newFixture(t, ctx)

	r := f.run(ctx, "count")
	require.NoError(t, r.err)
	assert.Equal(t, "4\n", r.stdout)

	r = f.run(ctx, "list")
	require.NoError(t, r.err)
	bySeq := slices.SortedFunc(maps.Keys(f.letters), func(a, b int) int {
		return cmp.Compare(f.letters[a].Seq, f.letters[b].Seq)
	})
	got := rows(t, r.stdout)
	require.Len(t, got, 4)
	for i, job := range bySeq {
		d := f.letters[job]
		assert.Equal(t, []string{
			f.seq(job), d.ID, d.Reason, "1", d.Died.UTC().Format(time.RFC3339), cell(d.Error, errorWidth), strconv.Itoa(job),
		}, got[i], "row %d", i)
	}
	assert.Equal(t, "permanent: bad", f.letters[1].Error)
	assert.Equal(t, natsqueue.ReasonTooManyDeliveries, f.letters[4].Reason)
	assert.Equal(t, "natsqueue: too many deliveries: failed on delivery 1 of 1: flaky", f.letters[4].Error)
	assert.Equal(t, "natsqueue: too many deliveries: failed…", got[slices.Index(bySeq, 4)][5], "the error is cut to 40 characters")

	r = f.run(ctx, "list", "-reason", natsqueue.ReasonTooManyDeliveries)
	require.NoError(t, r.err)
	if got := rows(t, r.stdout); assert.Len(t, got, 1) {
		assert.Equal(t, f.seq(4), got[0][0])
	}
	r = f.run(ctx, "list", "-reason", natsqueue.ReasonPermanent, "-error", "bad")
	require.NoError(t, r.err)
	assert.Len(t, rows(t, r.stdout), 3)
	r = f.run(ctx, "list", "-error", "flaky")
	require.NoError(t, r.err)
	assert.Len(t, rows(t, r.stdout), 1, "-error looks at the whole error, not the table's cut")

	r = f.run(ctx, "list", "-n", "2")
	require.NoError(t, r.err)
	assert.Len(t, rows(t, r.stdout), 2)
	assert.Equal(t, "deadletters: listed the first 2; -n 0 lists all\n", r.stderr)
	r = f.run(ctx, "list", "-n", "4")
	require.NoError(t, r.err)
	assert.Len(t, rows(t, r.stdout), 4)
	assert.Empty(t, r.stderr, "none was left out")

	d := f.letters[4]
	r = f.run(ctx, "show", f.seq(4))
	require.NoError(t, r.err)
	for _, line := range []string{
		"Seq:       " + f.seq(4),
		"Queue:     jobs",
		"ID:        " + d.ID,
		"Reason:    too many deliveries",
		"Error:     natsqueue: too many deliveries: failed on delivery 1 of 1: flaky",
		"Attempts:  1",
		"Sequence:  " + strconv.FormatUint(d.Sequence, 10),
		"Told:      " + d.Told.UTC().Format(time.RFC3339Nano),
		"Died:      " + d.Died.UTC().Format(time.RFC3339Nano),
		"Header:    (none)",
		"Data:      1 bytes",
	} {
		assert.Contains(t, r.stdout, line+"\n")
	}
	assert.True(t, strings.HasSuffix(r.stdout, "bytes\n4\n"), "the data comes last, in full: %q", r.stdout)

	r = f.run(ctx, "show", "99")
	assertNoDeadLetter(t, r)
	assert.Empty(t, r.stdout)

	r = deadletters(ctx, "-url", f.url, "-queue", "nope", "count")
	assert.ErrorIs(t, r.err, jetstream.ErrStreamNotFound, "a queue that does not exist")
	assert.Equal(t, 1, r.code)
	assert.Contains(t, r.stderr, `"nope"`)
}

func TestReplay(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	f := newFixture(t, ctx)
	require.Zero(t, f.pending(t, ctx))

	r := f.run(ctx, "replay", f.seq(1))
	require.NoError(t, r.err)
	assert.Equal(t, "replayed 1 dead letter\n", r.stdout)
	assert.Equal(t, 3, f.count(t, ctx))
	assert.Equal(t, uint64(1), f.pending(t, ctx), "the job is in the queue again")
	stream, err := f.js.Stream(ctx, "jobs")
	require.NoError(t, err)
	m, err := stream.GetLastMsgForSubject(ctx, "natsqueue.jobs")
	require.NoError(t, err)
	assert.Equal(t, "1", string(m.Data))

	r = f.run(ctx, "replay", f.seq(1)) // replayed already
	assertNoDeadLetter(t, r)
	assert.Equal(t, "replayed 0 dead letters\n", r.stdout)

	r = f.run(ctx, "replay", "-all", "-reason", natsqueue.ReasonTooManyDeliveries)
	require.NoError(t, r.err)
	assert.Equal(t, "replayed 1 dead letter\n", r.stdout)
	assert.Equal(t, 2, f.count(t, ctx))
	assert.Equal(t, uint64(2), f.pending(t, ctx))
	_, err = f.q.DeadLetters().Get(ctx, f.letters[4].Seq)
	assert.ErrorIs(t, err, natsqueue.ErrNoDeadLetter, "job 4's was the one replayed")

	r = f.run(ctx, "replay", "99", f.seq(2))
	assertNoDeadLetter(t, r)
	assert.Equal(t, "replayed 1 dead letter\n", r.stdout, "a missing one does not stop the others")
	assert.Equal(t, 1, f.count(t, ctx))
	assert.Equal(t, uint64(3), f.pending(t, ctx))

	r = f.run(ctx, "replay", "-all")
	require.NoError(t, r.err)
	assert.Equal(t, "replayed 1 dead letter\n", r.stdout)
	assert.Zero(t, f.count(t, ctx))
	assert.Equal(t, uint64(4), f.pending(t, ctx))
}

func TestPurge(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	f := newFixture(t, ctx)

	r := f.run(ctx, "purge", f.seq(1))
	require.NoError(t, r.err)
	assert.Equal(t, "purged 1 dead letter\n", r.stdout)
	assert.Equal(t, 3, f.count(t, ctx))
	assert.Zero(t, f.pending(t, ctx), "a purged job is not told again")

	r = f.run(ctx, "purge", f.seq(1)) // purged already
	assertNoDeadLetter(t, r)
	assert.Equal(t, "purged 0 dead letters\n", r.stdout)

	r = f.run(ctx, "purge", "-all", "-error", "flaky")
	require.NoError(t, r.err)
	assert.Equal(t, "purged 1 dead letter\n", r.stdout)
	assert.Equal(t, 2, f.count(t, ctx))
	_, err := f.q.DeadLetters().Get(ctx, f.letters[4].Seq)
	assert.ErrorIs(t, err, natsqueue.ErrNoDeadLetter, "job 4's was the one purged")

	r = f.run(ctx, "purge", "-all")
	require.NoError(t, r.err)
	assert.Equal(t, "purged 2 dead letters\n", r.stdout)
	assert.Zero(t, f.count(t, ctx))
	assert.Zero(t, f.pending(t, ctx))
}

func TestUsage(t *testing.T) {
	// None of these connects: -url names no server.
	url := []string{"-url", "nats://127.0.0.1:1"}
	for _, tt := range []struct {
		name string
		args []string
		says string
	}{
		{"no arguments are a usage error", nil, "-queue is missing"},
		{"a missing -queue is a usage error", []string{"list"}, "-queue is missing"},
		{"a missing command is a usage error", []string{"-queue", "jobs"}, "no command"},
		{"an unknown command is a usage error", []string{"-queue", "jobs", "frob"}, `unknown command "frob"`},
		{"an unknown flag is a usage error", []string{"-queue", "jobs", "list", "-x"}, "flag provided but not defined: -x"},
		{"a negative -n is a usage error", []string{"-queue", "jobs", "list", "-n", "-1"}, "-n -1 is negative"},
		{"an unknown reason is a usage error", []string{"-queue", "jobs", "list", "-reason", "sad"}, `-reason "sad" is none of`},
		{"show without a sequence number is a usage error", []string{"-queue", "jobs", "show"}, "show takes one sequence number, not 0"},
		{"show of two sequence numbers is a usage error", []string{"-queue", "jobs", "show", "1", "2"}, "show takes one sequence number, not 2"},
		{"a sequence number that is not one is a usage error", []string{"-queue", "jobs", "show", "x"}, `show: "x" is not a sequence number`},
		{"sequence number 0 is a usage error", []string{"-queue", "jobs", "purge", "0"}, `purge: "0" is not a sequence number`},
		{"count with a sequence number is a usage error", []string{"-queue", "jobs", "count", "1"}, "count takes no sequence numbers"},
		{"replay without sequence numbers or -all is a usage error", []string{"-queue", "jobs", "replay"}, "replay takes sequence numbers or -all"},
		{"replay with both is a usage error", []string{"-queue", "jobs", "replay", "-all", "1"}, "replay takes sequence numbers or -all"},
		{"purge -reason without -all is a usage error", []string{"-queue", "jobs", "purge", "-reason", "permanent", "1"}, "-reason and -error go with -all"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := deadletters(context.Background(), append(url, tt.args...)...)
			var uerr *usageError
			assert.ErrorAs(t, r.err, &uerr)
			assert.Equal(t, 2, r.code)
			assert.Contains(t, r.stderr, "deadletters: ")
			assert.Contains(t, r.stderr, tt.says)
			assert.Contains(t, r.stderr, "\nusage: deadletters")
			assert.Empty(t, r.stdout)
		})
	}

	t.Run("-h prints the usage and succeeds", func(t *testing.T) {
		r := deadletters(context.Background(), "-h")
		assert.Zero(t, r.code)
		assert.True(t, strings.HasPrefix(r.stderr, "usage: deadletters"), r.stderr)
	})
	t.Run("an unreachable server is an error, not a usage error", func(t *testing.T) {
		r := deadletters(context.Background(), append(url, "-queue", "jobs", "count")...)
		assert.ErrorIs(t, r.err, nats.ErrNoServers)
		assert.Equal(t, 1, r.code)
		assert.Contains(t, r.stderr, "deadletters: connecting to nats://127.0.0.1:1: ")
		assert.NotContains(t, r.stderr, "usage:")
	})
}

func TestCell(t *testing.T) {
	for _, tt := range []struct {
		name, s string
		width   int
		want    string
	}{
		{"a short cell is kept", "bad", 5, "bad"},
		{"a cell of the width is kept", "12345", 5, "12345"},
		{"a long cell is cut to the width", "123456", 5, "1234…"},
		{"a cut cell ends in no space", "1234 6", 5, "1234…"},
		{"a cut cell ends in no spaces", "12   6", 5, "12…"},
		{"characters are counted, not bytes", "ééééé", 5, "ééééé"},
		{"width 0 keeps it whole", "123456", 0, "123456"},
		{"a tab is quoted", "a\tb", 0, `"a\tb"`},
		{"a line break is quoted, then cut", "a\nbcdef", 6, `"a\nb…`},
		{"bytes that are not UTF-8 are quoted", "\xff", 0, `"\xff"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, cell(tt.s, tt.width))
		})
	}
}
