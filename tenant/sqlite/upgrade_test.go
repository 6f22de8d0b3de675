package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"facturad/tenant/migration"
)

// insertRow inserts a row into table with the values given and, for every
// other NOT NULL column without a default, a value of its type; it
// returns the row's id.
func insertRow(t *testing.T, db *sql.DB, table string, values map[string]any) int64 {
	t.Helper()
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, `SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)`, table)
	if err != nil {
		t.Fatal(err)
	}
	cols, args := []string{}, []any{}
	for rows.Next() {
		var (
			name, typ   string
			notNull, pk int
			dflt        sql.NullString
		)
		if err := rows.Scan(&name, &typ, &notNull, &dflt, &pk); err != nil {
			t.Fatal(err)
		}
		v, given := values[name]
		switch {
		case given:
		case pk == 1 || notNull == 0 || dflt.Valid:
			continue
		case strings.EqualFold(typ, "INTEGER"):
			v = 1
		case strings.EqualFold(typ, "BLOB"):
			v = []byte{0}
		default:
			v = "x"
		}
		cols, args = append(cols, name), append(args, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows.Close()
	q := "INSERT INTO " + table + " (" + strings.Join(cols, ", ") + ") VALUES (?" + strings.Repeat(", ?", len(cols)-1) + ") RETURNING rowid"
	var id int64
	if err := db.QueryRowContext(ctx, q, args...).Scan(&id); err != nil {
		t.Fatalf("insert into %s: %v", table, err)
	}
	return id
}

// A store of the schema before the tenant events (version 3) with
// e-mails in its outbox is migrated: the e-mails keep their ids and
// fields, ids are not handed out again (the AUTOINCREMENT counter is
// kept past rows purged), a notice about no document can be written and
// the store reads both kinds.
func TestTenantEventsMigrationKeepsTheOutbox(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "facturad.db")
	db, err := sql.Open("sqlite", path+"?_pragma=foreign_keys(1)&_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, qCreateMigrationsTable); err != nil {
		t.Fatal(err)
	}
	ms, err := migration.Load(migrationFiles, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Version <= 3 {
			if err := applyMigration(ctx, db, m, time.Now); err != nil {
				t.Fatalf("%s: %v", m.Name, err)
			}
		}
	}
	now := formatTime(time.Now())
	company := insertRow(t, db, "companies", map[string]any{"id": 7, "activo": 1, "facturacion_electronica": 1, "created_at": now, "updated_at": now})
	branch := insertRow(t, db, "branches", map[string]any{"company_id": company, "activo": 1, "ver_moneda_extranjera": 0, "created_at": now, "updated_at": now})
	doc := insertRow(t, db, "documents", map[string]any{"company_id": company, "branch_id": branch, "estado": "01", "phase": "accepted",
		"clave": "50601", "created_at": now, "updated_at": now})
	var mails []int64
	for _, to := range []string{`["a@example.com"]`, `["b@example.com","c@example.com"]`, `["purged@example.com"]`} {
		mails = append(mails, insertRow(t, db, "email_deliveries", map[string]any{"company_id": company, "document_id": doc,
			"clave": "50601", "recipients": to, "created_at": now, "next_attempt_at": now}))
	}
	if _, err := db.ExecContext(ctx, `DELETE FROM email_deliveries WHERE id = ?`, mails[2]); err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, db, time.Now); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	es, err := s.DocumentEmails(ctx, doc)
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != 2 || es[0].ID != mails[0] || es[1].ID != mails[1] || es[1].Recipients[1] != "c@example.com" ||
		es[0].Clave != "50601" || es[0].DocumentID != doc || es[0].Evento != "" || es[0].Payload != nil {
		t.Fatalf("e-mails after the migration: %+v", es)
	}
	var notice int64
	if err := s.write.QueryRowContext(ctx, `INSERT INTO email_deliveries (company_id, document_id, clave, recipients, created_at, evento, event_id, payload)
VALUES (?, NULL, '', '["avisos@example.com"]', ?, 'certificado.vencido', 'evt_1', x'7b7d') RETURNING id`, company, now).Scan(&notice); err != nil {
		t.Fatal(err)
	}
	if notice <= mails[2] {
		t.Errorf("a new e-mail got id %d, at or below %d, which the store handed out before", notice, mails[2])
	}
	// An e-mail is a document's or a notice's, never neither nor both.
	for _, bad := range []string{
		`INSERT INTO email_deliveries (company_id, document_id, clave, recipients, created_at) VALUES (7, NULL, '', '[]', 'x')`,
		`INSERT INTO email_deliveries (company_id, document_id, clave, recipients, created_at, evento, payload) VALUES (7, 1, '', '[]', 'x', 'certificado.vencido', x'00')`,
	} {
		if _, err := s.write.ExecContext(ctx, bad); err == nil {
			t.Errorf("accepted: %s", bad)
		}
	}
	if err := s.Ping(ctx); err != nil {
		t.Fatal(err)
	}
}
