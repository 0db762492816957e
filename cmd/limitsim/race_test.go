//go:build race

package main

// raceDetector is true under go test -race, which makes the default
// scenario's nine million simulated calls take minutes instead of a second.
const raceDetector = true
