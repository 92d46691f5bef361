package streamload

// Parsing of Doris' answers into loadResponse, the form the rows of
// answers (protocol.go) match. Parsing never fails: an answer it does not
// recognise has shape shapeNotDoris.

import (
	"encoding/json"
	"strconv"
	"strings"
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
	Label                                                      string
	GroupCommit                                                bool   // "GroupCommit": true (§4)
	TwoPhaseCommit                                             string // "true"/"false" as Doris read the request's header; "" when absent
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
		r.Label, _ = jsonString(m, "Label")
		r.GroupCommit = string(m["GroupCommit"]) == "true"
		r.TwoPhaseCommit, _ = jsonString(m, "TwoPhaseCommit")
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

// envelopeReply is the msg/code/data envelope of a call other than a load,
// in the form the rows match.
func envelopeReply(code int64, msg, data string) loadResponse {
	return loadResponse{shape: shapeFEEntity, feCode: code, feMsg: msg, feData: data}
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
		r := twoPCResponse{status: msg, msg: jsonText(m, "data")}
		r.outcome = twoPCOutcomeOf(classify(on2PC, envelopeReply(code, msg, r.msg)))
		return r
	}
	st, okS := jsonString(m, "status")
	msg, okM := jsonString(m, "msg")
	if !okS || st == "" || (!okM && st != statusSuccess) {
		return twoPCResponse{outcome: tpcUnknown}
	}
	r := twoPCResponse{status: st, msg: msg}
	r.outcome = twoPCOutcomeOf(classify(on2PC, loadResponse{shape: shapeFEResult, feStatus: st, feMsg: msg}))
	if r.outcome == tpcAlreadyAborted {
		r.reason = strings.TrimSpace(reAlreadyAborted.FindStringSubmatch(msg)[1])
	}
	return r
}

// twoPCOutcomeOf is what a 2PC answer's verdict says of the txn: its row's
// own reading, else (the FE's envelope) refused credentials, a retry, or a
// refusal.
func twoPCOutcomeOf(v verdict) twoPCOutcome {
	switch {
	case v.txn != tpcUnknown:
		return v.txn
	case v.kind == ErrAuth:
		return tpcAuth
	case v.act == actRetry:
		return tpcRetry
	}
	return tpcFatal
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
