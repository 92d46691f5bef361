package crash

import (
	"os"
	"testing"
)

var tempDirs []string

// mkdirTemp makes the directory for the binaries shared by all tests; it is
// removed by TestMain.
func mkdirTemp() (string, error) {
	d, err := os.MkdirTemp("", "crash-bin-")
	if err == nil {
		tempDirs = append(tempDirs, d)
	}
	return d, err
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range tempDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}
