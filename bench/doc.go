// Package bench is goring's benchmark runner as a library: it times
// collectives on one rank of a job over any exec transport, for goring
// bench (over UCX), goring calibrate (PingPong) and the transports' own
// tests. It holds what a measurement needs besides moving bytes:
//
//   - runner.go: Config, and Run, the loop over algorithms, sizes and
//     iterations; rankcall.go: one rank's buffers, executor and pattern
//     for one (algorithm, size); barrier.go: the barrier between
//     iterations; memory.go: where buffers live (Memory).
//   - teamcall.go: the calls through goring's team layer (Config.Team),
//     as goring bench runs them: one team.Coll per (algorithm, size),
//     posted and tested as UCC does, its runner chosen by team.Select, so
//     that bench measures what the team layer runs. Without a team the
//     plan's program runs on one exec.Machine (or on lanes, lanes.go) over
//     the transports Run is given: the in-memory network of tests, the
//     transports' own tests, the namespace testbed's rails.
//   - auto.go: Auto, the calls that name no algorithm (goring bench --alg
//     auto), so that the team's own choice runs, engines included, as for
//     a UCC call; the rows name what ran (Row.Ran, Row.Runner).
//   - iterations.go, pattern.go, stats.go: OMB's iteration counts, the
//     validation patterns, the statistics across ranks.
//   - results.go: the rows and their writers; traffic.go: alltoallv's
//     traffic matrices, as the CLI's flags name them.
//   - pingpong.go: the one-way latency between two ranks;
//     nimble_timing.go: how long NIMBLE's planner takes on a routing's
//     demand (goring plan dispatch).
//   - admit.go: which algorithms a job runs (Candidates, Config.Admit:
//     the sizes each serves, the rest skipped); emulated.go: the
//     topology of a job that names none (EmulatedTopology); predict.go:
//     the simulator's time of a row's plan (Config.Predict, printed
//     beside a testbed run's rows).
//   - join.go: how a rank of goring's own jobs (goring bench, goring
//     calibrate, bench p2p) joins its job (a RankJob: its launch.Session
//     with the coordinator, the failure watch, the data plane): through
//     the team layer (join_team.go, one team per lane count,
//     TeamOptions), over lanes of UCX workers of its own (join_lanes.go),
//     or over the namespace testbed's rails (join_rails.go); gpu.go: a
//     rank's GPU;
//     gpu_wiring.go: RankJob.UseGPU, the push engine and host staging its
//     own transports need (on the testbed's rails: gpu_rails.go).
//   - rank.go: one rank of goring bench from its join to its last barrier
//     (JoinRank, RankRun.Run: the way it joins, ThroughTeam; its memory;
//     the timed loop), given the flags' answers as a RankSpec;
//     calibration.go: the push engine's planners of a job from a
//     calibration (CalibrationPlanners); profile.go: a rank's CPU profile
//     ($GORING_CPUPROFILE_DIR).
//
// It follows the OSU Micro-Benchmarks (OMB) conventions so that numbers
// compare one to one with osu_allgather and friends:
//
//   - Iterations: 1000 timed iterations after 200 warm-up ones up to
//     LargeMessageBytes (8 KiB), 100 after 10 above it; --iters and
//     --warmup override both.
//   - Each rank times every iteration from just before the collective is
//     posted to its local completion, and averages over the timed
//     iterations. The reported avg/min/max are the mean, minimum and maximum
//     of those per-rank averages (OMB reduces them with MPI_Reduce).
//   - Validation (OMB's --validation): before every iteration each rank
//     fills its input with a pattern that depends on its rank, the
//     iteration and the byte or element index; after it, the output is
//     checked exactly. Reduction patterns use small integers so that every
//     partial result is exact in every datatype (float16 and bfloat16
//     included) whatever order the algorithm reduces in.
//   - Bus bandwidth follows nccl-tests, with the rules of
//     coll.BusBandwidthGBps (shared with goring sim's predictions).
//
// The output formats are a table in OSU's layout, CSV and the JSON document
// of docs/contracts.md ({"results":[...]}); the CLI draws the PNG itself,
// so that nothing below it (the team layer, the executor's tests) links a
// plotting library.
package bench
