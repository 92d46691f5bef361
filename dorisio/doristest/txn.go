package doristest

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dorisbeam/dorisbeam/dorisio/doristest/internal/table"
)

// Behavior (the whole transaction state machine lives in this file):
//   - States and transitions are those of protocol §5.1:
//     begin → PREPARE; 2PC load done → PRECOMMITTED; 2PC commit or non-2PC
//     load → COMMITTED → VISIBLE; abort, failure or timeout → ABORTED.
//   - Rows reach the table only on VISIBLE. COMMITTED becomes VISIBLE at
//     once (in the same critical section), except after a PublishTimeout
//     fault: then the txn stays COMMITTED until the next sweep, or, with a
//     Delay, until the first look at its database (begin, 2PC,
//     get_load_state, rows, SHOW TRANSACTION) or sweep once Delay has
//     passed.
//   - Labels are unique per database over non-ABORTED txns (§5.4); begin
//     checks, in order: database, table, timeout range, label format,
//     label use, running-txn quota (§4, §8).
//   - 2PC commit/abort outcomes and texts are exactly the rows of §5.2.
//   - The sweep (§5.3, §5.5) aborts PREPARE txns past their load timeout and
//     PRECOMMITTED txns past the precommit timeout (reason `timeout by txn
//     manager`), publishes COMMITTED txns, forgets VISIBLE/ABORTED txns
//     older than the label retention, then, while a database keeps more
//     final txns than label_num_threshold, the oldest final ones in the
//     order they became final (at most 10,000 per sweep, as the FE's
//     MAX_REMOVE_TXN_PER_ROUND; DatabaseTransactionMgr.removeUselessTxns).
//   - One mutex guards every database, txn and table of a server.

const (
	statePrepare      = "PREPARE"
	statePrecommitted = "PRECOMMITTED"
	stateCommitted    = "COMMITTED"
	stateVisible      = "VISIBLE"
	stateAborted      = "ABORTED"

	reasonUserAbort  = "User Abort"
	reasonTimeout    = "timeout by txn manager"
	reasonUserCancel = "user cancel"

	// Message prefixes of FE errors relayed by the BE (§4).
	feAnalysisErr = "[ANALYSIS_ERROR]TStatus: errCode = 2, detailMessage = "
	feNotFoundErr = "[NOT_FOUND]TStatus: errCode = 7, detailMessage = "
)

var labelRE = regexp.MustCompile(`^[-_A-Za-z0-9:]{1,128}$`)

type txn struct {
	id      int64
	db      *database
	tbl     *table.Table
	label   string
	state   string
	reason  string
	rows    int64
	bytes   int64
	batch   *table.Batch // rows waiting for VISIBLE
	timeout time.Duration
	errMsg  string
	// publishAt: a COMMITTED txn held by a PublishTimeout fault with a
	// Delay becomes VISIBLE once the clock reaches it (zero: at the sweep).
	publishAt time.Time

	prepareTime, precommitTime, commitTime, publishTime, finishTime time.Time
	finalSeq                                                        int64 // when it became final, in the server's order
}

type database struct {
	id      int64
	name    string
	tables  map[string]*table.Table
	txns    map[int64]*txn
	labels  map[string][]*txn // ascending txn id
	running int               // PREPARE + PRECOMMITTED + COMMITTED
	peak    int               // the most running at once
	held    []*txn            // COMMITTED with a publishAt
}

// txnMgr owns all databases, tables and txns of one server.
type txnMgr struct {
	clock clock
	cfg   *config

	beBytes, feBytes atomic.Int64 // Stats.BackendBodyBytes, Stats.FrontendBodyBytes

	mu        sync.Mutex // guards every field below and all txns, databases and tables reachable from them
	nextTxnID int64
	nextDBID  int64
	finalSeq  int64 // txns that became final so far
	dbs       map[string]*database
	stats     Stats // but for the body byte counts
	// tabletBase is each table's first tablet id (its tablets are
	// base..base+BucketCount-1), given in order of creation (§14.2).
	tabletBase map[*table.Table]int64
	nextTablet int64
}

func newTxnMgr(c clock, cfg *config) *txnMgr {
	return &txnMgr{clock: c, cfg: cfg, nextTxnID: 1000, nextDBID: 10000, dbs: map[string]*database{},
		tabletBase: map[*table.Table]int64{}, nextTablet: 10001}
}

