package localpath

import "io/fs"

// NotRegular names what a listed path is when it is neither a regular file
// nor a directory: a FIFO, device or socket is refused before it is opened,
// because opening a FIFO blocks until a writer comes, which may be never.
// It returns "" for a regular file or a directory.
func NotRegular(m fs.FileMode) string {
	switch {
	case m.IsRegular(), m.IsDir():
		return ""
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeIrregular != 0:
		return "not a regular file"
	}
	return "not a regular file"
}

// NotRegularAdvice is the next step after a refused path.
const NotRegularAdvice = "only regular files are loaded: copy what it delivers into a file first, or narrow the pattern"
