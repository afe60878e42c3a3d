// Package bench holds what goring bench needs besides moving bytes: the
// choice of warm-up and timed iterations, the validation patterns, the
// statistics across ranks and the writers of results.
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
