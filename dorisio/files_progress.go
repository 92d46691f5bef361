package dorisio

import "sync/atomic"

// What WriteFiles has done in this process, for a program that runs its
// pipeline in its own process (prism, direct, a LOOPBACK job server) and
// wants to show progress while it runs. Remote workers keep their own
// counts; Beam's metrics (rows, bytes, loads) sum them for the whole job.
var (
	filesListed, bytesListed           atomic.Int64
	filesBytesDone, filesRecordsDone   atomic.Int64
	filesLoadsDone, filesAlreadyLoaded atomic.Int64
	filesRecordsAlreadyLoaded          atomic.Int64
	filesRowsLoaded, filesRowsFiltered atomic.Int64
)

// FileProgress is what WriteFiles has listed and loaded in this process
// since it started.
type FileProgress struct {
	Files, Bytes int64 // matched by the patterns
	// LoadedBytes and LoadedRecords are those of the ranges whose loads
	// have returned (records as the split counted them), AlreadyLoaded of
	// them found loaded by an earlier run, holding AlreadyLoadedRecords of
	// the LoadedRecords: a re-run's committed records are LoadedRecords -
	// AlreadyLoadedRecords.
	LoadedBytes, LoadedRecords int64
	Loads, AlreadyLoaded       int64
	AlreadyLoadedRecords       int64
	// LoadedRows and FilteredRows are what Doris accepted and filtered
	// (NumberLoadedRows, NumberFilteredRows) of those loads; a range found
	// loaded by an earlier run counts its records as loaded.
	LoadedRows, FilteredRows int64
}

// FilesProgress returns WriteFiles' progress in this process.
func FilesProgress() FileProgress {
	return FileProgress{
		Files: filesListed.Load(), Bytes: bytesListed.Load(),
		LoadedBytes: filesBytesDone.Load(), LoadedRecords: filesRecordsDone.Load(),
		Loads: filesLoadsDone.Load(), AlreadyLoaded: filesAlreadyLoaded.Load(),
		AlreadyLoadedRecords: filesRecordsAlreadyLoaded.Load(),
		LoadedRows:           filesRowsLoaded.Load(), FilteredRows: filesRowsFiltered.Load(),
	}
}

// noteLoaded counts a range of n bytes when its load returns.
func noteLoaded(n int64) func(CommitResult) {
	return func(r CommitResult) {
		filesBytesDone.Add(n)
		filesRecordsDone.Add(r.Rows)
		filesLoadsDone.Add(1)
		filesRowsLoaded.Add(r.LoadedRows)
		filesRowsFiltered.Add(r.FilteredRows)
		if r.AlreadyCommitted {
			filesAlreadyLoaded.Add(1)
			filesRecordsAlreadyLoaded.Add(r.Rows)
		}
	}
}
