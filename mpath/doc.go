// Package mpath turns the multi-path model's split of one GPU-to-GPU
// transfer (model.Split: bytes per path, chunks per staged path) into the
// copies that carry it, in the order a device must run them: the schedule
// of Multi-path model, Algorithm 1 and Fig. 3, made concrete.
//
// A Plan is a list of Ops on logical streams. The direct share is one copy
// on stream 0. A staged path j pipelines its share in k chunks through a
// staging buffer of Slots chunk-sized slots: chunk i's first hop (source to
// slot i mod Slots) runs on stream 1+2j, its second hop (slot to
// destination) on stream 2+2j after that first hop, so chunk i's second
// hop overlaps chunk i+1's first; and the first hop of chunk i+Slots waits
// until the second hop of chunk i has drained its slot. Every path's first
// op waits for nothing, so all paths start together.
//
// The package is pure: a device executor (package cudaexec) maps streams
// to CUDA streams and waits to events; Simulate runs a plan against given
// path figures, with contention between the direct copy and the staged
// hops, and checks the ordering rules by moving real bytes.
package mpath
