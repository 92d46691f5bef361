package dorisio

import (
	"github.com/dorisbeam/dorisbeam/dorisio/doristest"
)

// abortedTxns counts the ABORTED transactions of database demo.
func abortedTxns(srv *doristest.Server) int { return txnsIn(srv, "ABORTED") }

// txnsIn counts the transactions of database demo in state.
func txnsIn(srv *doristest.Server, state string) int {
	return countTxns(srv, func(tx doristest.Txn) bool { return tx.State == state })
}

// countTxns counts the transactions of database demo that keep says.
func countTxns(srv *doristest.Server, keep func(doristest.Txn) bool) int {
	n := 0
	for _, tx := range srv.Txns("demo") {
		if keep(tx) {
			n++
		}
	}
	return n
}
