// Package fileprogress counts what dorisio.WriteFiles has done in this
// process, for a program that runs its pipeline in its own process (prism,
// direct, a LOOPBACK job server) and wants to show progress while it runs
// (pipelines/load). Remote workers keep their own counts; Beam's metrics
// (rows, bytes, loads) sum them for the whole job.
package fileprogress

import "sync/atomic"

var (
	filesListed, bytesListed           atomic.Int64
	filesBytesDone, filesRecordsDone   atomic.Int64
	filesLoadsDone, filesAlreadyLoaded atomic.Int64
	filesRecordsAlreadyLoaded          atomic.Int64
	filesRowsLoaded, filesRowsFiltered atomic.Int64
)

// Progress is what WriteFiles has listed and loaded in this process
// since it started.
type Progress struct {
	Files, Bytes int64 // matched by the patterns
	// LoadedBytes and LoadedRecords are those of the ranges whose loads
	// have returned (records as the split counted them), AlreadyLoaded of
	// them found loaded by an earlier run, holding AlreadyLoadedRecords of
	// the LoadedRecords that it loaded: each record is committed by this
	// run, found loaded, or filtered (FilteredRows: by Doris, or rejected),
	// so a run's committed records are LoadedRecords - AlreadyLoadedRecords
	// - FilteredRows.
	LoadedBytes, LoadedRecords int64
	Loads, AlreadyLoaded       int64
	AlreadyLoadedRecords       int64
	// LoadedRows and FilteredRows are what Doris accepted and filtered
	// (NumberLoadedRows, NumberFilteredRows) of those loads; a range found
	// loaded by an earlier run counts its records as loaded.
	LoadedRows, FilteredRows int64
}

// Now returns WriteFiles' progress in this process.
func Now() Progress {
	return Progress{
		Files: filesListed.Load(), Bytes: bytesListed.Load(),
		LoadedBytes: filesBytesDone.Load(), LoadedRecords: filesRecordsDone.Load(),
		Loads: filesLoadsDone.Load(), AlreadyLoaded: filesAlreadyLoaded.Load(),
		AlreadyLoadedRecords: filesRecordsAlreadyLoaded.Load(),
		LoadedRows:           filesRowsLoaded.Load(), FilteredRows: filesRowsFiltered.Load(),
	}
}

// Listed counts a file of size bytes when it is listed.
func Listed(size int64) {
	filesListed.Add(1)
	bytesListed.Add(size)
}

// Loaded counts a range of n bytes holding records (as the split counted
// them) when its load returns; already says an earlier run had loaded it.
func Loaded(n, records, loadedRows, filteredRows int64, already bool) {
	filesBytesDone.Add(n)
	filesRecordsDone.Add(records)
	filesLoadsDone.Add(1)
	filesRowsLoaded.Add(loadedRows)
	filesRowsFiltered.Add(filteredRows)
	if already {
		filesAlreadyLoaded.Add(1)
		filesRecordsAlreadyLoaded.Add(records - filteredRows) // the rows refused again are not loaded
	}
}
