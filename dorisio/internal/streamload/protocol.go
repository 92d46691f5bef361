package streamload

// Protocol words in one place. Every Doris status string and message
// fragment the client acts on is here, each marked with what the client does:
//
//   - "retry same label": the load did not happen and its label is free
//     (the txn was never begun or was rolled back to ABORTED), so the same
//     body is resent with the same label after a backoff: up to
//     Retry.MaxAttempts times, or, for a tablet's state that time repairs,
//     for as long as Retry.TabletWait (the pace).
//   - "resolve by label state": the answer does not tell whether the load
//     happened; GET get_load_state decides before anything is resent.
//   - "fatal": resending cannot help; the caller gets a typed error.
//
// Stream load answers are one table, loadAnswers; the FE's envelopes and
// 2PC answers have their own small readers below it.
//
// Sections (§n) refer to docs/protocol.md.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
)

// Stream load Status values (§4).
const (
	statusSuccess        = "Success"
	statusPublishTimeout = "Publish Timeout"
	statusLabelExists    = "Label Already Exists"
	statusFail           = "Fail"
)

// Label / txn states of get_load_state `data` (§1.5, §6).
const (
	StateUnknown      = "UNKNOWN"
	StatePrepare      = "PREPARE"
	StatePrecommitted = "PRECOMMITTED"
	StateCommitted    = "COMMITTED"
	StateVisible      = "VISIBLE"
	StateAborted      = "ABORTED"
)

var knownStates = map[string]bool{
	StateUnknown: true, StatePrepare: true, StatePrecommitted: true,
	StateCommitted: true, StateVisible: true, StateAborted: true,
}

// ExistingJobStatus values of a Label Already Exists answer (§4, §6).
const (
	jobRunning      = "RUNNING"      // existing txn PREPARE
	jobPrecommitted = "PRECOMMITTED" // existing txn PRECOMMITTED
	jobFinished     = "FINISHED"     // existing txn COMMITTED or VISIBLE
)

var (
	// Label exists, old, new and cloud forms all share this stem (§4).
	reRelateTxn = regexp.MustCompile(`relate to txn \[(\d+)\]`)
	// 2PC texts (§5.2).
	reAlreadyCommitted = regexp.MustCompile(`is already (?:committed|visible), not pre-committed`)
	reAlreadyAborted   = regexp.MustCompile(`is already aborted[.,] abort reason: ?(.*)$`)
	reCouldNotAbort    = regexp.MustCompile(`is already (COMMITTED|VISIBLE), could not abort`)
	reTxnNotFound      = regexp.MustCompile(`transaction \[\d+\] not found`)
	// Txn quota texts (§4, §8).
	reTxnQuota = regexp.MustCompile(`current (?:running|committed) txns on (db|table) (\d+) is (\d+), larger than limit (\d+)`)
)

// parseTxnQuota reads a quota refusal; nil when msg is none.
func parseTxnQuota(msg string) *TxnQuota {
	m := reTxnQuota.FindStringSubmatch(msg)
	if m == nil {
		return nil
	}
	q := &TxnQuota{Scope: m[1]}
	q.ID, _ = strconv.ParseInt(m[2], 10, 64)
	q.Running, _ = strconv.ParseInt(m[3], 10, 64)
	q.Limit, _ = strconv.ParseInt(m[4], 10, 64)
	return q
}

// action is what the client does with an answer.
type action int

const (
	actSuccess     action = iota // the load happened
	actLabelExists               // Label Already Exists: decided by the caller's history
	actRetry                     // retry same label
	actResolve                   // resolve by label state
	actFatal                     // fatal
)

// pace is how the client resends an answer it retries.
type pace int

const (
	paceAttempts pace = iota // up to Retry.MaxAttempts attempts, backing off
	paceTablet               // for as long as Retry.TabletWait: a tablet's state that time repairs
)

// nextStep renders the user's next step for the load an answer ended.
type nextStep func(req LoadRequest) string

// checkCredentials is the next step of every refusal of the credentials or
// privileges, whichever envelope carried it.
func checkCredentials(req LoadRequest) string {
	return "check Config.User, Config.Password and the LOAD privilege on " + req.DB + "." + req.Table
}

