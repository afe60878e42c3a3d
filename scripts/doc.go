// Package scripts holds goring's tools that are not Go: the set-up and
// device scripts (shell) and the baselines and tables of the GPU runs
// (Python: nccl_bench.py, peer_table.py, moe_nccl.py for NCCL's
// all_to_all_single with dispatch's counts, gemm_beside.py for a GEMM
// beside the collectives). The device scripts: device_node.sh (every UCC
// layer on one node), device_beside.sh (the same beside a GEMM),
// device_moe.sh (dispatch and combine beside NCCL), device_netns.sh (the
// multi-node algorithms on GPU buffers over the namespace testbed's
// rails, beside NCCL over sockets on the same rails, table by
// netns_table.py), device_test.sh,
// device_ucc.sh, device_osu.sh, device_host.sh; device_bundle.sh and
// carry_iproute2.sh build what they carry. It has no Go code of its own;
// its tests check the Python tools on recorded measurements
// (testdata/peers: 2xH100, 2026-11-25, docs/gpu.md "Two H100s against NCCL
// and UCC") and their refusals, so that a ratio docs/gpu.md records is
// computed as it says.
package scripts