// createDatabase creates database name unless it exists; it reports
// whether it did.
func (m *txnMgr) createDatabase(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.newDatabase(name) != nil
}

// newDatabase creates database name and returns it, or nil if it exists.
func (m *txnMgr) newDatabase(name string) *database {
	if m.dbs[name] != nil {
		return nil
	}
	m.nextDBID++
	db := &database{id: m.nextDBID, name: name, tables: map[string]*table.Table{},
		txns: map[int64]*txn{}, labels: map[string][]*txn{}}
	m.dbs[name] = db
	return db
}

// hasDatabase reports whether database name exists.
func (m *txnMgr) hasDatabase(name string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dbs[name] != nil
}

// createTable creates table s, and its database with it unless
// dbMustExist. It fails for an existing table (errTableExists) or a
// missing database (errNoDatabase).
func (m *txnMgr) createTable(s *table.Schema, dbMustExist bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	db := m.dbs[s.DB]
	if db == nil {
		if dbMustExist {
			return errNoDatabase
		}
		db = m.newDatabase(s.DB)
	}
	if _, ok := db.tables[s.Name]; ok {
		return errTableExists
	}
	t := table.NewTable(s, m.cfg.countOnly)
	db.tables[s.Name] = t
	m.tabletBase[t] = m.nextTablet
	m.nextTablet += int64(s.BucketCount())
	return nil
}

// tablets returns t's first tablet id and how many it has.
func (m *txnMgr) tablets(t *table.Table) (base int64, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.tabletBase[t], t.Schema().BucketCount()
}

var (
	errNoDatabase  = errors.New("no such database")
	errNoTable     = errors.New("no such table")
	errTableExists = errors.New("table exists")
)

// addColumns runs ALTER TABLE ... ADD COLUMN on db.tbl (table.AddColumns),
// under the lock that Rows and Scan read under.
func (m *txnMgr) addColumns(dbName, tbl string, adds []table.ColumnAdd) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	db := m.dbs[dbName]
	if db == nil {
		return errNoDatabase
	}
	t := db.tables[tbl]
	if t == nil {
		return errNoTable
	}
	return t.AddColumns(adds)
}

func (m *txnMgr) table(dbName, tbl string) *table.Table {
	m.mu.Lock()
	defer m.mu.Unlock()
	if db := m.dbs[dbName]; db != nil {
		m.publishDue(db)
		return db.tables[tbl]
	}
	return nil
}

// hold leaves t COMMITTED under the PublishTimeout fault h: until the sweep,
// or until h's Delay has passed (publishDue).
func (m *txnMgr) hold(t *txn, h *FaultHandle) {
	if d := h.f.Delay; d > 0 {
		t.publishAt = m.clock.Now().Add(d)
		t.db.held = append(t.db.held, t)
	}
}

// publishDue publishes db's held txns whose Delay has passed.
func (m *txnMgr) publishDue(db *database) {
	if len(db.held) == 0 {
		return
	}
	now := m.clock.Now()
	kept := db.held[:0]
	for _, t := range db.held {
		switch {
		case t.state != stateCommitted:
		case now.Before(t.publishAt):
			kept = append(kept, t)
		default:
			m.setState(t, stateVisible)
		}
	}
	clear(db.held[len(kept):])
	db.held = kept
}

// setState moves t to state, keeping the running count and timestamps.
func (m *txnMgr) setState(t *txn, state string) {
	now := m.clock.Now()
	wasRunning := t.state == statePrepare || t.state == statePrecommitted || t.state == stateCommitted
	t.state = state
	switch state {
	case statePrecommitted:
		t.precommitTime = now
	case stateCommitted:
		t.commitTime = now
		m.stats.Commits++
	case stateVisible:
		t.publishTime, t.finishTime = now, now
		if t.batch != nil {
			t.tbl.Apply(t.batch)
			t.batch = nil
		}
	case stateAborted:
		t.finishTime = now
		t.batch = nil
		m.stats.Aborts++
	}
	if wasRunning && (state == stateVisible || state == stateAborted) {
		t.db.running--
	}
	if state == stateVisible || state == stateAborted {
		m.finalSeq++
		t.finalSeq = m.finalSeq
	}
}

// beginError is a header-phase failure of begin txn: Status and Message
// of the stream load response (§4), TxnId -1.
type beginError struct {
	status, existing, message string
}

