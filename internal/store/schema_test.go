package store_test

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/denar-mk/denar/internal/store/storetest"
)

// TestSchemasAgree migrates both engines and compares what the two
// hand-written migration sets made: the tables, each table's columns (type
// as mapped between the engines, nullability, default, primary key), its
// indexes (unique or not, columns, partial or not) and its foreign keys.
// A column added to one set and not the other, or added NOT NULL in one and
// nullable in the other, fails here before a query meets it on one engine
// only.
func TestSchemasAgree(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	lite, err := sqliteSchema(ctx, storetest.SQLite(t).ReadDB())
	if err != nil {
		t.Fatal(err)
	}
	pg, err := postgresSchema(ctx, storetest.Postgres(t).ReadDB())
	if err != nil {
		t.Fatal(err)
	}
	if len(lite) < 20 {
		t.Fatalf("the SQLite schema has %d tables: the introspection read nothing", len(lite))
	}
	for _, name := range union(keys(lite), keys(pg)) {
		if name == gooseTable {
			continue
		}
		l, inLite := lite[name]
		p, inPG := pg[name]
		switch {
		case !inLite:
			t.Errorf("table %s is only in the PostgreSQL migrations", name)
			continue
		case !inPG:
			t.Errorf("table %s is only in the SQLite migrations", name)
			continue
		}
		for _, c := range union(keys(l.columns), keys(p.columns)) {
			lc, okL := l.columns[c]
			pc, okP := p.columns[c]
			switch {
			case !okL:
				t.Errorf("%s.%s is only in the PostgreSQL migrations", name, c)
			case !okP:
				t.Errorf("%s.%s is only in the SQLite migrations", name, c)
			case lc != pc:
				t.Errorf("%s.%s differs: SQLite %+v, PostgreSQL %+v", name, c, lc, pc)
			}
		}
		if d := diff(l.indexes, p.indexes); d != "" {
			t.Errorf("indexes of %s differ:\n%s", name, d)
		}
		if d := diff(l.foreignKeys, p.foreignKeys); d != "" {
			t.Errorf("foreign keys of %s differ:\n%s", name, d)
		}
	}
	t.Logf("%d tables compared", len(lite))
}

// column is a column as both engines can state it.
type column struct {
	Type    string // text, int, bool, time, bytes, real, numeric
	NotNull bool
	Default string // normalized; "" for none
	PK      bool
}

type table struct {
	columns     map[string]column
	indexes     []string // "unique (a, b) where" lines, sorted
	foreignKeys []string // "a -> t(b)", sorted
}

// liteType maps a declared SQLite type to the class both engines share.
func liteType(decl string) string {
	switch d := strings.ToUpper(decl); {
	case d == "TEXT" || strings.HasPrefix(d, "VARCHAR"):
		return "text"
	case d == "INTEGER" || d == "BIGINT" || d == "INT" || d == "SMALLINT":
		return "int"
	case d == "BOOLEAN":
		return "bool"
	case d == "TIMESTAMP" || d == "DATETIME":
		return "time"
	case d == "DATE":
		return "date"
	case d == "BLOB":
		return "bytes"
	case d == "REAL" || d == "DOUBLE PRECISION":
		return "real"
	case strings.HasPrefix(d, "NUMERIC"):
		return "numeric"
	}
	return "sqlite:" + decl
}

func pgType(t string) string {
	switch t {
	case "text", "character varying":
		return "text"
	case "bigint", "integer", "smallint":
		return "int"
	case "boolean":
		return "bool"
	case "timestamp with time zone", "timestamp without time zone":
		return "time"
	case "date":
		return "date"
	case "bytea":
		return "bytes"
	case "double precision", "real":
		return "real"
	case "numeric":
		return "numeric"
	}
	return "postgres:" + t
}

var (
	pgCast    = regexp.MustCompile(`::[a-z ]+(\[\])?`)
	outerParn = regexp.MustCompile(`^\((.*)\)$`)
)

