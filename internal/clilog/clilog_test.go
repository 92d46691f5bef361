package clilog

import (
	"log/slog"
	"strings"
	"testing"
)

// Without -v the program's own warnings and dorisio's lines are written,
// one line each under the program's name; the runner's are dropped.
func TestOnlyDorisioAndTheProgramAreLogged(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	var out strings.Builder
	Setup(&out, "copy", false, slog.LevelInfo)
	slog.Warn("copy: the job failed; 1 precommitted load it left open was aborted")
	slog.Error("stage.Execute aborting due to bundle error", "stage", "stage-001")
	slog.Warn("dorisio: retrying a load", "table", "demo.t")
	slog.Default().With("component", "dorisio").Info("aborted a lingering txn")
	want := "copy: warn: the job failed; 1 precommitted load it left open was aborted\n" +
		"copy: warn: dorisio: retrying a load (table=demo.t)\n" +
		"copy: aborted a lingering txn\n"
	if out.String() != want {
		t.Errorf("logged\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	Setup(&out, "copy", false, slog.LevelWarn)
	slog.Info("dorisio.Read: planned", "table", "demo.t")
	slog.Warn("dorisio: retrying a load", "table", "demo.t")
	if want := "copy: warn: dorisio: retrying a load (table=demo.t)\n"; out.String() != want {
		t.Errorf("at WARN, logged\n%s\nwant\n%s", out.String(), want)
	}
}
