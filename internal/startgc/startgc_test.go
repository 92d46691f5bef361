package startgc

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"
)

// The collector's settings are the process's, and this package's
// initialiser has run in the test binary: each case runs in a child
// process of its own, with the environment it names, and reports what it
// saw on stdout.
const childEnv = "STARTGC_TEST_CHILD"

var sink []byte

// allocate makes n bytes of garbage in 64 KiB pieces, as a command's start
// does in small ones.
func allocate(n int) {
	for i := 0; i < n; i += 64 << 10 {
		sink = make([]byte, 64<<10)
	}
}

// gogc reads GOGC without changing it.
func gogc() int {
	p := debug.SetGCPercent(-1)
	debug.SetGCPercent(p)
	return p
}

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		child()
		return
	}
	os.Exit(m.Run())
}

// child runs Done as main does, allocates 24 MB (more than a command's
// start), then up to 256 MB more until a collection has run, and prints
// the collections after each step and GOGC and the memory limit at the end.
func child() {
	Done()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	start := ms.NumGC
	allocate(24 << 20)
	runtime.ReadMemStats(&ms)
	early := ms.NumGC - start
	for i := 0; i < 256 && ms.NumGC == start; i++ {
		allocate(1 << 20)
		runtime.ReadMemStats(&ms)
	}
	// The cleanup that puts GOGC back runs on its own goroutine after the
	// collection.
	for deadline := time.Now().Add(5 * time.Second); gogc() < 0 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	fmt.Printf("early=%d later=%d gogc=%d limit=%d\n", early, ms.NumGC-start-early, gogc(), debug.SetMemoryLimit(-1))
}

func runChild(t *testing.T, env ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	for _, e := range os.Environ() { // GOGC and GOMEMLIMIT only as env gives them
		if !strings.HasPrefix(e, "GOGC=") && !strings.HasPrefix(e, "GOMEMLIMIT=") {
			cmd.Env = append(cmd.Env, e)
		}
	}
	cmd.Env = append(append(cmd.Env, childEnv+"=1"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func TestTheStartRunsNoCollectionThenGOGCIsBack(t *testing.T) {
	got := runChild(t)
	want := fmt.Sprintf("early=0 later=1 gogc=100 limit=%d", int64(math.MaxInt64))
	if !strings.HasPrefix(got, "early=0 ") || !strings.HasSuffix(got, fmt.Sprintf(" gogc=100 limit=%d", int64(math.MaxInt64))) {
		t.Fatalf("after Done: %s; want no collection in the first 24 MB, then GOGC 100 and no memory limit once one has run (%s)", got, want)
	}
}

func TestAGOGCFromTheEnvironmentIsLeftAsItIs(t *testing.T) {
	got := runChild(t, "GOGC=100")
	if strings.HasPrefix(got, "early=0 ") || !strings.Contains(got, " gogc=100 ") {
		t.Fatalf("with GOGC=100 set: %s; want collections in the first 24 MB, as GOGC=100 asks, and GOGC 100", got)
	}
}

func TestAGOMEMLIMITFromTheEnvironmentIsLeftAsItIs(t *testing.T) {
	got := runChild(t, "GOMEMLIMIT=1GiB")
	if strings.HasPrefix(got, "early=0 ") || !strings.HasSuffix(got, fmt.Sprintf(" gogc=100 limit=%d", int64(1<<30))) {
		t.Fatalf("with GOMEMLIMIT=1GiB set: %s; want GOGC 100 from the start (collections in the first 24 MB) and the limit kept", got)
	}
}