// always is a next step that does not depend on the load.
func always(s string) nextStep { return func(LoadRequest) string { return s } }

// verdict is the classification of one load answer.
type verdict struct {
	act    action
	kind   error    // sentinel for fatal answers
	pace   pace     // for actRetry
	reason string   // one line, for logs and errors
	next   nextStep // when the call ends with this answer; nil: the caller's own
}

// respShape is what kind of body came back.
type respShape int

const (
	shapeNotDoris respShape = iota // not JSON, or JSON without the keys of any Doris envelope
	shapeLoad                      // BE stream load JSON: Status and Label (§4)
	shapeFEResult                  // FE RestBaseResult: status + msg (§1.1)
	shapeFEEntity                  // FE ResponseEntity: msg + code [+ data] (§1.1)
)

// loadResponse is a parsed stream load answer. Unknown keys are ignored;
// keys are matched exactly (Doris uses both "Status" and "status").
type loadResponse struct {
	shape                                                      respShape
	TxnID                                                      int64
	Status, ExistingJobStatus, Message                         string
	ErrorURL, FirstErrorMsg                                    string
	TotalRows, LoadedRows, FilteredRows, UnselectedRows, Bytes int64
	// FE envelopes.
	feStatus, feMsg, feData string
	feCode                  int64
}

// parseLoadResponse parses any answer to a stream load PUT. It never fails:
// an answer it does not recognise has shape shapeNotDoris.
func parseLoadResponse(body []byte) loadResponse {
	var r loadResponse
	m, ok := jsonObject(body)
	if !ok {
		return r
	}
	status, hasStatus := jsonString(m, "Status")
	_, hasLabel := jsonString(m, "Label")
	switch {
	case hasStatus && hasLabel && status != "":
		r.shape = shapeLoad
		r.Status = status
		r.TxnID, _ = jsonInt(m, "TxnId")
		r.ExistingJobStatus, _ = jsonString(m, "ExistingJobStatus")
		r.Message, _ = jsonString(m, "Message")
		r.ErrorURL, _ = jsonString(m, "ErrorURL")
		r.FirstErrorMsg, _ = jsonString(m, "FirstErrorMsg")
		r.TotalRows, _ = jsonInt(m, "NumberTotalRows")
		r.LoadedRows, _ = jsonInt(m, "NumberLoadedRows")
		r.FilteredRows, _ = jsonInt(m, "NumberFilteredRows")
		r.UnselectedRows, _ = jsonInt(m, "NumberUnselectedRows")
		r.Bytes, _ = jsonInt(m, "LoadBytes")
	default:
		r.fillFE(m)
	}
	return r
}

func (r *loadResponse) fillFE(m map[string]json.RawMessage) {
	if code, ok := jsonInt(m, "code"); ok {
		if msg, ok := jsonString(m, "msg"); ok {
			r.shape, r.feCode, r.feMsg = shapeFEEntity, code, msg
			r.feData = jsonText(m, "data")
			return
		}
	}
	st, okS := jsonString(m, "status")
	msg, okM := jsonString(m, "msg")
	if okS && okM && st != "" {
		r.shape, r.feStatus, r.feMsg = shapeFEResult, st, msg
	}
}

// classifyLoad decides what to do with a load answer: its HTTP status, the
// parsed body, and whether the load is two-phase.
func classifyLoad(httpStatus int, twoPhase bool, r loadResponse) verdict {
	v := classifyLoadBody(r)
	switch {
	case httpStatus != http.StatusOK && v.act != actFatal && !(r.shape == shapeFEEntity && r.feCode == int64(httpStatus)):
		// resolve by label state: Doris answers loads with 200 (§1.3), except
		// its own 503 "not ready" envelope; anything else is an intermediary.
		return verdict{act: actResolve, reason: fmt.Sprintf("HTTP %d is not a Doris load answer", httpStatus)}
	case v.act == actSuccess && twoPhase && r.TxnID <= 0:
		// resolve by label state: a precommitted load always has a txn id (§4).
		return verdict{act: actResolve, reason: "two-phase load answered Success without a TxnId"}
	}
	return v
}

