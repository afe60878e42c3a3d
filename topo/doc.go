// Package topo describes the machines goring runs on: nodes, their GPUs,
// sockets and NICs, the links between them with a Hockney cost each (alpha,
// the startup in microseconds; beta, the bandwidth in GB/s), and the NIC
// rails that join nodes.
//
// A Topology is plain data with a stable JSON form (schema goring.topo/v1),
// built from a preset, read from a file, or discovered on a real machine by
// the topo/detect package. Every consumer (the model, the schedules, the
// simulator, the UCC layer) reads the same value, so every rank that loads
// the same topology computes the same plan without talking to the others.
//
// This package is pure: no cgo, no I/O beyond encoding the value it is given.
package topo
