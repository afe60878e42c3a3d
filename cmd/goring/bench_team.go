package main

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