// classifyLoadBody decides on the body alone: the FE's envelopes by their
// own readings, a BE's answer by the first row of loadAnswers it matches.
func classifyLoadBody(r loadResponse) verdict {
	switch r.shape {
	case shapeNotDoris:
		// resolve by label state: something other than Doris answered (§2, proxy/HTML/empty).
		return verdict{act: actResolve, reason: "the answer is not a Doris stream load JSON"}
	case shapeFEEntity:
		return classifyFEEntity(r.feCode, r.feMsg+" "+r.feData)
	case shapeFEResult:
		return classifyFEResult(r.feMsg)
	}
	for _, a := range loadAnswers {
		if a.match(r) {
			return a.verdict
		}
	}
	// resolve by label state: an unrecognised Fail is confirmed rolled back before resending (§4 caveat).
	return verdict{act: actResolve, reason: "unrecognised Fail message"}
}

// loadAnswer is one row of the table of stream load answers: the answers it
// matches (Doris' words), and what the client does with them.
type loadAnswer struct {
	match func(r loadResponse) bool
	verdict
}

// statusIs matches an answer's Status.
func statusIs(status string) func(loadResponse) bool {
	return func(r loadResponse) bool { return r.Status == status }
}

// failSays matches a Fail whose Message holds any of frags.
func failSays(frags ...string) func(loadResponse) bool {
	return func(r loadResponse) bool { return r.Status == statusFail && containsAny(r.Message, frags...) }
}

