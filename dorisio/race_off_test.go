//go:build !race

package dorisio

const raceDetector = false
