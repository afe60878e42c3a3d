// Package units parses and prints byte sizes the way the CLI accepts them
// ("64MiB", "1M", "4096") and size ranges in OSU style ("1K:64MiB" walks
// powers of two). Pure Go, no I/O.
package units