// loadAnswers is every BE stream load answer the client tells apart, in the
// order they are tried (specific words first: FE texts arrive wrapped as
// [ANALYSIS_ERROR] or [INTERNAL_ERROR], so they precede the generic
// refusals). Each row: Doris' words → action (retry the same label, resolve
// by label state, fatal), kind, pace, reason, next step. Texts are from BE
// stream_load.cpp and the FE's transaction and planning code, 2.0 to
// master; docs/protocol.md §4 quotes them.
var loadAnswers = []loadAnswer{
	// success: non-2PC VISIBLE, 2PC PRECOMMITTED (§4).
	{statusIs(statusSuccess), verdict{act: actSuccess, reason: "Success"}},
	// success: committed, visible later; the label is not reusable (§4).
	{statusIs(statusPublishTimeout), verdict{act: actSuccess, reason: "Publish Timeout: committed, visible later"}},
	// decided by the caller: ours after an ambiguous send, else someone else's (§5.4).
	{statusIs(statusLabelExists), verdict{act: actLabelExists, kind: ErrLabelExists, reason: "label used by a non-aborted txn"}},
	// resolve by label state: a Status this client does not know says nothing certain.
	{func(r loadResponse) bool { return r.Status != statusFail }, verdict{act: actResolve, reason: "a Status this client does not know"}},

	// fatal: rows rejected; the same rows fail again (§4; old BEs: see isDataQuality).
	{failSays("all partitions have no load data"), verdict{act: actFatal, kind: ErrDataQuality, reason: "rows rejected by data quality checks",
		next: always("no row reached the table (every row was filtered, or the body was empty): fix the rows or the where header; no txn remains")}},
	{isDataQuality, verdict{act: actFatal, kind: ErrDataQuality, reason: "rows rejected by data quality checks",
		next: always("fix the rejected rows (see the error log) or raise max_filter_ratio; no txn remains")}},
	// fatal: credentials or privileges (§2).
	{failSays("NOT_AUTHORIZED", "no valid Basic authorization", "Access denied"), verdict{act: actFatal, kind: ErrAuth,
		reason: "credentials or privileges refused", next: checkCredentials}},
	// fatal for this call, retry same label later: txn quota, begin refused,
	// label free (§4, §10.5). The caller owns the wait: only it knows how
	// many of the running txns are its own (Error.Quota).
	{func(r loadResponse) bool { return r.Status == statusFail && reTxnQuota.MatchString(r.Message) }, verdict{act: actFatal, kind: ErrTxnQuota,
		reason: "the transaction quota is reached",
		next:   always("load again with the same label once other transactions of the database have ended, or raise max_running_txn_num_per_db; nothing was begun")}},
	// retry same label, for minutes: too many tablet versions, load rolled
	// back (§4, §10.6); compaction merges versions as time passes.
	{failSays("E-235", "err=-235", "version count", "too many versions"), verdict{act: actRetry, pace: paceTablet,
		reason: "too many tablet versions (-235): loads into this table come faster than compaction merges them",
		next: always("make fewer, bigger loads into this table (a larger dorisio.WithMaxBatchBytes and WithMaxBatchRows, a longer WithFlushInterval with stream batching, " +
			"fewer bundles or shards writing it at once), or let compaction keep up (the BE's max_cumu_compaction_threads; max_tablet_version_num, 2000 by default, " +
			"bounds the versions), or wait longer (RetryPolicy.TabletWait); nothing was loaded")}},
	// retry same label, for minutes: the planner found a tablet with fewer
	// alive replicas than a load needs (a BE down or restarting,
	// apache/doris#27854), or the commit found fewer replicas written; the
	// BE rolled back the txn it had begun (§4).
	{failSays(replicaFew...), verdict{act: actRetry, pace: paceTablet,
		reason: "a tablet has fewer alive replicas than a load needs (a BE down or restarting)",
		next: always("check the BEs holding this tablet (SHOW BACKENDS; SHOW TABLET <id> for its replicas): load again with the same label once they are back, " +
			"or wait longer (RetryPolicy.TabletWait); nothing was loaded")}},
	// fatal: too many segments in one tablet's rowset (-238): this body is
	// too big for its tablets under the BE's memory, and resending it
	// unchanged fails the same way (§4, §8).
	{failSays("E-238", "err=-238", "too many segments", "TOO_MANY_SEGMENTS"), verdict{act: actFatal,
		reason: "too many segments in one tablet (-238): the load is too big for the table's tablets",
		next:   tooManySegmentsNext}},
	// retry same label: BE not yet connected to the master FE, no txn begun (§4).
	{failSays("Have not get FE Master heartbeat", "E-240"), verdict{act: actRetry, reason: "BE has no FE master heartbeat yet",
		next: always("load again with the same label once the BE has joined the cluster; nothing was loaded")}},
	// retry same label: body cut short, the BE rolled the txn back (§1.3).
	{failSays("receive body don't equal with body bytes"), verdict{act: actRetry, reason: "body cut short in transit"}},
	// resolve by label state: an FE lock or RPC timed out after begin (planning, precommit,
	// commit); the BE rolls the txn back, so ABORTED/UNKNOWN then resends the same label.
	{failSays(dorisTimeouts...), verdict{act: actResolve, reason: "a timeout inside Doris (FE lock or RPC) that may leave a txn"}},

	// fatal: final refusals with a known cause; resending cannot change them.
	{failSays("data size exceeds quota", "DATA_QUOTA_EXCEED"), verdict{act: actFatal, // FE begin: "Database[db] data size exceeds quota[1.000 GB]"
		reason: "the database's data quota is used up",
		next:   always("raise the quota (ALTER DATABASE ... SET DATA QUOTA ...) or free space, then load again; nothing was loaded")}},
	{failSays("2pc is unsupported for mow table"), verdict{act: actFatal, // BE, cloud mode, merge-on-write UNIQUE table
		reason: "Doris refuses two-phase commit on merge-on-write tables in cloud mode",
		next:   always("load this table with at-least-once delivery (dorisio.WithDelivery(dorisio.AtLeastOnce)) or into a table without merge-on-write; nothing was loaded")}},
	{failSays("Two phase commit (2PC) for stream load was disabled"), verdict{act: actFatal, // BE disable_stream_load_2pc
		reason: "two-phase commit is disabled on this BE (disable_stream_load_2pc)",
		next:   always("enable it on the BEs, or use at-least-once delivery (dorisio.WithDelivery(dorisio.AtLeastOnce)); nothing was loaded")}},
	{failSays("exceed BE's conf `streaming_load", "body exceed max size", "exceed the max size"), verdict{act: actFatal, // [E-217] master, 2.x forms
		reason: "the load body is larger than the BE accepts (streaming_load_max_mb, streaming_load_json_max_mb for JSON)",
		next:   always("make loads smaller (dorisio.WithMaxBatchBytes) or raise the BE limit; nothing was loaded")}},
	{failSays("disable_load_job is set to true"), verdict{act: actFatal, // FE Config.disable_load_job
		reason: "loads are disabled on this cluster (FE disable_load_job)",
		next:   always("ask the Doris administrator to set disable_load_job=false; nothing was loaded")}},
	{failSays("compress data of JSON format is not supported"), verdict{act: actFatal, // BE before 3.0.5 (apache/doris#48990, #49044)
		reason: "Doris before 3.0.5 cannot read compressed JSON",
		next:   always("drop dorisio.WithCompression for JSON, or load CSV (dorisio.WithFormat(dorisio.CSV)) compressed, or upgrade Doris to 3.0.5 or later; nothing was loaded")}},
	{failSays("NOT_IMPLEMENTED_ERROR"), verdict{act: actFatal, // any other Status::NotSupported
		reason: "Doris does not support this request here",
		next:   always("change the request (headers, delivery, table) as Doris' message says; nothing was loaded")}},
	// fatal: bad label, header, database or table; resending the same request fails again (§3, §4).
	{failSays("Label format error", "Invalid timeout", "INVALID_ARGUMENT", "NOT_FOUND", "unknown data format", "ANALYSIS_ERROR", "Invalid "),
		verdict{act: actFatal, reason: "request refused by Doris", next: always("fix the request (headers, database, table, label) and load again; no txn remains")}},
	// resolve by label state: may be the BE→FE commit RPC failing after the FE committed (§4 caveat).
	{failSays("NETWORK_ERROR", "THRIFT_RPC_ERROR", "RPC", "rpc", "Thrift", "timed out", "timeout", "TIMEOUT", "Connection refused", "connection",
		"Couldn't open transport", "SERVICE_UNAVAILABLE", "FE address is not available", "NOT_MASTER"),
		verdict{act: actResolve, reason: "network/RPC failure that may hide a commit"}},
}

