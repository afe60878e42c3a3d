package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/goring-hpc/goring/bench"
	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/team"
)

// goring bench through the team layer: a rank makes a goring context and
// an eager team, as UCC's goring_context_create and goring_team_create
// do, and gives the team the job's topology (the emulated nodes of
// --nodes or --topo). Its team card rides in the coordinator's hello, in
// place of the UCX addresses of the rank's own lanes; the cards every
// hello carried connect the team (goring_team_card, goring_team_connect).
// Every measured call is then a team call (bench.Config.Team), run by the
// runner team.Select picks, and the barriers between iterations go over
// the team's transport.

// benchThroughTeam says whether this job's calls run through the team
// layer. Three kinds of job cannot, and keep bench's own executor over
// its own transports: the namespace testbed, whose UCX workers bind to
// one rail each, which a team (opening its own workers) does not do; a
// comparison of lane counts (--lanes 1,2,4), which a team's lanes, fixed
// by its context's option, cannot make; and dispatch or combine on device
// memory, which the team layer does not run yet.
func benchThroughTeam(f *benchFlags, job *benchJob) bool {
	if f.netns.on() || maxLanes(job.cfg.Lanes) > 1 {
		return false
	}
	return !(job.cfg.Collective.Routed() && f.mem == "cuda")
}

// benchTeamOptions is the team context's options string for the flags:
// the UCX transports (as joinRankJob picks them where UCX_TLS is not
// set), --ipc and --calibration. The call deadline stays bench's own
// (--timeout, bench.Config.CallTimeout); the C path of small host calls,
// which lives in the adapter (ucc_tl_goring), is not there.
func benchTeamOptions(f *benchFlags) string {
	var opts []string
	if os.Getenv("UCX_TLS") == "" {
		tls := defaultTLS()
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

// joinTeamJob makes the rank's context and team, joins the coordinator
// with the team's card and the rank's emulated (node, local) place, and
// connects the team from the cards of every hello; the job's failure
// watch is on as in joinRankJob.
func joinTeamJob(ctx context.Context, role launch.Role, node, local int, f *benchFlags, job *benchJob, stderr io.Writer) (rj *rankJob, err error) {
	rj = &rankJob{}
	defer func() {
		if err != nil {
			rj.close()
		}
	}()
	tctx, err := team.NewContext(benchTeamOptions(f), nil)
	if err != nil {
		return nil, fmt.Errorf("team context: %w", err)
	}
	rj.closers = append(rj.closers, func() { _ = tctx.Close() })
	tm, err := team.NewTeam(tctx, role.Rank, role.Size)
	if err != nil {
		return nil, fmt.Errorf("team: %w", err)
	}
	rj.closers = append(rj.closers, func() { _ = tm.Destroy() })
	if err := tm.SetTopology(job.cfg.Topo); err != nil {
		return nil, err
	}
	card, err := tm.Card()
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	sess, err := launch.Start(ctx, role, launch.Peer{Host: host, Node: node, Local: local, Payload: card}, launch.Options{})
	if err != nil {
		return nil, err
	}
	rj.sess = sess
	rj.watch(role.Rank, stderr)
	if err := tm.Connect(teamCards(sess.Peers())); err != nil {
		return nil, fmt.Errorf("team: %w", err)
	}
	rj.team, rj.tr = tm, tm.Transport()
	rj.data = []bench.Transport{rj.tr}
	return rj, nil
}

// teamCards lays the cards the peers' hellos carried in slots of the
// longest card's size, as UCC's allgather of goring_team_card gives them
// to goring_team_connect.
func teamCards(peers []launch.Peer) ([]byte, int) {
	slot := 0
	for _, p := range peers {
		slot = max(slot, len(p.Payload))
	}
	cards := make([]byte, len(peers)*slot)
	for r, p := range peers {
		copy(cards[r*slot:], p.Payload)
	}
	return cards, slot
}
