package team

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/goring-hpc/goring/coll"
	"github.com/goring-hpc/goring/ucx"
)

// newLazyContexts makes one context per rank, as n processes would have.
func newLazyContexts(t testing.TB, n int) []*Context { return newLazyContextsWith(t, n, "") }

// newLazyContextsWith is newLazyContexts with the contexts' options.
func newLazyContextsWith(t testing.TB, n int, opts string) []*Context {
	t.Helper()
	if err := ucx.Load(); err != nil {
		t.Skipf("UCX not loadable: %v", err)
	}
	ctxs := make([]*Context, n)
	for r := range ctxs {
		c, err := NewContext(opts, testTable{})
		require.NoError(t, err)
		ctxs[r] = c
	}
	t.Cleanup(func() {
		for _, c := range ctxs {
			assert.NoError(t, c.Close())
		}
	})
	return ctxs
}

// newLazyTeams makes the team of key on every context from the context
// cards alone, as the shim does from UCC's address storage; each context
// numbers the teams of a key itself.
func newLazyTeams(t *testing.T, ctxs []*Context, key uint32) []*Team {
	t.Helper()
	return newLazyTeamsGen(t, ctxs, key, 0)
}

// newLazyTeamsGen is newLazyTeams with the generation the caller counted
// (0: the context counts).
func newLazyTeamsGen(t *testing.T, ctxs []*Context, key, gen uint32) []*Team {
	t.Helper()
	cards := make([][]byte, len(ctxs))
	for r, c := range ctxs {
		cards[r] = append(c.rv.card, 0, 0, 0) // padding after a card is ignored
	}
	teams := make([]*Team, len(ctxs))
	for r, c := range ctxs {
		tm, err := NewLazyTeam(c, r, len(ctxs), key, gen, cards)
		require.NoError(t, err, "rank %d", r)
		teams[r] = tm
	}
	return teams
}

// allreduceOnce runs a float32 sum allreduce of count elements on the
// teams and checks every rank's result.
func allreduceOnce(t *testing.T, teams []*Team, count, salt int) {
	t.Helper()
	n := len(teams)
	args := make([]Args, n)
	dsts := make([][]byte, n)
	for r := range args {
		src := cbuf(t, 4*count)
		dsts[r] = cbuf(t, 4*count)
		for k, v := 0, f32s(src); k < count; k++ {
			v[k] = float32(r*1000 + k + salt)
		}
		args[r] = Args{Coll: coll.Allreduce, Src: ptr(src), Dst: ptr(dsts[r]), Count: uint64(count), Dtype: coll.Float32, Op: coll.Sum}
	}
	runAll(t, teams, args)
	for r := range dsts {
		got := f32s(dsts[r])
		for k := 0; k < count; k++ {
			want := float32(0)
			for q := 0; q < n; q++ {
				want += float32(q*1000 + k + salt)
			}
			require.Equal(t, want, got[k], "rank %d element %d", r, k)
		}
	}
}

// A lazy team knows its shape at creation and opens nothing: no worker,
// no connection, until a collective runs on it.
func TestLazyTeamOpensNothingUntilUsed(t *testing.T) {
	ctxs := newLazyContexts(t, 3)
	teams := newLazyTeams(t, ctxs, 7)
	for r, tm := range teams {
		assert.Nil(t, tm.rw, "rank %d opened a worker at creation", r)
		assert.Nil(t, tm.tr, "rank %d connected at creation", r)
		assert.True(t, tm.oneHost)
		assert.Equal(t, tm.topo.NumNodes(), 1)
		str, summary := tm.scores()
		assert.NotEmpty(t, summary)
		_ = str
		require.NoError(t, tm.Destroy())
		assert.Nil(t, tm.rw)
	}
	for _, c := range ctxs {
		assert.Empty(t, c.workers.sets, "a team that ran nothing pooled workers")
	}
}

