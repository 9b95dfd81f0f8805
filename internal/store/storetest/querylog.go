package storetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/denar-mk/denar/internal/store"
)

// QueryLogEnv names a directory: when it is set, every store this package
// opens records, in a file of that directory per test process, each
// generated query it ran and on which engine ("sqlite GetJob"), once per
// process. `go run ./internal/store/querycover DIR` then names the queries
// of internal/store/dbq that the suite did not run on both engines.
const QueryLogEnv = "DENAR_TEST_QUERY_LOG"

var queryLog struct {
	once sync.Once
	mu   sync.Mutex
	f    *os.File
	seen map[string]bool
}

// observe makes db record its queries when QueryLogEnv is set.
func observe(db *store.DB) {
	dir := os.Getenv(QueryLogEnv)
	if dir == "" {
		return
	}
	engine := "sqlite"
	if db.Dialect() == store.Postgres {
		engine = "postgres"
	}
	db.ObserveQueries(func(q string) {
		name, ok := QueryName(q)
		if !ok {
			return
		}
		record(dir, engine+" "+name)
	})
}

// QueryName reads the name sqlc writes at the head of a generated query
// ("-- name: GetJob :one").
func QueryName(q string) (string, bool) {
	rest, ok := strings.CutPrefix(q, "-- name: ")
	if !ok {
		return "", false
	}
	name, _, _ := strings.Cut(rest, " ")
	return name, name != ""
}

func record(dir, line string) {
	queryLog.mu.Lock()
	defer queryLog.mu.Unlock()
	if queryLog.seen[line] {
		return
	}
	queryLog.once.Do(func() {
		queryLog.seen = map[string]bool{}
		f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("queries-%d.txt", os.Getpid())), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(os.Stderr, "storetest: %s: %v\n", QueryLogEnv, err)
			return
		}
		queryLog.f = f
	})
	if queryLog.seen == nil {
		queryLog.seen = map[string]bool{}
	}
	queryLog.seen[line] = true
	if queryLog.f != nil {
		fmt.Fprintln(queryLog.f, line)
	}
}
