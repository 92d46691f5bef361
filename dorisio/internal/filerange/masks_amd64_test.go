package filerange

// canAVX2 is whether this CPU has what the AVX2 masks need.
var canAVX2 = hasAVX2

// setAVX2 makes the scan use the AVX2 masks or not (as far as the CPU has
// them) and returns what it was.
func setAVX2(on bool) bool {
	was := hasAVX2
	hasAVX2 = on && canAVX2
	return was
}