// The first calls of a lazy team (two posted before it connected) run
// correctly once the cards are in; a later team of the same key and
// members (a new communicator) reuses the first one's workers and its
// calls are right too.
func TestLazyTeamRunsAndReusesWorkers(t *testing.T) {
	ctxs := newLazyContexts(t, 4)
	teams := newLazyTeams(t, ctxs, 9)
	// Two calls posted on every rank before any rank progresses.
	n := len(teams)
	first := make([]*Coll, n)
	second := make([]*Coll, n)
	bufs := make([][2][]byte, n)
	for r, tm := range teams {
		for i, out := range []*[]*Coll{&first, &second} {
			src, dst := cbuf(t, 4*5), cbuf(t, 4*5)
			for k := range f32s(src) {
				f32s(src)[k] = float32(r + 10*i)
			}
			c, err := NewColl(tm, Args{Coll: coll.Allreduce, Src: ptr(src), Dst: ptr(dst), Count: 5, Dtype: coll.Float32, Op: coll.Sum})
			require.NoError(t, err)
			require.NotNil(t, c.pending, "rank %d: the call was built before the team connected", r)
			require.NoError(t, c.Post())
			(*out)[r] = c
			bufs[r][i] = dst
		}
	}
	for polls, left := 0, 1; left > 0; polls++ {
		require.Less(t, polls, 5_000_000, "no progress")
		left = 0
		for r := range teams {
			for _, c := range []*Coll{first[r], second[r]} {
				done, err := c.Test()
				require.NoError(t, err, "rank %d", r)
				if !done {
					left++
				}
			}
		}
	}
	for r := range teams {
		first[r].Finalize()
		second[r].Finalize()
		for i := 0; i < 2; i++ {
			for _, v := range f32s(bufs[r][i]) {
				require.Equal(t, float32(0+1+2+3+40*i), v, "rank %d call %d", r, i)
			}
		}
	}
	allreduceOnce(t, teams, 70001, 3) // above the C path's sizes
	for _, tm := range teams {
		require.NotNil(t, tm.tr)
		require.NoError(t, tm.Destroy())
	}
	for r, c := range ctxs {
		require.Len(t, c.workers.sets, 1, "rank %d: a clean team's workers go back to its context", r)
	}
	again := newLazyTeams(t, ctxs, 9)
	allreduceOnce(t, again, 3, 5)
	for r, c := range ctxs {
		assert.Empty(t, c.workers.sets, "rank %d: the next team took the pooled workers", r)
	}
	allreduceOnce(t, again, 100000, 7)
	for _, tm := range again {
		require.NoError(t, tm.Destroy())
	}
}

// A team destroyed before its exchange ended leaves no workers in the
// pool and withdraws its receive; its key and members serve a new team.
func TestLazyTeamDestroyedMidExchange(t *testing.T) {
	ctxs := newLazyContexts(t, 2)
	teams := newLazyTeams(t, ctxs, 11)
	src, dst := cbuf(t, 4), cbuf(t, 4)
	c, err := NewColl(teams[0], Args{Coll: coll.Allreduce, Src: ptr(src), Dst: ptr(dst), Count: 1, Dtype: coll.Float32, Op: coll.Sum})
	require.NoError(t, err)
	require.NoError(t, c.Post())
	done, err := c.Test()
	require.NoError(t, err)
	require.False(t, done, "a call completed with a peer that never came")
	c.Finalize()
	require.NoError(t, teams[0].Destroy())
	require.NoError(t, teams[1].Destroy())
	assert.Empty(t, ctxs[0].workers.sets)
	// Rank 0's card for the destroyed team may still reach rank 1: a new
	// team of the same key must not take it (its count differs).
	again := newLazyTeams(t, ctxs, 11)
	allreduceOnce(t, again, 4, 1)
	for _, tm := range again {
		require.NoError(t, tm.Destroy())
	}
}

// Where the caller numbers the teams (the UCC layer counts every team in
// C and makes one in Go only when goring has work for it), a team that
// skipped Go on every rank leaves no gap: the next team, numbered by the
// caller, connects; and a card of a destroyed team with the same key and
// members, still on its way, is not taken by the next one.
func TestLazyTeamGenerationFromCaller(t *testing.T) {
	ctxs := newLazyContexts(t, 2)
	// Generation 1 was a team goring never ran anything on: never made here.
	second := newLazyTeamsGen(t, ctxs, 12, 2)
	src, dst := cbuf(t, 4), cbuf(t, 4)
	c, err := NewColl(second[0], Args{Coll: coll.Allreduce, Src: ptr(src), Dst: ptr(dst), Count: 1, Dtype: coll.Float32, Op: coll.Sum})
	require.NoError(t, err)
	require.NoError(t, c.Post())
	done, err := c.Test() // rank 0's card leaves for rank 1, which never answers
	require.NoError(t, err)
	require.False(t, done)
	c.Finalize()
	for _, tm := range second {
		assert.Equal(t, uint32(2), tm.link.gen)
		require.NoError(t, tm.Destroy())
	}
	third := newLazyTeamsGen(t, ctxs, 12, 3)
	allreduceOnce(t, third, 4, 2)
	for _, tm := range third {
		require.NoError(t, tm.Destroy())
	}
}

