package main

import "github.com/goring-hpc/goring/bench"

// goring bench through the team layer: a rank joins with a goring context
// and an eager team per lane count, as UCC makes them (bench.JoinTeams,
// bench/join_team.go), and every measured call is a team call. Which jobs
// do, and why the others cannot, is the flags' business, here.

// benchThroughTeam says whether this job's calls run through the team
// layer (bench.ThroughTeam: not on the namespace testbed, nor dispatch or
// combine on device memory).
func benchThroughTeam(f *benchFlags, job *benchJob) bool {
	return bench.ThroughTeam(job.cfg.Collective, f.netns.on(), f.mem == "cuda")
}

// noTeamReason says why a job does not run through the team layer
// (benchThroughTeam false), for the errors of the flags that need it.
func noTeamReason(f *benchFlags) string {
	if f.netns.on() {
		return "the namespace testbed (--netns) runs bench's own executor"
	}
	return "dispatch and combine on device memory run bench's own executor"
}
