package main

import (
	"io"
	"log/slog"

	"github.com/dorisbeam/dorisbeam/internal/clilog"
)

// setupLogging routes slog's default logger to w for this program: without
// -v only dorisio's lines reach it, one line each (clilog); the failure
// itself is printed once by report.
func setupLogging(w io.Writer, verbose bool) { clilog.Setup(w, progName, verbose, slog.LevelInfo) }
