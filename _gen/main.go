package main

import (
	"bufio"
	"os"
	"strconv"

	"github.com/dorisbeam/dorisbeam/internal/synth"
)

func main() {
	size, _ := strconv.ParseInt(os.Args[2], 10, 64)
	f, _ := os.Create(os.Args[1])
	w := bufio.NewWriterSize(f, 1<<20)
	var n int64
	buf := make([]byte, 0, 128)
	for id := int64(0); n < size; id++ {
		buf = synth.AppendEvent(buf[:0], id)
		w.Write(buf)
		n += int64(len(buf))
	}
	w.Flush()
	f.Close()
}
