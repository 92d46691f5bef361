package doristest

import (
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/pierrec/lz4/v4"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest/internal/table"
)

// Behavior (BE PUT /api/{db}/{tbl}/_stream_load, protocol §1.3, §4, §5, §8):
//   - Header phase, before the body is touched (so before Go sends
//     `100 Continue`): `group_commit`, Basic auth present
//     (`[NOT_AUTHORIZED]no valid Basic authorization`), `format` and
//     `compress_type`, body size limits, Content-Length vs chunked, `timeout`;
//     then begin txn: password, database, table, timeout range, label
//     regex, label use over non-ABORTED txns (`Label Already Exists` with
//     ExistingJobStatus), running-txn quota. Failures answer TxnId -1.
//   - An empty label gets a generated UUID.
//   - After begin, the other headers (table.NewSpec); a bad one aborts the
//     txn and answers Fail with its TxnId.
//   - A Respond fault answers its body before anything else is done.
//   - Faults of the body phase: ResetMidBody; StallBody (reads up to half,
//     pauses for Delay, then reads on: a client gone by then leaves a body
//     cut short, which aborts the txn).
//   - Body phase: read, decompress (gz, lz4 frame, bz2), parse; filtered rows
//     beyond max_filter_ratio → Fail `[DATA_QUALITY_ERROR]too many filtered
//     rows` with ErrorURL; failures abort the txn and report
//     NumberLoadedRows 0.
//   - Success: two_phase_commit exactly `true` → PRECOMMITTED, else
//     COMMITTED → VISIBLE; answer every §4 field in master order, pretty JSON
//     with 4-space indent and a trailing newline, HTTP 200.
//   - The *TimeMs fields are measured on the server clock (all 0 with a
//     FakeClock). Every body byte the BE reads counts in
//     Stats.BackendBodyBytes, whatever the outcome.

// loadResult is the §4 stream load response.
type loadResult struct {
	txnID                                                     int64
	label, comment                                            string
	twoPC, groupCommit                                        bool
	status, existing, message                                 string
	total, loaded, filtered, unselected, loadBytes            int64
	loadMs, beginMs, putMs, readMs, writeMs, recvMs, commitMs int64
	errorURL, firstError                                      string
}

