// Package scripts holds goring's tools that are not Go: the set-up and
// device scripts (shell) and the baselines and tables of the GPU runs
// (Python: nccl_bench.py, peer_table.py). It has no Go code of its own;
// its tests check the Python tools on recorded measurements
// (testdata/peers: 2xH100, 2026-11-25, docs/gpu.md "Two H100s against NCCL
// and UCC") and their
// refusals, so that a ratio docs/gpu.md records is computed as it says.
package scripts