// normDefault makes both engines' spellings of a default comparable.
func normDefault(s string, typ string) string {
	s = strings.TrimSpace(pgCast.ReplaceAllString(s, ""))
	for {
		m := outerParn.FindStringSubmatch(s)
		if m == nil {
			break
		}
		s = m[1]
	}
	s = strings.ToLower(s)
	if typ == "bool" {
		switch s {
		case "0", "false":
			return "false"
		case "1", "true":
			return "true"
		}
	}
	if s == "now()" || s == "current_timestamp" {
		return "now"
	}
	if strings.HasPrefix(s, "nextval(") {
		return autoNumbered
	}
	return s
}

// autoNumbered is the default of a column the engine numbers.
const autoNumbered = "(numbered by the engine)"

func countPK(cols map[string]column) int {
	n := 0
	for _, c := range cols {
		if c.PK {
			n++
		}
	}
	return n
}

// goose's own table differs by design of the tool, not of ours.
const gooseTable = "goose_db_version"

func sqliteSchema(ctx context.Context, db *sql.DB) (map[string]*table, error) {
	names, err := strings1(ctx, db, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return nil, err
	}
	out := map[string]*table{}
	for _, n := range names {
		t := &table{columns: map[string]column{}}
		var intPK []string
		rows, err := db.QueryContext(ctx, fmt.Sprintf(`SELECT name, type, "notnull", COALESCE(dflt_value, ''), pk FROM pragma_table_info('%s')`, n))
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var name, typ, dflt string
			var notNull, pk int
			if err := rows.Scan(&name, &typ, &notNull, &dflt, &pk); err != nil {
				rows.Close()
				return nil, err
			}
			ct := liteType(typ)
			// A primary key column is NOT NULL on PostgreSQL whatever it says.
			t.columns[name] = column{Type: ct, NotNull: notNull == 1 || pk > 0, Default: normDefault(dflt, ct), PK: pk > 0}
			if strings.EqualFold(typ, "INTEGER") && pk == 1 {
				intPK = append(intPK, name)
			}
		}
		rows.Close()
		// The one INTEGER PRIMARY KEY of a table is SQLite's rowid: numbered
		// by the engine, as a sequence numbers it on PostgreSQL; unless the
		// table holds one row whose id a CHECK fixes.
		ddl, err := strings1(ctx, db, `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`, n)
		if err != nil {
			return nil, err
		}
		if len(intPK) == 1 && countPK(t.columns) == 1 && !strings.Contains(strings.Join(ddl, ""), "CHECK ("+intPK[0]+" = 1)") {
			c := t.columns[intPK[0]]
			c.Default = autoNumbered
			t.columns[intPK[0]] = c
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		idx, err := db.QueryContext(ctx, fmt.Sprintf(`SELECT name, "unique", origin, partial FROM pragma_index_list('%s')`, n))
		if err != nil {
			return nil, err
		}
		type ix struct {
			name, origin    string
			unique, partial int
		}
		var ixs []ix
		for idx.Next() {
			var i ix
			if err := idx.Scan(&i.name, &i.unique, &i.origin, &i.partial); err != nil {
				idx.Close()
				return nil, err
			}
			ixs = append(ixs, i)
		}
		idx.Close()
		for _, i := range ixs {
			if i.origin == "pk" {
				continue // the primary key is compared per column
			}
			cols, err := strings1(ctx, db, fmt.Sprintf(`SELECT COALESCE(name, '<expr>') FROM pragma_index_info('%s') ORDER BY seqno`, i.name))
			if err != nil {
				return nil, err
			}
			t.indexes = append(t.indexes, indexLine(i.unique == 1, cols, i.partial == 1))
		}
		slices.Sort(t.indexes)
		fks, err := db.QueryContext(ctx, fmt.Sprintf(`SELECT "from", "table", COALESCE("to", '') FROM pragma_foreign_key_list('%s')`, n))
		if err != nil {
			return nil, err
		}
		for fks.Next() {
			var from, tbl, to string
			if err := fks.Scan(&from, &tbl, &to); err != nil {
				fks.Close()
				return nil, err
			}
			if to == "" { // REFERENCES t with no column: its primary key
				to = "id"
			}
			t.foreignKeys = append(t.foreignKeys, fmt.Sprintf("%s -> %s(%s)", from, tbl, to))
		}
		fks.Close()
		slices.Sort(t.foreignKeys)
		out[n] = t
	}
	return out, nil
}