// replicaFew are the texts of a tablet with too few replicas for a load:
// the planner's "tablet <id> alive replica num <n> < quorum replica num
// <m>" (2.0; "< load required replica num" in master) and "tablet <id> no
// available replica", and the commit's "Tablet [<id>] success replica num
// <n> is less than quorum replica num <m>" (FE REPLICA_FEW_ERR, errCode 3).
var replicaFew = []string{"alive replica num", "no available replica", "success replica num"}

// tooManySegmentsNext is the next step of a -238: each tablet of a load
// writes a segment per memtable flush (write_buffer_size, 200 MB, sooner
// under memory pressure) and the BE refuses a load that makes more than
// max_segment_num_per_rowset (1000) in one tablet (§8).
func tooManySegmentsNext(req LoadRequest) string {
	size := "this load"
	if req.Body != nil && req.Body.Len() > 0 {
		size = fmt.Sprintf("this load (%d bytes before compression)", req.Body.Len())
	}
	return "make loads smaller than " + size + ": lower dorisio.WithMaxLoadBytes (loads of a bundle grow up to it) or WithMaxBatchBytes, " +
		"or WithRangeBytes for files; or spread the table over more buckets, or raise the BE's max_segment_num_per_rowset (1000 by default); " +
		"resending it unchanged fails the same way, and nothing was loaded"
}

// dorisTimeouts are the FE texts of a lock or internal RPC that timed out
// on the stream-load path (FE GlobalTransactionMgr / FrontendServiceImpl,
// master and 2.1/3.0): "get tableList write lock timeout, tableList=(...)"
// (precommit, commit, 2PC commit/abort, rollback), "get table read lock
// timeout, database=..,table=.." (planning, after begin), "get database
// read lock timeout" (older FEs), a Java TimeoutException relayed as
// INTERNAL_ERROR, and "Operation is timeout, txn status is ..." (waiting
// for a txn). They arrive wrapped as [ANALYSIS_ERROR]/[INTERNAL_ERROR], so
// they are matched before the generic refusals.
var dorisTimeouts = []string{"lock timeout", "TimeoutException", "Operation is timeout"}