// begin starts a txn (PREPARE) for a stream load.
func (m *txnMgr) begin(dbName, tbl, label string, timeout time.Duration) (*txn, *beginError) {
	m.mu.Lock()
	defer m.mu.Unlock()
	db := m.dbs[dbName]
	if db == nil {
		return nil, &beginError{status: "Fail", message: feNotFoundErr + "unknown database, database=" + dbName}
	}
	m.publishDue(db)
	tb := db.tables[tbl]
	if tb == nil {
		return nil, &beginError{status: "Fail", message: feNotFoundErr + "table not found, tableName=" + tbl}
	}
	if timeout == 0 {
		timeout = m.cfg.loadTimeout
	}
	if !labelRE.MatchString(label) {
		return nil, &beginError{status: "Fail", message: feAnalysisErr +
			`Label format error. regex: ^[\-_A-Za-z0-9:]{1,128}$, label: ` + label}
	}
	for _, t := range db.labels[label] {
		if t.state == stateAborted {
			continue
		}
		existing := map[string]string{statePrepare: "RUNNING", statePrecommitted: "PRECOMMITTED",
			stateCommitted: "FINISHED", stateVisible: "FINISHED"}[t.state]
		return nil, &beginError{status: "Label Already Exists", existing: existing,
			message: fmt.Sprintf("[LABEL_ALREADY_EXISTS]TStatus: errCode = 2, detailMessage = Label [%s] has already been used, relate to txn [%d], status [%s].", label, t.id, t.state)}
	}
	if db.running >= m.cfg.runningTxnQuota {
		m.stats.TxnQuotaRefusals++
		return nil, &beginError{status: "Fail", message: feAnalysisErr +
			fmt.Sprintf("current running txns on db %d is %d, larger than limit %d", db.id, db.running, m.cfg.runningTxnQuota)}
	}
	m.nextTxnID++
	t := &txn{id: m.nextTxnID, db: db, tbl: tb, label: label, state: statePrepare,
		timeout: timeout, prepareTime: m.clock.Now()}
	db.txns[t.id] = t
	db.labels[label] = append(db.labels[label], t)
	db.running++
	db.peak = max(db.peak, db.running)
	m.stats.Loads++
	return t, nil
}

// finishLoad ends the body phase of a load whose rows are in b: 2PC →
// PRECOMMITTED; otherwise COMMITTED and, unless the PublishTimeout fault
// publishLater holds it, VISIBLE. It fails when the txn left PREPARE
// meanwhile (aborted by a user or a timeout), with the Message text of the
// failed load.
func (m *txnMgr) finishLoad(t *txn, b *table.Batch, loadBytes int64, twoPC bool, publishLater *FaultHandle) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.state != statePrepare {
		return fmt.Errorf("%stransaction [%d] is already aborted, abort reason: %s", feAnalysisErr, t.id, t.reason)
	}
	t.rows, t.bytes, t.batch = b.Loaded, loadBytes, b
	if twoPC {
		m.setState(t, statePrecommitted)
		return nil
	}
	m.setState(t, stateCommitted)
	if publishLater == nil {
		m.setState(t, stateVisible)
	} else {
		m.hold(t, publishLater)
	}
	return nil
}

// rollback aborts t after a failed load (no-op unless PREPARE/PRECOMMITTED).
func (m *txnMgr) rollback(t *txn, reason string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.state == statePrepare || t.state == statePrecommitted {
		t.reason, t.errMsg = reason, reason
		m.setState(t, stateAborted)
	}
}

// twoPCRequest is a 2PC commit/abort as the FE sees it (§1.4, §5.2).
type twoPCRequest struct {
	db        string
	hasID     bool
	id        int64
	label     string
	op        string        // "commit" or "abort"
	checkAuth func() string // "" when the credentials are good, else the FE message
	// publishLater returns the PublishTimeout fault that holds a commit of
	// t COMMITTED, or nil (nil func: none).
	publishLater func(t *txn) *FaultHandle
}

