//go:build race

package main

// raceEnabled is true when the tests run with -race: the binary they drive
// is then built with the race detector too.
const raceEnabled = true
