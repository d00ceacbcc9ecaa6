package crew_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// A logBuffer keeps what log/slog's default logger writes, as JSON lines.
type logBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// captureLog sends the records of log/slog's default logger to a buffer
// until the test ends. A test that calls it must not run in parallel with
// others: the default logger is the process's.
func captureLog(t *testing.T) *logBuffer {
	t.Helper()
	l := &logBuffer{}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(l, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return l
}

// counts returns the count attribute of each record with message msg and
// attribute key set to value, in the order they were logged.
func (l *logBuffer) counts(t *testing.T, msg, key, value string) []int {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var counts []int
	for line := range strings.Lines(l.buf.String()) {
		var rec map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &rec), line)
		if rec["msg"] != msg || rec[key] != value {
			continue
		}
		n, ok := rec["count"].(float64)
		require.True(t, ok, "a record without its count: %s", line)
		counts = append(counts, int(n))
	}
	return counts
}

func TestTheDefaultLogCountsEachSourcesEventsOnItsOwn(t *testing.T) {
	logs := captureLog(t)
	ctx := context.Background()
	nop := func(context.Context, int) error { return nil }
	// stopped returns an actor that has stopped: each Tell is a dead letter.
	stopped := func(name string) *crew.Ref[int] {
		r := crew.Spawn(ctx, nop, crew.WithName(name))
		r.Stop()
		<-r.Done()
		return r
	}

	storm := stopped("log-storm")
	for i := range 5 {
		require.ErrorIs(t, storm.Tell(ctx, i), crew.ErrStopped)
	}
	quiet := stopped("log-quiet")
	require.ErrorIs(t, quiet.Tell(ctx, 0), crew.ErrStopped)

	// A keyed router's own dead letters: told after its Stop.
	router := crew.SpawnRouter(ctx, 1, nop, crew.WithName("log-router"), crew.WithKey(func(v int) int { return v }))
	router.Stop()
	<-router.Done()
	for i := range 3 {
		require.ErrorIs(t, router.Tell(ctx, i), crew.ErrStopped)
	}

	// A pool's: the jobs its DropOldest backlog evicts.
	pool := crew.NewGroup(1, crew.WithName("log-pool"), crew.WithMailbox(func() crew.Mailbox[crew.Job] {
		return crew.NewBounded[crew.Job](1, crew.DropOldest)
	}))
	started, release := make(chan struct{}), make(chan struct{})
	require.NoError(t, pool.Submit(ctx, gated(started, release, nil)))
	<-started
	for range 4 { // the first waits in the backlog; each of the others evicts the one before it
		require.NoError(t, pool.Submit(ctx, func(context.Context) error { return nil }))
	}
	close(release)
	require.NoError(t, pool.Wait())

	// An actor's errors, then another's.
	failing := func(name string, n int) {
		r := crew.Spawn(ctx, func(context.Context, int) error { return errors.New("no") }, crew.WithName(name))
		for i := range n {
			require.NoError(t, r.Tell(ctx, i))
		}
		r.Drain()
		<-r.Done()
	}
	failing("log-fails", 5)
	failing("log-fails-once", 1)

	const dead = "crew: dead letter"
	assert.Equal(t, []int{1, 2, 4}, logs.counts(t, dead, "target", "log-storm"), "the 1st, 2nd and 4th of 5")
	assert.Equal(t, []int{1}, logs.counts(t, dead, "target", "log-quiet"), "its first, after another's storm")
	assert.Equal(t, []int{1, 2}, logs.counts(t, dead, "target", "log-router"), "the router's own")
	assert.Equal(t, []int{1, 2}, logs.counts(t, dead, "target", "log-pool"), "the pool's evictions")
	const failed = "crew: handler failed"
	assert.Equal(t, []int{1, 2, 4}, logs.counts(t, failed, "err", `crew: actor "log-fails": no`))
	assert.Equal(t, []int{1}, logs.counts(t, failed, "err", `crew: actor "log-fails-once": no`), "its first, after another's errors")
	assert.Equal(t, []int{1}, logs.counts(t, failed, "actor", "log-fails-once"), "the record names the actor")
}