// twoPC runs a 2PC commit or abort and returns the success msg or the FE
// error text (without the "TStatus: errCode = 2, detailMessage = " prefix).
// It also returns the affected txn (nil when none was found).
func (m *txnMgr) twoPC(r twoPCRequest) (ok string, errText string, t *txn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	db := m.dbs[r.db]
	if db == nil {
		return "", "unknown database, database=" + r.db, nil
	}
	m.publishDue(db)
	if r.hasID {
		t = db.txns[r.id]
		if t == nil {
			return "", fmt.Sprintf("transaction [%d] not found", r.id), nil
		}
	} else {
		ts := db.labels[r.label]
		if len(ts) == 0 {
			return "", "transaction not found, label=" + r.label, nil
		}
		for i := len(ts) - 1; i >= 0; i-- {
			s := ts[i].state
			if s == statePrecommitted || (r.op == "abort" && s == statePrepare) {
				t = ts[i]
				break
			}
		}
		if t == nil {
			return "", "running transaction not found, label=" + r.label, nil
		}
	}
	if msg := r.checkAuth(); msg != "" {
		return "", msg, t
	}
	id := t.id
	switch r.op {
	case "commit":
		switch t.state {
		case statePrepare:
			return "", fmt.Sprintf("transaction [%d] is prepare, not pre-committed.", id), t
		case stateCommitted:
			return "", fmt.Sprintf("transaction [%d] is already committed, not pre-committed.", id), t
		case stateVisible:
			return "", fmt.Sprintf("transaction [%d] is already visible, not pre-committed.", id), t
		case stateAborted:
			return "", fmt.Sprintf("transaction [%d] is already aborted. abort reason: %s", id, t.reason), t
		}
		m.setState(t, stateCommitted)
		if h := r.heldBy(t); h != nil {
			m.hold(t, h)
		} else {
			m.setState(t, stateVisible)
		}
	case "abort":
		switch t.state {
		case stateCommitted, stateVisible:
			return "", fmt.Sprintf("transaction [%d] is already %s, could not abort.", id, t.state), t
		case stateAborted:
			return "", fmt.Sprintf("transaction [%d] is already aborted, abort reason: %s", id, t.reason), t
		}
		t.reason = reasonUserAbort
		m.setState(t, stateAborted)
	default:
		return "", "transaction operation should be 'commit' or 'abort'", t
	}
	msg := ""
	if r.label != "" {
		msg += "label [" + r.label + "] "
	}
	if r.hasID {
		msg += fmt.Sprintf("transaction [%d] ", r.id)
	}
	return msg + r.op + " successfully.", "", t
}

// heldBy is the PublishTimeout fault that holds a commit of t, or nil.
func (r twoPCRequest) heldBy(t *txn) *FaultHandle {
	if r.publishLater == nil {
		return nil
	}
	return r.publishLater(t)
}

// loadState is get_load_state (§1.5): the state of the newest txn with the
// label, UNKNOWN if none; ok false for an unknown database.
func (m *txnMgr) loadState(dbName, label string) (state string, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	db := m.dbs[dbName]
	if db == nil {
		return "", false
	}
	m.publishDue(db)
	ts := db.labels[label]
	if len(ts) == 0 {
		return "UNKNOWN", true
	}
	return ts[len(ts)-1].state, true
}

// cancel is POST /api/{db}/_cancel (§12.4): aborts the newest txn with the
// label if it is PREPARE or PRECOMMITTED. It returns "" or the error text.
func (m *txnMgr) cancel(dbName, label string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	db := m.dbs[dbName]
	if db == nil {
		return "errCode = 7, detailMessage = unknown databases, dbName=" + dbName
	}
	ts := db.labels[label]
	if len(ts) == 0 {
		return "errCode = 2, detailMessage = txn with label " + label + " does not exist"
	}
	t := ts[len(ts)-1]
	if t.state != statePrepare && t.state != statePrecommitted {
		return "errCode = 2, detailMessage = transaction not found, label=" + label
	}
	t.reason = reasonUserCancel
	m.setState(t, stateAborted)
	return ""
}

// sweep runs the FE cleanup round (§5.3, §5.5) at the clock's now.
func (m *txnMgr) sweep() {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.clock.Now()
	for _, db := range m.dbs {
		for _, t := range db.txns {
			switch t.state {
			case statePrepare:
				if !now.Before(t.prepareTime.Add(t.timeout)) {
					t.reason = reasonTimeout
					m.setState(t, stateAborted)
				}
			case statePrecommitted:
				if !now.Before(t.precommitTime.Add(m.cfg.precommitTimeout)) {
					t.reason = reasonTimeout
					m.setState(t, stateAborted)
				}
			case stateCommitted:
				if !now.Before(t.publishAt) {
					m.setState(t, stateVisible)
				}
			case stateVisible, stateAborted:
				if !now.Before(t.finishTime.Add(m.cfg.labelRetention)) {
					m.forget(t)
				}
			}
		}
		m.capFinal(db)
	}
}

