package streamload

// Protocol words in one place. Every Doris answer the client acts on (status
// strings, message fragments, envelope codes) is one row of the table
// answers, whatever the call it came back to, each marked with what the
// client does:
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
// Adding a Doris answer is one row here (and its reproduction in doristest,
// whose Respond fault plays any body on any endpoint). The HTTP status of a
// load's answer adds one rule on top (classifyLoad); reply.go parses the
// bodies the rows match.
//
// Sections (§n) refer to docs/protocol.md.

import (
	"fmt"
	"net/http"
	"regexp"
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
	// The existing txn's state after it: ", status [VISIBLE]." (local),
	// ", status=[TXN_STATUS_VISIBLE]" (cloud).
	reLabelTxnStatus = regexp.MustCompile(`relate to txn \[\d+\], status(?: \[|=\[TXN_STATUS_)([A-Z]+)\]`)
	// 2PC texts (§5.2).
	reAlreadyCommitted = regexp.MustCompile(`is already (?:committed|visible), not pre-committed`)
	reAlreadyAborted   = regexp.MustCompile(`is already aborted[.,] abort reason: ?(.*)$`)
	reCouldNotAbort    = regexp.MustCompile(`is already (COMMITTED|VISIBLE), could not abort`)
	reTxnNotFound      = regexp.MustCompile(`transaction \[\d+\] not found`)
	// Txn quota texts (§4, §8).
	reTxnQuota = regexp.MustCompile(`current (?:running|committed) txns on (db|table) (\d+) is (\d+), larger than limit (\d+)`)
)

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
	// the caller's wait, within RetryPolicy.QuotaWait: the txn quota is
	// back-pressure, and only the caller knows how many running txns are its own
	paceQuota
)

// nextStep renders the user's next step for the load an answer ended
// (an empty LoadRequest for calls other than loads).
type nextStep func(req LoadRequest) string

// checkCredentials is the next step of every refusal of the credentials or
// privileges, whichever envelope carried it.
func checkCredentials(req LoadRequest) string {
	return "check Config.User, Config.Password and the LOAD privilege on " + req.DB + "." + req.Table
}

// always is a next step that does not depend on the load.
func always(s string) nextStep { return func(LoadRequest) string { return s } }

// verdict is the classification of one answer.
type verdict struct {
	act    action
	kind   error        // sentinel for fatal answers
	pace   pace         // for actRetry, and paceQuota for the caller's wait
	reason string       // one line, for logs and errors
	next   nextStep     // when the call ends with this answer; nil: the caller's own
	txn    twoPCOutcome // 2PC answers: what the answer says of the txn (0: read from act and kind)
}

// call is which request an answer came back to; a row applies to the calls
// it names.
type call uint8

const (
	onLoad     call = 1 << iota // PUT _stream_load (FE or BE)
	on2PC                       // PUT _stream_load_2pc (FE or BE)
	onState                     // GET get_load_state (FE)
	onQuery                     // POST /api/query (FE): SHOW TRANSACTION, SHOW FRONTEND CONFIG
	onSchema                    // GET _schema (FE)
	onBackends                  // GET /api/backends (FE)

	// onEnvelope: every call the FE's msg/code/data envelope can answer
	// with its generic reading (queries read theirs first, §12.1).
	onEnvelope = onLoad | on2PC | onState | onQuery | onSchema | onBackends
)

// answer is one row of the table: the calls it applies to, the answers it
// matches (Doris' words), and what the client does with them.
type answer struct {
	on    call
	match func(r loadResponse) bool
	verdict
}

// passingQueryErrors are words of Doris' query and planning failures that
// the same statement a moment later may not meet: a BE down or busy and a
// statement over its time or memory limit (the classes Doris' own error
// map calls backend offline or timeout). Anything else Doris says of a
// statement (an unknown column, bad SQL) it would say again.
var passingQueryErrors = []string{
	"There is no scanNode Backend available", "No available backends", "not alive", "in black list",
	"Timeout", "timeout", "Memory limit exceeded", "MEM_LIMIT_EXCEEDED", "TOO_MANY_TASKS",
	"Connection refused", "RpcException", "rpc failed",
}

