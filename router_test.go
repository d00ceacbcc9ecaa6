package crew_test

import (
	"context"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/crewlib/crew"
)

// A router without WithName names itself and its routees as a pool names
// itself and its workers: router-1, and router-1-0, router-1-1, ...; a
// second router gets the next number.
func TestARouterWithoutANameNamesItsRouteesAsAPoolNamesItsWorkers(t *testing.T) {
	var names [2][]string
	for i := range names {
		r := crew.SpawnRouter(context.Background(), 2, nop[int])
		for _, ref := range r.Routees() {
			names[i] = append(names[i], ref.Name())
		}
		r.Stop()
		<-r.Done()
	}
	for _, routees := range names {
		require.Len(t, routees, 2)
		assert.Regexp(t, `^router-[0-9]+-0$`, routees[0])
		assert.Equal(t, strings.TrimSuffix(routees[0], "0")+"1", routees[1])
	}
	assert.NotEqual(t, names[0][0], names[1][0], "each router has its own name")

	// A keyed router's own dead letters (a message told once it stopped)
	// name it the same way.
	var dead letters
	r := crew.SpawnRouter(context.Background(), 2, nop[int], crew.WithKey(func(v int) int { return v }), crew.WithDeadLetters(dead.sink))
	prefix := strings.TrimSuffix(r.Routees()[0].Name(), "-0")
	r.Stop()
	<-r.Done()
	require.ErrorIs(t, r.Tell(context.Background(), 0), crew.ErrStopped)
	require.Len(t, dead.get(), 1)
	assert.Equal(t, prefix, dead.get()[0].Target)
}

// SpawnRouter takes at most 1<<24 routees, as a pool takes at most that
// many workers, and refuses more at once, with a crew: message that names
// the limit: neither a runtime error from make nor seconds spent spawning.
func TestSpawnRouterRefusesMoreRouteesThanTheMost(t *testing.T) {
	// The factory panics if called: SpawnRouter must refuse n before it
	// makes a mailbox, let alone spawns a routee.
	factory := func() crew.Mailbox[int] { panic("a mailbox was made") }
	for _, n := range []int{0, 1<<24 + 1, math.MaxInt} {
		t.Run(strconv.Itoa(n)+" routees", func(t *testing.T) {
			assert.PanicsWithValue(t, "crew: SpawnRouter: n must be between 1 and 16777216, got "+strconv.Itoa(n), func() {
				crew.SpawnRouter(context.Background(), n, nop[int], crew.WithMailbox(factory))
			})
		})
	}
}
