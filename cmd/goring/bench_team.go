package main

// goring bench through the team layer: a rank joins with a goring context
// and an eager team per lane count, as UCC makes them (bench.JoinTeams,
// bench/join_team.go), and every measured call is a team call. Which jobs
// do, and why the others cannot, is the flags' business, here.

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
