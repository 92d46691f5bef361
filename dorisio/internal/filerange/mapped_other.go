//go:build !(linux || darwin || freebsd)

package filerange

import (
	"errors"
	"os"
)

func mmapFile(*os.File, int64) ([]byte, error) { return nil, errors.New("no mapping here") }

func munmapFile([]byte) {}

func dropPages([]byte) {}
