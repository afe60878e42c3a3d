// Package coll names the vocabulary every other package shares: the
// collectives goring implements, the element datatypes and the reduction
// operators, with the spellings the CLI, the program JSON and UCC use.
//
// It is pure Go: no cgo, no I/O. Parsing functions return precise errors that
// list the accepted names, because they sit directly behind user input.
package coll
