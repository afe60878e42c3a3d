package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/team"
)

// goring bench through the team layer: a rank makes a goring context and
// an eager team, as UCC's goring_context_create and goring_team_create
// do (one of each per lane count of --lanes), and gives the team the
// job's topology (the emulated nodes of --nodes or --topo). Its team
// card rides in the coordinator's hello, in place of the UCX addresses of
// the rank's own lanes; the cards every hello carried connect the team
// (goring_team_card, goring_team_connect). Every measured call is then a
// team call (bench.Config.Team, LaneTeams), run by the runner team.Select
// picks, and the barriers between iterations go over the team's
// transport.

// benchThroughTeam says whether this job's calls run through the team
// layer. Two kinds of job cannot, and keep bench's own executor over its
// own transports: the namespace testbed, whose UCX workers bind to one
// rail each and route by the sender's rail (ucxmp.Rails), which a team's
// workers do not; and dispatch or combine on device memory, which the
// team layer does not run yet.
func benchThroughTeam(f *benchFlags, job *benchJob) bool {
	return !f.netns.on() && !(job.cfg.Collective.Routed() && f.mem == "cuda")
}

// noTeamReason says why a job does not run through the team layer
// (benchThroughTeam false), for --alg auto's error.
func noTeamReason(f *benchFlags) string {
	if f.netns.on() {
		return "the namespace testbed (--netns) runs bench's own executor"
	}
	return "dispatch and combine on device memory run bench's own executor"
}

// benchTeamOptions is the options string of the team context of lanes
// lanes (lanes=auto for --lanes auto) for the flags: the UCX transports (as joinRankJob picks them
// where UCX_TLS is not set), --ipc and --calibration (the team splits
// transfers within each of the topology's nodes, emulated ones included,
// as bench's own engine did). The call deadline stays bench's own
// (--timeout, bench.Config.CallTimeout); the C path of small host calls,
// which lives in the adapter (ucc_tl_goring), is not there.
func benchTeamOptions(f *benchFlags, lanes int) string {
	opts := []string{fmt.Sprintf("lanes=%d", lanes)}
	if f.autoLanes() {
		opts[0] = "lanes=auto" // one team: each call takes the lanes the team picks
	}
	if os.Getenv("UCX_TLS") == "" {
		tls := launch.DefaultTLS()
		if f.mem == "cuda" {
			tls += ",cuda"
		}
		opts = append(opts, "tls="+tls)
	}
	if !f.ipc {
		opts = append(opts, "ipc=n")
	}
	if f.calibration != "" {
		opts = append(opts, "calibration="+f.calibration)
	}
	return strings.Join(opts, ";")
}

// joinTeamJob makes the rank's context and team, one of each per lane
// count of --lanes (a team's lanes are its context's option, lanes=W),
// joins the coordinator with the teams' cards and the rank's emulated
// (node, local) place, and connects each team from the cards of every
// hello; the job's failure watch is on as in joinRankJob.
func joinTeamJob(ctx context.Context, role launch.Role, node, local int, f *benchFlags, job *benchJob, stderr io.Writer) (rj *rankJob, err error) {
	owned := &rankJob{}
	rj = owned
	defer func() {
		if err != nil {
			owned.close() // a failed join returns a nil rj: close what it opened
		}
	}()
	counts := job.cfg.LaneCounts()
	teams := make([]*team.Team, len(counts))
	cards := make([][]byte, len(counts))
	for i, w := range counts {
		if teams[i], cards[i], err = rj.openTeam(role, benchTeamOptions(f, w), f.devicePoll, job); err != nil {
			return nil, fmt.Errorf("team of %d lanes: %w", w, err)
		}
	}
	host, _ := os.Hostname()
	sess, err := launch.Start(ctx, role, launch.Peer{Host: host, Node: node, Local: local, Payload: launch.EncodeLaneAddresses(cards)}, launch.Options{})
	if err != nil {
		return nil, err
	}
	rj.sess = sess
	rj.watch(role.Rank, stderr)
	for i, tm := range teams {
		all, slot, err := teamCards(sess.Peers(), i, len(teams))
		if err != nil {
			return nil, err
		}
		if err := tm.Connect(all, slot); err != nil {
			return nil, fmt.Errorf("team of %d lanes: %w", counts[i], err)
		}
		rj.data = append(rj.data, tm.Transport())
	}
	rj.teams, rj.tr = map[int]*team.Team{}, teams[0].Transport()
	for i, w := range counts {
		rj.teams[w] = teams[i]
	}
	return rj, nil
}

// openTeam makes a context of opts (its GPUs' executors polling every
// devicePoll: --device-poll) and the rank's team in it, on the job's
// topology, and returns the team and its card; rj closes both.
func (rj *rankJob) openTeam(role launch.Role, opts string, devicePoll time.Duration, job *benchJob) (*team.Team, []byte, error) {
	tctx, err := team.NewContext(opts, nil)
	if err != nil {
		return nil, nil, err
	}
	tctx.SetDevicePoll(devicePoll)
	rj.closers = append(rj.closers, func() { _ = tctx.Close() })
	tm, err := team.NewTeam(tctx, role.Rank, role.Size)
	if err != nil {
		return nil, nil, err
	}
	rj.closers = append(rj.closers, func() { _ = tm.Destroy() })
	if err := tm.SetTopology(job.cfg.Topo); err != nil {
		return nil, nil, err
	}
	card, err := tm.Card()
	return tm, card, err
}

// teamCards lays team i's cards (of teams per rank) the peers' hellos
// carried in slots of the longest card's size, as UCC's allgather of
// goring_team_card gives them to goring_team_connect.
func teamCards(peers []launch.Peer, i, teams int) ([]byte, int, error) {
	each := make([][]byte, len(peers))
	slot := 0
	for r, p := range peers {
		cs, err := launch.DecodeLaneAddresses(p.Payload, teams)
		if err != nil {
			return nil, 0, fmt.Errorf("rank %d's hello: %w", r, err)
		}
		each[r] = cs[i]
		slot = max(slot, len(cs[i]))
	}
	cards := make([]byte, len(peers)*slot)
	for r, c := range each {
		copy(cards[r*slot:], c)
	}
	return cards, slot, nil
}
