// Package bench holds the adaptive limit's benchmarks: the limiter beside the floor it is
// measured against (a fixed bulkhead plus the same clock reads) and its peers, all in the
// same run so that their ratios mean something. See README.md.
package bench