// maxForgetPerSweep is the FE's MAX_REMOVE_TXN_PER_ROUND.
const maxForgetPerSweep = 10000

// capFinal forgets db's oldest final txns while it keeps more than
// label_num_threshold of them (§5.5).
func (m *txnMgr) capFinal(db *database) {
	limit := m.cfg.labelNumCap
	if limit < 0 {
		return
	}
	var final []*txn
	for _, t := range db.txns {
		if t.state == stateVisible || t.state == stateAborted {
			final = append(final, t)
		}
	}
	if len(final) <= limit {
		return
	}
	sort.Slice(final, func(i, j int) bool { return final[i].finalSeq < final[j].finalSeq })
	for _, t := range final[:min(len(final)-limit, maxForgetPerSweep)] {
		m.forget(t)
	}
}

func (m *txnMgr) forget(t *txn) {
	db := t.db
	delete(db.txns, t.id)
	ts := db.labels[t.label]
	kept := ts[:0]
	for _, o := range ts {
		if o != t {
			kept = append(kept, o)
		}
	}
	if len(kept) == 0 {
		delete(db.labels, t.label)
	} else {
		db.labels[t.label] = kept
	}
}

// expirePrecommitted aborts every PRECOMMITTED txn of db as the precommit
// timeout would.
func (m *txnMgr) expirePrecommitted(dbName string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	if db := m.dbs[dbName]; db != nil {
		for _, t := range db.txns {
			if t.state == statePrecommitted {
				t.reason = reasonTimeout
				m.setState(t, stateAborted)
				n++
			}
		}
	}
	return n
}

// expireLabels forgets every final txn of db, as label retention would.
func (m *txnMgr) expireLabels(dbName string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	if db := m.dbs[dbName]; db != nil {
		for _, t := range db.txns {
			if t.state == stateVisible || t.state == stateAborted {
				m.forget(t)
				n++
			}
		}
	}
	return n
}

// txnRow is a snapshot of a txn, safe to use without the lock.
type txnRow struct {
	Txn
	prepareTime, precommitTime, commitTime, publishTime, finishTime time.Time
	timeout                                                         time.Duration
	errMsg                                                          string
}

func snapshot(t *txn) txnRow {
	return txnRow{
		Txn: Txn{ID: t.id, DB: t.db.name, Table: t.tbl.Schema().Name, Label: t.label, State: t.state,
			Reason: t.reason, Rows: t.rows, Bytes: t.bytes},
		prepareTime: t.prepareTime, precommitTime: t.precommitTime, commitTime: t.commitTime,
		publishTime: t.publishTime, finishTime: t.finishTime, timeout: t.timeout, errMsg: t.errMsg,
	}
}

// txns lists the retained txns of db, newest first, keeping those for
// which keep returns true (nil keeps all). ok is false for an unknown db.
func (m *txnMgr) txns(dbName string, keep func(*txn) bool) (rows []txnRow, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	db := m.dbs[dbName]
	if db == nil {
		return nil, false
	}
	m.publishDue(db)
	for _, t := range db.txns {
		if keep == nil || keep(t) {
			rows = append(rows, snapshot(t))
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].ID > rows[j].ID })
	return rows, true
}

// lastTxnID is the newest txn id given, in any database.
func (m *txnMgr) lastTxnID() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.nextTxnID
}

// peakRunning is the most PREPARE+PRECOMMITTED+COMMITTED txns db held at
// once; ok is false for an unknown database.
func (m *txnMgr) peakRunning(dbName string) (peak int, ok bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	db := m.dbs[dbName]
	if db == nil {
		return 0, false
	}
	return db.peak, true
}

// addBytes counts body bytes received by a BE (be=true) or the FE. It is
// called for every read of a BE body, so it takes no lock.
func (m *txnMgr) addBytes(n int64, be bool) {
	if be {
		m.beBytes.Add(n)
	} else {
		m.feBytes.Add(n)
	}
}

// countDDL counts a CREATE or ALTER statement of the SQL endpoint.
func (m *txnMgr) countDDL() {
	m.mu.Lock()
	m.stats.DDL++
	m.mu.Unlock()
}

// statsNow returns the counters so far.
func (m *txnMgr) statsNow() Stats {
	m.mu.Lock()
	st := m.stats
	m.mu.Unlock()
	st.BackendBodyBytes, st.FrontendBodyBytes = m.beBytes.Load(), m.feBytes.Load()
	return st
}
