// Package jsondoc reads a JSON input file (a topology, a program, a
// calibration, a claims file, a counts matrix) as exactly one document:
// one definition of the rule every reader of goring's files follows.
// Pure: bytes in, a value or an error out.
package jsondoc