func (res *loadResult) json() string {
	var fields [][2]string
	kv := func(k, v string) { fields = append(fields, [2]string{k, v}) }
	num := func(n int64) string { return strconv.FormatInt(n, 10) }
	kv("TxnId", num(res.txnID))
	kv("Label", jsonString(res.label))
	kv("Comment", jsonString(res.comment))
	if res.groupCommit {
		kv("GroupCommit", "true")
	} else {
		kv("TwoPhaseCommit", jsonString(strconv.FormatBool(res.twoPC)))
	}
	kv("Status", jsonString(res.status))
	if res.status == "Label Already Exists" {
		kv("ExistingJobStatus", jsonString(res.existing))
	}
	kv("Message", jsonString(res.message))
	// The counters and times, in master's order; a group commit answer has
	// no begin or commit time (protocol §1.8).
	for _, c := range []struct {
		name string
		n    int64
		txn  bool
	}{
		{"NumberTotalRows", res.total, false}, {"NumberLoadedRows", res.loaded, false},
		{"NumberFilteredRows", res.filtered, false}, {"NumberUnselectedRows", res.unselected, false},
		{"LoadBytes", res.loadBytes, false}, {"LoadTimeMs", res.loadMs, false}, {"BeginTxnTimeMs", res.beginMs, true},
		{"StreamLoadPutTimeMs", res.putMs, false}, {"ReadDataTimeMs", res.readMs, false}, {"WriteDataTimeMs", res.writeMs, false},
		{"ReceiveDataTimeMs", res.recvMs, false}, {"CommitAndPublishTimeMs", res.commitMs, true},
	} {
		if !c.txn || !res.groupCommit {
			kv(c.name, num(c.n))
		}
	}
	if res.errorURL != "" {
		kv("ErrorURL", jsonString(res.errorURL))
	}
	if res.firstError != "" {
		kv("FirstErrorMsg", jsonString(res.firstError))
	}
	var b strings.Builder
	b.WriteString("{\n")
	for i, f := range fields {
		b.WriteString(`    "` + f[0] + `": ` + f[1])
		if i < len(fields)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	return b.String()
}

const (
	maxBodyBytes     = 102400 << 20 // streaming_load_max_mb (master)
	maxJSONBodyBytes = 100 << 20    // streaming_load_json_max_mb
)

func (s *Server) beStreamLoad(w http.ResponseWriter, r *http.Request, be *backend, db, tbl string) {
	// Timed on the server clock so a fake clock gives the same body every run.
	since := func(t time.Time) int64 { return s.clock.Now().Sub(t).Milliseconds() }
	start := s.clock.Now()
	h := r.Header
	res := &loadResult{txnID: -1, label: h.Get("label"), comment: h.Get("comment"),
		twoPC: h.Get("two_phase_commit") == "true"}
	chunked := len(r.TransferEncoding) > 0 && r.TransferEncoding[0] == "chunked"
	gcMode := groupCommitMode(h, chunked, r.ContentLength)
	if gcMode != "" && chunked {
		res.label = "" // Doris drops a chunked group commit load's label
	}
	refuseLabel := gcMode != "" && res.label != ""
	if gcMode != "" && !refuseLabel {
		res.label, res.groupCommit = groupLabel(), true
	}
	if res.label == "" {
		res.label = uuid.NewString()
	}
	reply := func() {
		res.loadMs = since(start)
		res.message = s.cfg.version.Message(res.message)
		body := res.json()
		if strings.Contains(r.Header.Get("Accept-Encoding"), "gzip") {
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			zw := gzip.NewWriter(w)
			_, _ = io.WriteString(zw, body)
			_ = zw.Close()
			return
		}
		writeBody(w, 200, "text/plain; charset=utf-8", body)
	}
	fail := func(msg string) {
		res.status, res.message = "Fail", msg
		res.loaded = 0
		reply()
	}
	var body *bodyReader // set when the body phase begins
	defer func() {
		// A client without Expect sends its body right away; read it so
		// that it gets the header-phase reply instead of a reset.
		if _, expect := h["Expect"]; body == nil && !expect {
			_, _ = io.Copy(io.Discard, io.LimitReader(s.newBodyReader(r), 1<<30))
		}
	}()
	if refuseLabel {
		fail("[INVALID_ARGUMENT]label and group_commit can't be set at the same time")
		return
	}
	if s.faults.take(Proxy502, EndpointLoad, be.index, tbl, res.label) != nil {
		writeProxy502(w)
		return
	}
	if s.respond(w, EndpointLoad, be.index, tbl, res.label, "text/plain; charset=utf-8") {
		return
	}

	// Header phase (§1.3 steps 1-7). The body is not touched.
	lh, refusal := s.headerPhase(r)
	if refusal != "" {
		fail(refusal)
		return
	}
	cred, ct, timeout := lh.cred, lh.compress, lh.timeout
	if !s.goodCredentials(cred) {
		fail(feAnalysisErr + accessDenied(r, cred))
		return
	}
	beginStart := s.clock.Now()
	t, berr := s.txns.begin(db, tbl, res.label, timeout)
	res.beginMs = since(beginStart)
	if berr != nil {
		res.status, res.existing, res.message = berr.status, berr.existing, berr.message
		reply()
		return
	}
	res.txnID = t.id
	defer s.trackLoad(fmt.Sprintf("%s.%s label %s txn %d", db, tbl, res.label, t.id))()

	// §1.3 step 8-9: the other headers, with the txn begun.
	putStart := s.clock.Now()
	spec, err := table.NewSpecFor(s.cfg.version, t.tbl.Schema(), h)
	res.putMs = since(putStart)
	if err != nil {
		s.txns.rollback(t, err.Error())
		fail(err.Error())
		return
	}

	// Body phase: reading r.Body sends 100 Continue.
	recvStart := s.clock.Now()
	body = s.newBodyReader(r)
	if f := s.faults.take(ResetMidBody, EndpointLoad, be.index, tbl, res.label); f != nil {
		half := r.ContentLength / 2
		if half <= 0 {
			half = 1
		}
		_, _ = io.CopyN(io.Discard, body, half)
		s.txns.rollback(t, "[NETWORK_ERROR]receive body don't equal with body bytes")
		hangUp(w)
		return
	}
	var src io.Reader = body
	if f := s.faults.take(StallBody, EndpointLoad, be.index, tbl, res.label); f != nil {
		src = &stallReader{r: body, left: max(min(r.ContentLength/2, 1<<20), 1), wait: func() {
			t := time.NewTimer(f.f.Delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-s.stop:
			}
		}}
	}
	src, err = decompressor(src, ct)
	if err != nil {
		s.failBody(t, body, res, fail, "[INTERNAL_ERROR]failed to init gzip decompressor: "+err.Error())
		return
	}
	batch, perr := spec.Parse(src, s.cfg.countOnly)
	res.recvMs = since(recvStart)
	res.readMs = res.recvMs
	res.loadBytes = body.n
	if body.err != nil {
		s.failBody(t, body, res, fail, "[NETWORK_ERROR]receive body don't equal with body bytes")
		return
	}
	if perr != nil {
		msg := perr.Error()
		if !strings.HasPrefix(msg, "[") {
			msg = "[DATA_QUALITY_ERROR]" + msg
		}
		s.failBody(t, body, res, fail, msg)
		return
	}
	res.total, res.loaded, res.filtered, res.unselected = batch.Total, batch.Loaded, batch.Filtered, batch.Unselected
	if len(batch.Errors) > 0 {
		res.errorURL = be.url + "/api/_load_error_log?file=" + s.storeErrorLog(db, res.label, batch.Errors)
		if s.cfg.version.SendsFirstErrorMsg() {
			res.firstError = batch.Errors[0].FirstErrorMsg()
		}
	}
	if spec.TooManyFiltered(batch) {
		msg := "[DATA_QUALITY_ERROR]too many filtered rows"
		s.txns.rollback(t, msg)
		fail(msg)
		return
	}

	if gcMode != "" {
		// Grouped: committed with the table's group (group_commit.go).
		wait := s.groups.add(db+"."+tbl, t, batch, body.n)
		if gcMode == "sync_mode" {
			if msg := wait(); msg != "" {
				fail(msg)
				return
			}
		}
		if s.faults.take(ResetAfterBody, EndpointLoad, be.index, tbl, res.label) != nil ||
			s.faults.take(LoseReply, EndpointLoad, be.index, tbl, res.label) != nil {
			hangUp(w)
			return
		}
		res.status, res.message = "Success", "OK"
		reply()
		return
	}
	commitStart := s.clock.Now()
	var publishLater *FaultHandle
	if !res.twoPC {
		publishLater = s.faults.take(PublishTimeout, EndpointLoad, be.index, tbl, res.label)
	}
	if err := s.txns.finishLoad(t, batch, body.n, res.twoPC, publishLater); err != nil {
		fail(err.Error())
		return
	}
	if !res.twoPC {
		res.commitMs = since(commitStart)
	}
	if s.faults.take(ResetAfterBody, EndpointLoad, be.index, tbl, res.label) != nil ||
		s.faults.take(LoseReply, EndpointLoad, be.index, tbl, res.label) != nil {
		hangUp(w)
		return
	}
	res.status, res.message = "Success", "OK"
	if publishLater != nil {
		res.status = "Publish Timeout"
		res.message = "[PUBLISH_TIMEOUT]TStatus: transaction commit successfully, BUT data will be visible later"
	}
	reply()
}

// loadHeaders is what the header phase read from a load's headers.
type loadHeaders struct {
	cred     credentials
	compress string        // compress_type, lower case
	timeout  time.Duration // 0: Doris' default
}

// headerPhase checks a load's headers before its body is touched and before
// a txn is begun (§1.3 steps 1-7): the message of the first refusal, or "".
func (s *Server) headerPhase(r *http.Request) (loadHeaders, string) {
	h := r.Header
	var lh loadHeaders
	if gc := h.Get("group_commit"); gc != "" && !validGroupCommit(gc) {
		return lh, "[INVALID_ARGUMENT]group_commit can only be [async_mode, sync_mode, off_mode]"
	}
	lh.cred = basicAuth(r)
	if !lh.cred.ok {
		return lh, "[NOT_AUTHORIZED]no valid Basic authorization"
	}
	if h.Get("compress_type") != "" && strings.EqualFold(h.Get("format"), "json") && !s.cfg.version.TakesCompressedJSON() {
		return lh, "[INTERNAL_ERROR]compress data of JSON format is not supported."
	}
	format := strings.ToLower(strings.TrimSpace(h.Get("format")))
	if !table.KnownFormat(format) {
		return lh, "[INTERNAL_ERROR]unknown data format, format=" + h.Get("format")
	}
	lh.compress = strings.ToLower(strings.TrimSpace(h.Get("compress_type")))
	switch lh.compress {
	case "", "gz", "lz4", "lz4frame", "bz2":
	case "lzo", "lz4_block", "lzop", "snappy_block", "deflate":
		return lh, "[NOT_IMPLEMENTED_ERROR]doristest does not support compress_type " + h.Get("compress_type")
	default:
		return lh, "[INTERNAL_ERROR]unknown data format, format=" + h.Get("format")
	}
	chunked := len(r.TransferEncoding) > 0 && r.TransferEncoding[0] == "chunked"
	_, hasLength := h["Content-Length"]
	// A bad read_json_by_line value fails later, in table.NewSpec.
	byLine, _ := table.JSONByLine(h)
	if hasLength && format == "json" && !byLine && r.ContentLength > maxJSONBodyBytes {
		return lh, fmt.Sprintf("[E-217]json body size %d exceed BE's conf `streaming_load_json_max_mb` %d. increase it if you are sure this load is reasonable", r.ContentLength, maxJSONBodyBytes>>20)
	}
	if hasLength && r.ContentLength > maxBodyBytes {
		return lh, fmt.Sprintf("[E-217]body size %d exceed BE's conf `streaming_load_max_mb` %d. increase it if you are sure this load is reasonable", r.ContentLength, maxBodyBytes>>20)
	}
	if !hasLength && !chunked {
		return lh, "[INVALID_ARGUMENT]content_length is empty and transfer-encoding!=chunked, please set content_length or transfer-encoding=chunked"
	}
	if v := h.Get("timeout"); v != "" {
		n, err := table.Stoi("timeout", strings.TrimSpace(v)) // safe_stoi, §3
		if err != nil {
			return lh, err.Error()
		}
		if n < 1 {
			return lh, feAnalysisErr + fmt.Sprintf("Invalid timeout: %d. Timeout should be higher than Config.min_load_timeout_second: 1", n)
		}
		if n > 259200 {
			return lh, feAnalysisErr + fmt.Sprintf("Invalid timeout: %d. Timeout should be lower than Config.max_stream_load_timeout_second: 259200", n)
		}
		lh.timeout = time.Duration(n) * time.Second
	}
	return lh, ""
}

// decompressor reads src as compress_type ct says (gz, lz4 frame, bz2; ""
// plain).
func decompressor(src io.Reader, ct string) (io.Reader, error) {
	switch ct {
	case "gz":
		return gzip.NewReader(src)
	case "lz4", "lz4frame":
		return lz4.NewReader(src), nil
	case "bz2":
		return bzip2.NewReader(src), nil
	}
	return src, nil
}

// LoadFailure renders the answer a BE gives to a stream load that failed
// with message (§4): Status "Fail", the counters 0, pretty-printed with a
// trailing newline like the BE's own. txnID is the txn the BE began and
// rolled back (-1: none begun). For Respond faults, for example the
// planner's refusal while a BE restarts:
//
//	doristest.LoadFailure("l1", 1042, "[ANALYSIS_ERROR]TStatus: errCode = 3, detailMessage = tablet 10123 alive replica num 0 < quorum replica num 1, alive backends: []")
func LoadFailure(label string, txnID int64, message string) string {
	res := &loadResult{txnID: txnID, label: label, status: "Fail", message: message}
	return res.json()
}

// failBody aborts t after a body-phase failure and answers Fail.
func (s *Server) failBody(t *txn, body *bodyReader, res *loadResult, fail func(string), msg string) {
	res.loadBytes = body.n
	s.txns.rollback(t, msg)
	fail(msg)
}

// bodyReader reads a BE request body. It counts the bytes for LoadBytes and, as they
// arrive, in Stats.BackendBodyBytes, so that every way out of a load counts them
// exactly once. It remembers a read error other than EOF.
type bodyReader struct {
	r   io.Reader
	m   *txnMgr
	n   int64
	err error
}

func (s *Server) newBodyReader(r *http.Request) *bodyReader {
	return &bodyReader{r: r.Body, m: s.txns}
}

func (c *bodyReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.n += int64(n)
		c.m.addBytes(int64(n), true)
	}
	if err != nil && !errors.Is(err, io.EOF) && c.err == nil {
		c.err = err
	}
	return n, err
}

// stallReader reads left bytes of r, then calls wait once before reading on
// (the StallBody fault).
type stallReader struct {
	r    io.Reader
	left int64
	wait func()
}

func (s *stallReader) Read(p []byte) (int, error) {
	if s.wait != nil {
		if s.left == 0 {
			s.wait()
			s.wait = nil
		} else if int64(len(p)) > s.left {
			p = p[:s.left]
		}
	}
	n, err := s.r.Read(p)
	s.left -= int64(n)
	return n, err
}