// Link messages: a message of another team (other members or count) is
// not taken, a malformed one is an error, and the members' hash depends
// on who is where.
func TestLinkMessages(t *testing.T) {
	msg := encodeLink(42, 3, []byte("card"))
	body, ok, err := decodeLink(msg, 42, 3)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Equal(t, []byte("card"), body)
	_, ok, err = decodeLink(msg, 42, 2)
	require.NoError(t, err)
	assert.False(t, ok, "a previous team's message was taken")
	_, ok, err = decodeLink(msg, 43, 3)
	require.NoError(t, err)
	assert.False(t, ok, "another member set's message was taken")
	_, _, err = decodeLink([]byte("GRL"), 42, 3)
	assert.Error(t, err)
	_, _, err = decodeLink(append([]byte("XXXX"), msg[4:]...), 42, 3)
	assert.Error(t, err)
	a, b := card{host: "a", pid: 1, start: 2}, card{host: "b", pid: 1, start: 2}
	assert.NotEqual(t, membersHash([]card{a, b}), membersHash([]card{b, a}))
	assert.Equal(t, membersHash([]card{a, b}), membersHash([]card{a, b}))
	_, err = checkLinkSender(linkTag(5, 4), 4)
	assert.Error(t, err)
	s, err := checkLinkSender(linkTag(5, 3), 4)
	require.NoError(t, err)
	assert.Equal(t, 3, s)
}

// A member's card that does not decode makes the team invalid, not a
// hang at its first call.
func TestLazyTeamBadCard(t *testing.T) {
	ctxs := newLazyContexts(t, 1)
	_, err := NewLazyTeam(ctxs[0], 0, 2, 1, 0, [][]byte{ctxs[0].rv.card, []byte("junk")})
	assert.Error(t, err)
	_, err = NewLazyTeam(ctxs[0], 0, 2, 1, 0, [][]byte{ctxs[0].rv.card})
	assert.Error(t, err)
}

// A new team of the same processes reuses the previous team's endpoints
// along with its workers: none is created, and the calls are right.
func TestLazyTeamReusesEndpoints(t *testing.T) {
	ctxs := newLazyContexts(t, 3)
	for round := 0; round < 3; round++ {
		teams := newLazyTeams(t, ctxs, 13)
		allreduceOnce(t, teams, 17, round)
		if round > 0 {
			for r, tm := range teams {
				assert.Zero(t, tm.eps.Len(), "rank %d: round %d created endpoints although its peers were the same", r, round)
			}
		}
		for _, tm := range teams {
			require.NoError(t, tm.Destroy())
		}
		for r, c := range ctxs {
			require.Len(t, c.workers.sets, 1, "rank %d", r)
			assert.Equal(t, 3, c.workers.sets[0].eps.Len(), "rank %d: the endpoints (self included) go back with the workers", r)
		}
	}
}

// With a deadline (timeout_ms), a lazy team's first call whose peer never
// opens the team (alive, but stuck before the collective) fails once the
// deadline has passed, as it would on a connected team: the card exchange
// is part of the call's wait, not a wait of its own without an end.
func TestLazyTeamExchangeKeepsTheDeadline(t *testing.T) {
	ctxs := newLazyContextsWith(t, 2, "timeout_ms=200")
	teams := newLazyTeams(t, ctxs, 14)
	src, dst := cbuf(t, 4), cbuf(t, 4)
	c, err := NewColl(teams[0], Args{Coll: coll.Allreduce, Src: ptr(src), Dst: ptr(dst), Count: 1, Dtype: coll.Float32, Op: coll.Sum})
	require.NoError(t, err)
	require.NoError(t, c.Post())
	start := time.Now()
	for {
		done, err := c.Test()
		require.False(t, done, "a call completed with a peer that never came")
		if err != nil {
			break
		}
		require.Less(t, time.Since(start), 3*time.Second, "the call still waits for rank 1's card long past its 200 ms deadline")
		time.Sleep(time.Millisecond)
	}
	c.Finalize()
	for _, tm := range teams {
		require.NoError(t, tm.Destroy())
	}
}