func postgresSchema(ctx context.Context, db *sql.DB) (map[string]*table, error) {
	names, err := strings1(ctx, db, `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	if err != nil {
		return nil, err
	}
	out := map[string]*table{}
	for _, n := range names {
		t := &table{columns: map[string]column{}}
		pks, err := strings1(ctx, db, `SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
			WHERE i.indrelid = $1::regclass AND i.indisprimary`, n)
		if err != nil {
			return nil, err
		}
		rows, err := db.QueryContext(ctx, `SELECT column_name, data_type, is_nullable, COALESCE(column_default, '')
			FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`, n)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var name, typ, nullable, dflt string
			if err := rows.Scan(&name, &typ, &nullable, &dflt); err != nil {
				rows.Close()
				return nil, err
			}
			ct := pgType(typ)
			t.columns[name] = column{Type: ct, NotNull: nullable == "NO", Default: normDefault(dflt, ct), PK: slices.Contains(pks, name)}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		idx, err := db.QueryContext(ctx, `SELECT i.indisunique, i.indpred IS NOT NULL,
				ARRAY(SELECT COALESCE(a.attname, '<expr>') FROM unnest(i.indkey) WITH ORDINALITY k(attnum, ord)
					LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum AND k.attnum > 0 ORDER BY k.ord)::text
			FROM pg_index i WHERE i.indrelid = $1::regclass AND NOT i.indisprimary`, n)
		if err != nil {
			return nil, err
		}
		for idx.Next() {
			var unique, partial bool
			var cols string
			if err := idx.Scan(&unique, &partial, &cols); err != nil {
				idx.Close()
				return nil, err
			}
			list := strings.Split(strings.Trim(cols, "{}"), ",")
			for i, c := range list {
				list[i] = strings.Trim(c, `"`)
			}
			t.indexes = append(t.indexes, indexLine(unique, list, partial))
		}
		idx.Close()
		slices.Sort(t.indexes)
		fks, err := db.QueryContext(ctx, `SELECT kcu.column_name, ccu.table_name, ccu.column_name
			FROM information_schema.table_constraints tc
			JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name AND kcu.table_schema = tc.table_schema
			JOIN information_schema.constraint_column_usage ccu ON ccu.constraint_name = tc.constraint_name AND ccu.table_schema = tc.table_schema
			WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_schema = current_schema() AND tc.table_name = $1`, n)
		if err != nil {
			return nil, err
		}
		for fks.Next() {
			var from, tbl, to string
			if err := fks.Scan(&from, &tbl, &to); err != nil {
				fks.Close()
				return nil, err
			}
			t.foreignKeys = append(t.foreignKeys, fmt.Sprintf("%s -> %s(%s)", from, tbl, to))
		}
		fks.Close()
		slices.Sort(t.foreignKeys)
		out[n] = t
	}
	return out, nil
}

func indexLine(unique bool, cols []string, partial bool) string {
	s := "index (" + strings.Join(cols, ", ") + ")"
	if unique {
		s = "unique " + s
	}
	if partial {
		s += " where …"
	}
	return s
}

func strings1(ctx context.Context, db *sql.DB, q string, args ...any) ([]string, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func union(a, b []string) []string {
	out := slices.Concat(a, b)
	slices.Sort(out)
	return slices.Compact(out)
}

// diff lists the lines only one side has.
func diff(lite, pg []string) string {
	var b strings.Builder
	for _, l := range lite {
		if !slices.Contains(pg, l) {
			fmt.Fprintf(&b, "  only SQLite: %s\n", l)
		}
	}
	for _, p := range pg {
		if !slices.Contains(lite, p) {
			fmt.Fprintf(&b, "  only PostgreSQL: %s\n", p)
		}
	}
	return b.String()
}