// PassingQueryError reports whether msg, Doris' words for a failed query
// or plan, names a failure that another attempt may not meet. dorisio.Read
// retries its planning calls and re-runs its splits on these.
func PassingQueryError(msg string) bool {
	for _, w := range passingQueryErrors {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// classify returns the verdict of the first row for call that matches r.
func classify(on call, r loadResponse) verdict {
	for _, a := range answers {
		if a.on&on != 0 && a.match(r) {
			return a.verdict
		}
	}
	// resolve by label state: an answer no row knows says nothing certain.
	return verdict{act: actResolve, reason: "an answer this client does not know"}
}

// statusIs matches a stream load answer's Status.
func statusIs(status string) func(loadResponse) bool {
	return func(r loadResponse) bool { return r.shape == shapeLoad && r.Status == status }
}

// failSays matches a Fail whose Message holds any of frags.
func failSays(frags ...string) func(loadResponse) bool {
	return func(r loadResponse) bool { return r.Status == statusFail && containsAny(r.Message, frags...) }
}

// isShape matches every answer of one shape.
func isShape(s respShape) func(loadResponse) bool {
	return func(r loadResponse) bool { return r.shape == s }
}

// codeIs matches a failed msg/code/data envelope with one of codes.
func codeIs(codes ...int64) func(loadResponse) bool {
	return func(r loadResponse) bool {
		return r.shape == shapeFEEntity && r.feCode != 0 && containsCode(codes, r.feCode)
	}
}

func containsCode(codes []int64, c int64) bool {
	for _, x := range codes {
		if x == c {
			return true
		}
	}
	return false
}

// envelopeSays matches a failed msg/code/data envelope whose msg or data
// holds any of frags.
func envelopeSays(frags ...string) func(loadResponse) bool {
	return func(r loadResponse) bool {
		return r.shape == shapeFEEntity && r.feCode != 0 && containsAny(r.feMsg+" "+r.feData, frags...)
	}
}

// feSays matches the FE's status/msg envelope whose msg holds any of frags.
func feSays(frags ...string) func(loadResponse) bool {
	return func(r loadResponse) bool { return r.shape == shapeFEResult && containsAny(r.feMsg, frags...) }
}

// twoPCSays matches a 2PC answer whose msg matches re.
func twoPCSays(re *regexp.Regexp) func(loadResponse) bool {
	return func(r loadResponse) bool { return r.shape == shapeFEResult && re.MatchString(r.feMsg) }
}

// answers is every Doris answer the client tells apart, in the order they
// are tried: per call, specific words first (FE texts arrive in a load's
// Message wrapped as [ANALYSIS_ERROR] or [INTERNAL_ERROR], so they precede
// the generic refusals), each shape ending with a row that catches the
// rest. Each row: Doris' words → action (retry the same label, resolve by
// label state, fatal), kind, pace, reason, next step. Texts are from BE
// stream_load.cpp and the FE's transaction, planning and HTTP code, 2.0 to
// master; docs/protocol.md §1, §4 and §5.2 quote them.
var answers = []answer{
	// resolve by label state: something other than Doris answered (§2, proxy/HTML/empty).
	{onLoad, isShape(shapeNotDoris), verdict{act: actResolve, reason: "the answer is not a Doris stream load JSON"}},

	// The FE's msg/code/data envelope (§1.1). A query reads its own codes
	// first: an "Access denied" there is a missing privilege for SHOW
	// TRANSACTION, so listing is unsupported, not the credentials (§12.1).
	// fatal: wrong password or unknown user.
	{onQuery, codeIs(401), verdict{act: actFatal, kind: ErrAuth, reason: "FE refused the credentials"}},
	// retry: not ready, or SQL workers busy.
	{onQuery, func(r loadResponse) bool { return codeIs(503)(r) || envelopeSays("rejected from SQL submitter")(r) },
		verdict{act: actRetry, reason: "FE not ready or its SQL workers busy"}},
	// fatal: ID = n of a txn the FE no longer holds (§12.2.1).
	{onQuery, func(r loadResponse) bool {
		return envelopeSays("transaction with id")(r) && strings.Contains(r.feData, "does not exist")
	}, verdict{act: actFatal, kind: errNoSuchTxn, reason: "the FE no longer holds the txn"}},
	// retry: a BE down or busy, or a statement over its time or memory
	// limit, refuses a read's planning statement (SHOW FRONTENDS,
	// _query_plan) a moment later than it may pass (PassingQueryError).
	{onQuery | onSchema, func(r loadResponse) bool {
		return r.shape == shapeFEEntity && r.feCode != 0 && PassingQueryError(r.feData)
	}, verdict{act: actRetry, reason: "a BE down or busy, or a statement over its limits: it may pass"}},
	// fatal: any other refusal means listing does not work here (cleanup
	// falls back to the timeout); the caller says what that means.
	{onQuery, func(r loadResponse) bool { return r.shape == shapeFEEntity && r.feCode != 0 },
		verdict{act: actFatal, kind: ErrListingUnsupported, reason: "the FE refused the statement"}},
	// resolve by label state: an FE "success" envelope is not a load answer (§1.1, UserException as data).
	{onLoad, func(r loadResponse) bool {
		return r.shape == shapeFEEntity && r.feCode == 0 && !strings.Contains(r.feMsg+" "+r.feData, "Access denied")
	}, verdict{act: actResolve, reason: "FE envelope instead of a load answer"}},
	// fatal: wrong password, unknown user or missing privilege (§2).
	{onEnvelope, func(r loadResponse) bool {
		return r.shape == shapeFEEntity && (r.feCode == 401 || strings.Contains(r.feMsg+" "+r.feData, "Access denied"))
	}, verdict{act: actFatal, kind: ErrAuth, reason: "FE refused the credentials", next: checkCredentials}},
	// retry: FE internal error, or not ready (HTTP 503), before anything was begun (§1.1, §1.7).
	{onEnvelope, codeIs(500, 503), verdict{act: actRetry, reason: "FE internal error or not ready"}},
	// fatal: FE refused the request (bad request, not found, unknown database, disabled endpoint) (§1.1).
	{onEnvelope, isShape(shapeFEEntity), verdict{act: actFatal, reason: "FE refused the request"}},

	// The FE's status/msg envelope on a load (always FAILED here, §1.1).
	// fatal: LOAD privilege missing (§1.1 step 6).
	{onLoad, feSays("Access denied"), verdict{act: actFatal, kind: ErrAuth, reason: "LOAD privilege refused", next: checkCredentials}},
	// retry same label: FE found no BE; nothing was begun (§1.1 step 7).
	{onLoad, feSays("No backend available"), verdict{act: actRetry, reason: "no backend available"}},
	// fatal: the FE got no Expect header, which this client always sends:
	// something in between dropped it (§1.1 step 4).
	{onLoad, feSays("There is no 100-continue header"), verdict{act: actFatal, reason: "the FE got no Expect: 100-continue header, which this client sends on every load",
		next: always("something between this worker and the FE (a proxy, load balancer or ingress) drops the Expect header: send loads to the FEs directly, or let it pass Expect; nothing was loaded")}},
	// fatal: FE-side validation (missing db, table, group_commit) (§1.1).
	{onLoad, isShape(shapeFEResult), verdict{act: actFatal, reason: "FE refused the request"}},

	// 2PC answers: {"status","msg"} from the BE (§1.4, §5.2). Commit and
	// abort read what the answer says of the txn (txn) by their own rules.
	// success: "... commit successfully."; some BEs send no msg at all.
	{on2PC, func(r loadResponse) bool { return r.shape == shapeFEResult && r.feStatus == statusSuccess },
		verdict{act: actSuccess, txn: tpcSuccess, reason: "the operation happened now"}},
	// success for commit: repeated commit (§5.2).
	{on2PC, twoPCSays(reAlreadyCommitted), verdict{act: actSuccess, txn: tpcAlreadyCommitted, reason: "the txn is already committed"}},
	// commit: data loss; abort: repeated abort, success (§5.2). Before the
	// retried texts below: the abort reason may quote a load's failure.
	{on2PC, twoPCSays(reAlreadyAborted), verdict{act: actFatal, kind: ErrTxnAborted, txn: tpcAlreadyAborted, reason: "the txn is already aborted"}},
	// abort refused: the txn is COMMITTED/VISIBLE (§5.2).
	{on2PC, twoPCSays(reCouldNotAbort), verdict{act: actFatal, kind: ErrTxnCommitted, txn: tpcCouldNotAbort, reason: "the txn is already committed"}},
	// resolve by label state: label final (VISIBLE or ABORTED) (§5.2).
	{on2PC, feSays("running transaction not found, label="), verdict{act: actResolve, txn: tpcRunningNotFound, reason: "no running txn has the label"}},
	// resolve by label state: cleaned up or never existed (§5.2).
	{on2PC, func(r loadResponse) bool {
		return twoPCSays(reTxnNotFound)(r) || feSays("transaction not found, label=")(r)
	},
		verdict{act: actResolve, txn: tpcNotFound, reason: "the txn is not found"}},
	// fatal: the load is still running, nothing to commit yet (§5.2).
	{on2PC, feSays("is prepare, not pre-committed"), verdict{act: actFatal, txn: tpcPrepare, reason: "the txn is still loading (PREPARE)"}},
	// fatal: the FE's and the BE's own checks of the txn_operation and
	// txn_id headers (§1.4), which this client always sends right:
	// something in between dropped them.
	{on2PC, feSays("transaction operation should be 'commit' or 'abort'", "convert txn_id [", "No transaction id or label selected",
		"No transaction operation('commit' or 'abort') selected"), verdict{act: actFatal, txn: tpcHeaderLost,
		reason: "the BE did not get the txn_operation or txn_id header this client sent"}},
	// fatal: credentials or LOAD privilege (§2).
	{on2PC, feSays("Access denied", "NOT_AUTHORIZED", "no valid Basic authorization"), verdict{act: actFatal, kind: ErrAuth, txn: tpcAuth, reason: "credentials or privileges refused"}},
	// retry: FE found no BE (§1.1).
	{on2PC, func(r loadResponse) bool { return r.feStatus == "FAILED" && feSays("No backend available")(r) },
		verdict{act: actRetry, txn: tpcRetry, reason: "no backend available"}},
	// retry the same txn: the BE could not reach the master FE, an FE lock timed out,
	// or a tablet had too few replicas written for the commit (a BE restarting); the
	// txn is unchanged and commit/abort are idempotent.
	{on2PC, func(r loadResponse) bool {
		return r.shape == shapeFEResult && (r.feStatus == "THRIFT_RPC_ERROR" || r.feStatus == "SERVICE_UNAVAILABLE" || r.feStatus == "NOT_MASTER" ||
			containsAny(r.feMsg, dorisTimeouts...) || containsAny(r.feMsg, "Couldn't open transport", "failed to call frontend service") ||
			containsAny(r.feMsg, replicaFew...))
	}, verdict{act: actRetry, txn: tpcRetry, reason: "Doris could not do it now (FE unreachable, busy or a lock timed out)"}},
	// no such database, so no txn in it: nothing to abort, nothing to commit (§4).
	{on2PC, func(r loadResponse) bool {
		return r.shape == shapeFEResult && strings.Contains(strings.ToLower(r.feMsg), "unknown database")
	}, verdict{act: actFatal, txn: tpcNoDatabase, reason: "the database does not exist"}},
	// fatal: bad txn id, bad operation, dropped table (§1.4).
	{on2PC, isShape(shapeFEResult), verdict{act: actFatal, txn: tpcFatal, reason: "Doris refused the operation"}},

	// BE stream load answers: Status and Message (§4).
	// success: non-2PC VISIBLE, 2PC PRECOMMITTED (§4).
	{onLoad, statusIs(statusSuccess), verdict{act: actSuccess, reason: "Success"}},
	// success: committed, visible later; the label is not reusable (§4).
	{onLoad, statusIs(statusPublishTimeout), verdict{act: actSuccess, reason: "Publish Timeout: committed, visible later"}},
	// decided by the caller: ours after an ambiguous send, else someone else's (§5.4).
	{onLoad, statusIs(statusLabelExists), verdict{act: actLabelExists, kind: ErrLabelExists, reason: "label used by a non-aborted txn"}},
	// resolve by label state: a Status this client does not know says nothing certain.
	{onLoad, func(r loadResponse) bool { return r.shape == shapeLoad && r.Status != statusFail }, verdict{act: actResolve, reason: "a Status this client does not know"}},

	// fatal: rows rejected; the same rows fail again (§4; old BEs: see isDataQuality).
	{onLoad, failSays("all partitions have no load data"), verdict{act: actFatal, kind: ErrDataQuality, reason: "rows rejected by data quality checks",
		next: always("no row reached the table (every row was filtered, or the body was empty): fix the rows or the where header; no txn remains")}},
	{onLoad, isDataQuality, verdict{act: actFatal, kind: ErrDataQuality, reason: "rows rejected by data quality checks",
		next: always("fix the rejected rows (see the error log), raise max_filter_ratio, or take the refused rows as an output with WithRejectedRows and load the others; no txn remains")}},
	// fatal: the BE got no Basic credentials, which this client always sends (§1.3 step 2).
	{onLoad, failSays("no valid Basic authorization"), verdict{act: actFatal, kind: ErrAuth,
		reason: "the BE got no valid Basic Authorization header",
		next:   always("check that Config.User is set, and that nothing between this worker and the BE (a proxy, load balancer or ingress) drops the Authorization header; nothing was loaded")}},
	// fatal: credentials or privileges (§2).
	{onLoad, failSays("NOT_AUTHORIZED", "Access denied"), verdict{act: actFatal, kind: ErrAuth,
		reason: "credentials or privileges refused", next: checkCredentials}},
	// fatal for this call, retry same label later: txn quota, begin refused,
	// label free (§4, §10.5). The caller owns the wait: only it knows how
	// many of the running txns are its own (Error.Quota).
	{onLoad, func(r loadResponse) bool { return r.Status == statusFail && reTxnQuota.MatchString(r.Message) }, verdict{act: actFatal, kind: ErrTxnQuota, pace: paceQuota,
		reason: "the transaction quota is reached",
		next:   always("load again with the same label once other transactions of the database have ended, or raise max_running_txn_num_per_db; nothing was begun")}},
	// retry same label, for minutes: too many tablet versions, load rolled
	// back (§4, §10.6); compaction merges versions as time passes.
	{onLoad, failSays("E-235", "err=-235", "version count", "too many versions"), verdict{act: actRetry, pace: paceTablet,
		reason: "too many tablet versions (-235): loads into this table come faster than compaction merges them",
		next: always("make fewer, bigger loads into this table (a larger dorisio.WithMaxBatchBytes and WithMaxBatchRows, a longer WithFlushInterval with stream batching, " +
			"fewer bundles or shards writing it at once), or let compaction keep up (the BE's max_cumu_compaction_threads; max_tablet_version_num, 2000 by default, " +
			"bounds the versions), or wait longer (RetryPolicy.TabletWait); nothing was loaded")}},
	// retry same label, for minutes: the planner found a tablet with fewer
	// alive replicas than a load needs (a BE down or restarting,
	// apache/doris#27854), or the commit found fewer replicas written; the
	// BE rolled back the txn it had begun (§4).
	{onLoad, failSays(replicaFew...), verdict{act: actRetry, pace: paceTablet,
		reason: "a tablet has fewer alive replicas than a load needs (a BE down or restarting)",
		next: always("check the BEs holding this tablet (SHOW BACKENDS; SHOW TABLET <id> for its replicas): load again with the same label once they are back, " +
			"or wait longer (RetryPolicy.TabletWait); nothing was loaded")}},
	// fatal: too many segments in one tablet's rowset (-238): this body is
	// too big for its tablets under the BE's memory, and resending it
	// unchanged fails the same way (§4, §8).
	{onLoad, failSays("E-238", "err=-238", "too many segments", "TOO_MANY_SEGMENTS"), verdict{act: actFatal,
		reason: "too many segments in one tablet (-238): the load is too big for the table's tablets",
		next:   tooManySegmentsNext}},
	// retry same label: BE not yet connected to the master FE, no txn begun (§4).
	{onLoad, failSays("Have not get FE Master heartbeat", "E-240"), verdict{act: actRetry, reason: "BE has no FE master heartbeat yet",
		next: always("load again with the same label once the BE has joined the cluster; nothing was loaded")}},
	// retry: a group commit load refused in the header phase, before any
	// byte was read, for want of WAL space (§1.8); the WAL frees as Doris
	// commits its groups.
	{onLoad, failSays("There is no space for group commit stream load async WAL"), verdict{act: actRetry,
		reason: "the BE has no WAL space left for an async group commit load",
		next: always("nothing was loaded; the BE's WAL frees as Doris commits its groups (group_commit_interval_ms): load again later, " +
			"use sync mode (dorisio.WithGroupCommitMode), or give the BE more WAL space (group_commit_wal_max_disk_limit)")}},
	// retry same label: body cut short, the BE rolled the txn back (§1.3).
	{onLoad, failSays("receive body don't equal with body bytes"), verdict{act: actRetry, reason: "body cut short in transit"}},
	// resolve by label state: an FE lock or RPC timed out after begin (planning, precommit,
	// commit); the BE rolls the txn back, so ABORTED/UNKNOWN then resends the same label.
	{onLoad, failSays(dorisTimeouts...), verdict{act: actResolve, reason: "a timeout inside Doris (FE lock or RPC) that may leave a txn"}},

	// fatal: final refusals with a known cause; resending cannot change them.
	{onLoad, failSays("data size exceeds quota", "DATA_QUOTA_EXCEED"), verdict{act: actFatal, // FE begin: "Database[db] data size exceeds quota[1.000 GB]"
		reason: "the database's data quota is used up",
		next:   always("raise the quota (ALTER DATABASE ... SET DATA QUOTA ...) or free space, then load again; nothing was loaded")}},
	{onLoad, failSays("2pc is unsupported for mow table"), verdict{act: actFatal, // BE, cloud mode, merge-on-write UNIQUE table
		reason: "Doris refuses two-phase commit on merge-on-write tables in cloud mode",
		next:   always("load this table with at-least-once delivery (dorisio.WithDelivery(dorisio.AtLeastOnce)) or into a table without merge-on-write; nothing was loaded")}},
	{onLoad, failSays("Two phase commit (2PC) for stream load was disabled"), verdict{act: actFatal, // BE disable_stream_load_2pc
		reason: "two-phase commit is disabled on this BE (disable_stream_load_2pc)",
		next:   always("enable it on the BEs, or use at-least-once delivery (dorisio.WithDelivery(dorisio.AtLeastOnce)); nothing was loaded")}},
	{onLoad, failSays("exceed BE's conf `streaming_load", "body exceed max size", "exceed the max size"), verdict{act: actFatal, // [E-217] master, 2.x forms
		reason: "the load body is larger than the BE accepts (streaming_load_max_mb, streaming_load_json_max_mb for JSON)",
		next:   always("make loads smaller (dorisio.WithMaxBatchBytes) or raise the BE limit; nothing was loaded")}},
	{onLoad, failSays("disable_load_job is set to true"), verdict{act: actFatal, // FE Config.disable_load_job
		reason: "loads are disabled on this cluster (FE disable_load_job)",
		next:   always("ask the Doris administrator to set disable_load_job=false; nothing was loaded")}},
	{onLoad, failSays("compress data of JSON format is not supported"), verdict{act: actFatal, // BE before 3.0.5 (apache/doris#48990, #49044)
		reason: "Doris before 3.0.5 cannot read compressed JSON",
		next:   always("drop dorisio.WithCompression for JSON, or load CSV (dorisio.WithFormat(dorisio.CSV)) compressed, or upgrade Doris to 3.0.5 or later; nothing was loaded")}},
	{onLoad, failSays("NOT_IMPLEMENTED_ERROR"), verdict{act: actFatal, // any other Status::NotSupported
		reason: "Doris does not support this request here",
		next:   always("change the request (headers, delivery, table) as Doris' message says; nothing was loaded")}},
	// fatal: the load's txn left PREPARE while its body was sent: someone
	// aborted it (a user, another job's cleanup of lingering transactions
	// of the same prefix) or Doris' load timeout did (§5.3). Its FE text
	// also carries ANALYSIS_ERROR, read below as a wrong request.
	{onLoad, func(r loadResponse) bool { return r.Status == statusFail && reAlreadyAborted.MatchString(r.Message) }, verdict{act: actFatal,
		reason: "the load's transaction was aborted while it was sent",
		next: always("nothing of it is visible. Doris' abort reason says who: User Abort is an abort call, by an operator or by another job with the same label prefix " +
			"aborting what it took for an earlier run's lingering transactions (run one job per label prefix at a time); timeout by txn manager is the load's timeout header. Load again")}},
	// fatal: the table or the database does not exist (§4): say so, and
	// what makes it, rather than only "fix the request".
	{onLoad, failSays("table not found, tableName="), verdict{act: actFatal, reason: "the table does not exist in this database",
		next: always("create it (CREATE TABLE, or dorisio.WithCreateTable for struct rows), or check Config.Database and the table's name " +
			"(Doris' table names are case-sensitive), then load again; nothing was loaded")}},
	{onLoad, failSays("unknown database, database="), verdict{act: actFatal, reason: "the database does not exist",
		next: always("create it (CREATE DATABASE), or check Config.Database (its name is case-sensitive), then load again; nothing was loaded")}},
	// fatal: bad label, header, database or table; resending the same request fails again (§3, §4).
	{onLoad, failSays("Label format error", "Invalid timeout", "INVALID_ARGUMENT", "NOT_FOUND", "unknown data format", "ANALYSIS_ERROR", "Invalid "),
		verdict{act: actFatal, reason: "request refused by Doris", next: always("fix the request (headers, database, table, label) and load again; no txn remains")}},
	// resolve by label state: may be the BE→FE commit RPC failing after the FE committed (§4 caveat).
	{onLoad, failSays("NETWORK_ERROR", "THRIFT_RPC_ERROR", "RPC", "rpc", "Thrift", "timed out", "timeout", "TIMEOUT", "Connection refused", "connection",
		"Couldn't open transport", "SERVICE_UNAVAILABLE", "FE address is not available", "NOT_MASTER"),
		verdict{act: actResolve, reason: "network/RPC failure that may hide a commit"}},
	// resolve by label state: an unrecognised Fail is confirmed rolled back before resending (§4 caveat).
	{onLoad, isShape(shapeLoad), verdict{act: actResolve, reason: "unrecognised Fail message"}},
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
		"or Files.RangeBytes for files; or spread the table over more buckets, or raise the BE's max_segment_num_per_rowset (1000 by default); " +
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

// classifyLoad decides what to do with a load answer: its HTTP status, the
// parsed body, and whether the load is two-phase.
func classifyLoad(httpStatus int, twoPhase bool, r loadResponse) verdict {
	v := classify(onLoad, r)
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
	tpcHeaderLost                           // fatal: the BE did not get txn_operation/txn_id (dropped in transit)
	tpcFatal                                // fatal: anything else Doris refused
)

// droppedHeaders is the next step when Doris did not get headers this
// client sends: they were dropped on the way (§1.4, §3).
const droppedHeaders = "something between this worker and Doris (a proxy, load balancer or ingress) drops request headers with underscores " +
	"(txn_id, txn_operation, two_phase_commit, column_separator...): nginx does unless underscores_in_headers is on; " +
	"send to the FEs and BEs directly, or let it pass them"
