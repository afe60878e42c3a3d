package bench

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/goring-hpc/goring/launch"
	"github.com/goring-hpc/goring/team"
)

// A rank through the team layer makes a goring context and an eager team,
// as UCC's goring_context_create and goring_team_create do (one of each
// per lane count), and gives the team the job's topology (the emulated
// nodes). Its team card rides in the coordinator's hello, in place of the
// UCX addresses of the rank's own lanes; the cards every hello carried
// connect the team (goring_team_card, goring_team_connect). Every measured
// call is then a team call (Config.Team, LaneTeams), run by the runner
// team.Select picks, and the barriers between iterations go over the
// team's transport.

// TeamOptions are what a bench job sets in its team contexts.
type TeamOptions struct {
	AutoLanes   bool   // one team whose calls take the lanes it picks (lanes=auto)
	CUDA        bool   // device buffers: UCX's cuda transports beside the default ones
	IPC         bool   // the team's push engine for device memory on one host (false: ipc=n)
	Calibration string // a goring.calibration/v1 file the team splits transfers by
}

// For is the options string of the team context of lanes lanes: the UCX
// transports (as JoinLanes picks them where UCX_TLS is not set), the push
// engine and the calibration (the team splits transfers within each of
// the topology's nodes, emulated ones included). The call deadline stays
// bench's own (Config.CallTimeout); the C path of small host calls, which
// lives in the adapter (ucc_tl_goring), is not there.
func (o TeamOptions) For(lanes int) string {
	opts := []string{fmt.Sprintf("lanes=%d", lanes)}
	if o.AutoLanes {
		opts[0] = "lanes=auto" // one team: each call takes the lanes the team picks
	}
	if os.Getenv("UCX_TLS") == "" {
		tls := launch.DefaultTLS()
		if o.CUDA {
			tls += ",cuda"
		}
		opts = append(opts, "tls="+tls)
	}
	if !o.IPC {
		opts = append(opts, "ipc=n")
	}
	if o.Calibration != "" {
		opts = append(opts, "calibration="+o.Calibration)
	}
	return strings.Join(opts, ";")
}

// JoinTeams makes the rank's context and team, one of each per lane count
// of cfg (a team's lanes are its context's option, lanes=W), on cfg's
// topology, its GPUs' executors polling every devicePoll; joins the
// coordinator with the teams' cards and the rank's emulated place; and
// connects each team from the cards of every hello.
func JoinTeams(ctx context.Context, j Join, cfg *Config, opts TeamOptions, devicePoll time.Duration) (*RankJob, error) {
	rj := &RankJob{}
	return joined(rj, rj.joinTeams(ctx, j, cfg, opts, devicePoll))
}

func (rj *RankJob) joinTeams(ctx context.Context, j Join, cfg *Config, opts TeamOptions, devicePoll time.Duration) error {
	counts := cfg.LaneCounts()
	teams := make([]*team.Team, len(counts))
	cards := make([][]byte, len(counts))
	for i, w := range counts {
		var err error
		if teams[i], cards[i], err = rj.openTeam(j.Role, opts.For(w), devicePoll, cfg); err != nil {
			return fmt.Errorf("team of %d lanes: %w", w, err)
		}
	}
	if err := rj.start(ctx, j, launch.EncodeLaneAddresses(cards)); err != nil {
		return err
	}
	for i, tm := range teams {
		all, slot, err := teamCards(rj.Sess.Peers(), i, len(teams))
		if err != nil {
			return err
		}
		if err := tm.Connect(all, slot); err != nil {
			return fmt.Errorf("team of %d lanes: %w", counts[i], err)
		}
		rj.Data = append(rj.Data, tm.Transport())
	}
	rj.Teams, rj.Tr = map[int]*team.Team{}, teams[0].Transport()
	for i, w := range counts {
		rj.Teams[w] = teams[i]
	}
	return nil
}

// openTeam makes a context of opts (its GPUs' executors polling every
// devicePoll) and the rank's team in it, on cfg's topology, and returns
// the team and its card; rj closes both.
func (rj *RankJob) openTeam(role launch.Role, opts string, devicePoll time.Duration, cfg *Config) (*team.Team, []byte, error) {
	tctx, err := team.NewContext(opts, nil)
	if err != nil {
		return nil, nil, err
	}
	tctx.SetDevicePoll(devicePoll)
	rj.OnClose(func() { _ = tctx.Close() })
	tm, err := team.NewTeam(tctx, role.Rank, role.Size)
	if err != nil {
		return nil, nil, err
	}
	rj.OnClose(func() { _ = tm.Destroy() })
	if err := tm.SetTopology(cfg.Topo); err != nil {
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