// isDataQuality reports a load Doris failed because of its rows: the
// DATA_QUALITY_ERROR code (2.1+), "too many filtered rows" (bare in 1.x,
// [INTERNAL_ERROR] in 2.0), the strict-mode early stop, "all partitions
// have no load data" (FE commit with no row left, empty_load_as_error), and
// a Fail whose Message is "OK" or empty while rows were filtered or an
// ErrorURL was written: older BEs could report the filtered-rows failure
// with the status overwritten (apache/doris#53393).
func isDataQuality(r loadResponse) bool {
	msg := strings.TrimSpace(r.Message)
	return r.Status == statusFail && (containsAny(msg, "DATA_QUALITY_ERROR", "too many filtered rows", "Encountered unqualified data",
		"all partitions have no load data") ||
		((msg == "" || msg == "OK") && (r.ErrorURL != "" || r.FilteredRows > 0)))
}

// classifyFEEntity handles the FE's msg/code/data envelope on a load PUT.
func classifyFEEntity(code int64, text string) verdict {
	if code == 0 && !strings.Contains(text, "Access denied") {
		// resolve by label state: an FE "success" envelope is not a load answer (§1.1, UserException as data).
		return verdict{act: actResolve, reason: "FE envelope instead of a load answer"}
	}
	return classifyEnvelopeError(code, text)
}

// classifyEnvelopeError is the one reading of a failed msg/code/data
// envelope (§1.1), whatever the call: loads, 2PC, get_load_state, queries.
func classifyEnvelopeError(code int64, text string) verdict {
	switch {
	case code == 401 || strings.Contains(text, "Access denied"):
		// fatal: wrong password, unknown user or missing privilege (§2).
		return verdict{act: actFatal, kind: ErrAuth, reason: "FE refused the credentials", next: checkCredentials}
	case code == 500 || code == 503:
		// retry: FE internal error, or not ready (HTTP 503), before anything was begun (§1.1, §1.7).
		return verdict{act: actRetry, reason: "FE internal error or not ready"}
	default:
		// fatal: FE refused the request (bad request, not found, unknown database, disabled endpoint) (§1.1).
		return verdict{act: actFatal, reason: "FE refused the request"}
	}
}

// classifyFEResult handles the FE's status/msg envelope (always FAILED here).
func classifyFEResult(msg string) verdict {
	switch {
	case containsAny(msg, "Access denied"):
		// fatal: LOAD privilege missing (§1.1 step 6).
		return verdict{act: actFatal, kind: ErrAuth, reason: "LOAD privilege refused", next: checkCredentials}
	case containsAny(msg, "No backend available"):
		// retry same label: FE found no BE; nothing was begun (§1.1 step 7).
		return verdict{act: actRetry, reason: "no backend available"}
	default:
		// fatal: FE-side validation (missing Expect, db, table, group_commit) (§1.1).
		return verdict{act: actFatal, reason: "FE refused the request"}
	}
}

// relatedTxn extracts N from "relate to txn [N]" (old, new and cloud forms).
func relatedTxn(msg string) int64 {
	m := reRelateTxn.FindStringSubmatch(msg)
	if m == nil {
		return 0
	}
	id, err := strconv.ParseInt(m[1], 10, 64)
	if err != nil {
		return 0
	}
	return id
}

// twoPCOutcome classifies 2PC answers (§1.4, §5.2).
type twoPCOutcome int

const (
	tpcUnknown          twoPCOutcome = iota // resolve: not a 2PC answer; commit/abort are idempotent, so retry
	tpcSuccess                              // the operation happened now
	tpcAlreadyCommitted                     // commit: already committed/visible → success
	tpcAlreadyAborted                       // commit: data loss; abort: success
	tpcNotFound                             // resolve by label state
	tpcCouldNotAbort                        // abort refused: txn committed
	tpcRunningNotFound                      // by label: no running txn (final already) → resolve by label state
	tpcPrepare                              // fatal: commit of a txn still loading
	tpcAuth                                 // fatal: credentials
	tpcRetry                                // retry: FE busy / no backend
	tpcNoDatabase                           // the database does not exist: abort: nothing to abort; commit: fatal
	tpcFatal                                // fatal: anything else Doris refused
)

type twoPCResponse struct {
	outcome     twoPCOutcome
	status, msg string
	reason      string // abort reason for tpcAlreadyAborted
	raw         []byte // the body as received
}

