// Package nodeexec runs collectives of the ranks of one node, one GPU
// each, as kernels that the GPUs synchronise among themselves (package
// devsync's protocol, cuda's node kernels): the host launches one kernel
// per call (or one per piece of an allreduce or reduce_scatter larger
// than the slots: pieces.go) and polls the kernels' done words in host
// memory, with no host round trip per step. The kernels: allreduce (one
// shot or two), reduce_scatter, allgather and bcast. A small call that
// follows the last within the linger is handed to that call's kernel,
// still on the GPU, through a ring in host memory instead of launched
// (resident.go, devsync/resident.go).
//
// A Local is one rank's side of a team's node collectives: its scratch
// region (devsync's flag area and two data slots), exported by CUDA IPC
// and mapped by every peer once (Card, then Open with every rank's card),
// a host-mapped abort word that every wait in the kernels watches, a
// stream, and the team's epoch. Its calls follow the Runner shape the
// team layer drives: Begin launches, Progress polls without blocking,
// Abort stops a call whose peer died, and the GPU stays usable.
//
// The design is goring's own (docs/gpu.md "Device-driven node
// collectives"); the reductions run in rank order 0..n-1, so every rank
// gets bit-identical results, as package exec's host reductions do.
package nodeexec