// parse2PCResponse parses and classifies a 2PC answer. It never fails.
func parse2PCResponse(body []byte) twoPCResponse {
	m, ok := jsonObject(body)
	if !ok {
		return twoPCResponse{outcome: tpcUnknown}
	}
	if code, ok := jsonInt(m, "code"); ok {
		msg, _ := jsonString(m, "msg")
		r := twoPCResponse{status: msg, msg: jsonText(m, "data"), outcome: tpcFatal}
		switch v := classifyEnvelopeError(code, r.msg); {
		case v.kind == ErrAuth:
			r.outcome = tpcAuth
		case v.act == actRetry:
			r.outcome = tpcRetry
		}
		return r
	}
	st, okS := jsonString(m, "status")
	msg, okM := jsonString(m, "msg")
	if !okS || st == "" || (!okM && st != statusSuccess) {
		return twoPCResponse{outcome: tpcUnknown}
	}
	r := twoPCResponse{status: st, msg: msg}
	switch {
	case st == statusSuccess:
		r.outcome = tpcSuccess // success: "... commit successfully."; some BEs send no msg at all
	case reAlreadyCommitted.MatchString(msg):
		r.outcome = tpcAlreadyCommitted // success for commit: repeated commit (§5.2)
	case reAlreadyAborted.MatchString(msg):
		r.outcome = tpcAlreadyAborted // commit: data loss; abort: repeated abort, success (§5.2)
		r.reason = strings.TrimSpace(reAlreadyAborted.FindStringSubmatch(msg)[1])
	case reCouldNotAbort.MatchString(msg):
		r.outcome = tpcCouldNotAbort // abort refused: the txn is COMMITTED/VISIBLE (§5.2)
	case strings.Contains(msg, "running transaction not found, label="):
		r.outcome = tpcRunningNotFound // resolve by label state: label final (VISIBLE or ABORTED) (§5.2)
	case reTxnNotFound.MatchString(msg) || strings.Contains(msg, "transaction not found, label="):
		r.outcome = tpcNotFound // resolve by label state: cleaned up or never existed (§5.2)
	case strings.Contains(msg, "is prepare, not pre-committed"):
		r.outcome = tpcPrepare // fatal: the load is still running, nothing to commit yet (§5.2)
	case containsAny(msg, "Access denied", "NOT_AUTHORIZED", "no valid Basic authorization"):
		r.outcome = tpcAuth // fatal: credentials or LOAD privilege (§2)
	case st == "FAILED" && strings.Contains(msg, "No backend available"):
		r.outcome = tpcRetry // retry: FE found no BE (§1.1)
	case st == "THRIFT_RPC_ERROR" || st == "SERVICE_UNAVAILABLE" || st == "NOT_MASTER" ||
		containsAny(msg, dorisTimeouts...) || containsAny(msg, "Couldn't open transport", "failed to call frontend service") ||
		containsAny(msg, replicaFew...):
		// retry the same txn: the BE could not reach the master FE, an FE lock timed out,
		// or a tablet had too few replicas written for the commit (a BE restarting); the
		// txn is unchanged and commit/abort are idempotent (after the §5.2 texts above,
		// which may quote a load's failure, timeouts included, as an abort reason).
		r.outcome = tpcRetry
	case strings.Contains(strings.ToLower(msg), "unknown database"):
		r.outcome = tpcNoDatabase // no such database, so no txn in it: nothing to abort, nothing to commit (§4)
	default:
		r.outcome = tpcFatal // fatal: bad txn id, bad operation, dropped table (§1.4)
	}
	return r
}

// parseStateResponse parses a get_load_state answer (§1.5). ok is false when
// the body is not the FE envelope with a known state under "data"; entityCode
// is the envelope's code when there was one (-1 otherwise).
func parseStateResponse(body []byte) (state string, entityCode int64, data string, ok bool) {
	m, isObj := jsonObject(body)
	if !isObj {
		return "", -1, "", false
	}
	code, hasCode := jsonInt(m, "code")
	if !hasCode {
		return "", -1, "", false
	}
	data = jsonText(m, "data")
	if code != 0 {
		return "", code, data, false
	}
	s, isStr := jsonString(m, "data")
	if !isStr || !knownStates[s] {
		return "", code, data, false
	}
	return s, code, data, true
}
