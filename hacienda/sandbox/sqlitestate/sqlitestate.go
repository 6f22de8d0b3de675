// Package sqlitestate keeps a tax-authority sandbox's state in a SQLite
// file (modernc.org/sqlite, the driver of the service's embedded store), so
// that a sandbox started again on the file knows every document received
// before (sandbox.Store), and signs its answers with the same certificate
// (Store.AnswerSigner).
//
// The file runs in WAL mode with synchronous commits (FULL): a receipt or
// a verdict the sandbox has answered survives a crash of the process and a
// power cut. One connection writes; the sandbox's own lock orders its
// receipts, so there is nothing to wait for but the disk. The file grows
// with the documents the sandbox keeps (sandbox.Options.MaxDocuments,
// oldest forgotten first); the space of forgotten ones is reused by the
// next, so it stops growing once that bound is reached.
package sqlitestate

import (
	"context"
	"crypto"
	"crypto/x509"
	"database/sql"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver

	"facturad/hacienda/sandbox"
)

// schemaVersion is the file's layout, in PRAGMA user_version; a file of a
// later layout is refused rather than misread.
const schemaVersion = 1

const schema = `
CREATE TABLE IF NOT EXISTS documents (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT, -- arrival order
    key     TEXT NOT NULL UNIQUE,
    doc     BLOB NOT NULL,  -- the sandbox's own encoding of the submission
    xml     BLOB NOT NULL,
    estado  TEXT,           -- NULL until judged
    answer  BLOB,
    detalle TEXT,           -- JSON array
    credits TEXT            -- JSON object: reference key -> amount
);
CREATE TABLE IF NOT EXISTS answer_signer (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    key   BLOB NOT NULL,    -- PKCS #8
    chain TEXT NOT NULL     -- PEM, the signing certificate first
);
`

// Store is a sandbox.Store on one SQLite file. It is safe for concurrent
// use.
type Store struct {
	db   *sql.DB
	path string
}

var _ sandbox.Store = (*Store)(nil)

// errNotKept is Judge's error for a document the file does not keep.
var errNotKept = errors.New("the document is not kept (its receipt is not written yet, or it was forgotten)")

// Open opens the file at path, creating it (readable by its owner only)
// when missing. The folder must exist.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" || strings.ContainsAny(path, "?#") || path == ":memory:" {
		return nil, fmt.Errorf("sandbox state: path %q must be a plain file name", path)
	}
	if err := privateFile(path); err != nil {
		return nil, fmt.Errorf("sandbox state %s: %w", path, err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", path+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("sandbox state %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	db.SetMaxIdleConns(1)
	db.SetConnMaxLifetime(0)
	db.SetConnMaxIdleTime(0)
	s := &Store{db: db, path: path}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("sandbox state %s: %w", path, err)
	}
	return s, nil
}

// migrate creates the tables of a new file and refuses a file of a later
// layout.
func (s *Store) migrate(ctx context.Context) error {
	var v int
	if err := s.db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v); err != nil {
		return fmt.Errorf("read its version: %w", err)
	}
	if v > schemaVersion {
		return fmt.Errorf("written by a later version (layout %d; this one reads %d)", v, schemaVersion)
	}
	if _, err := s.db.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("create the tables: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, schemaVersion)); err != nil {
		return fmt.Errorf("set its version: %w", err)
	}
	return nil
}

// Close closes the file.
func (s *Store) Close() error { return s.db.Close() }

// Path is the file's path.
func (s *Store) Path() string { return s.path }

// Load returns every document kept, in the order they arrived.
func (s *Store) Load(ctx context.Context) ([]sandbox.Record, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT key, doc, xml, estado, answer, detalle, credits FROM documents ORDER BY seq`)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	defer rows.Close()
	var out []sandbox.Record
	for rows.Next() {
		var (
			r                sandbox.Record
			estado           sql.NullString
			answer           []byte
			detalle, credits sql.NullString
		)
		if err := rows.Scan(&r.Key, &r.Doc, &r.XML, &estado, &answer, &detalle, &credits); err != nil {
			return nil, fmt.Errorf("load: %w", err)
		}
		if estado.Valid {
			v := &sandbox.Verdict{Estado: estado.String, Answer: answer}
			if detalle.Valid {
				if err := json.Unmarshal([]byte(detalle.String), &v.Detalle); err != nil {
					return nil, fmt.Errorf("load %s: detalle: %w", r.Key, err)
				}
			}
			if credits.Valid {
				if err := json.Unmarshal([]byte(credits.String), &v.Credits); err != nil {
					return nil, fmt.Errorf("load %s: credits: %w", r.Key, err)
				}
			}
			r.Verdict = v
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	return out, nil
}

// Receive keeps r and forgets the documents of forget, in one
// transaction. A document kept under r's key before is replaced: the
// sandbox received it again after forgetting it.
func (s *Store) Receive(ctx context.Context, r sandbox.Record, forget []string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("receive %s: %w", r.Key, err)
	}
	defer tx.Rollback()
	for _, k := range forget {
		if _, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE key = ?`, k); err != nil {
			return fmt.Errorf("receive %s: forget %s: %w", r.Key, k, err)
		}
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM documents WHERE key = ?`, r.Key); err != nil {
		return fmt.Errorf("receive %s: %w", r.Key, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO documents (key, doc, xml) VALUES (?, ?, ?)`, r.Key, r.Doc, nonNil(r.XML)); err != nil {
		return fmt.Errorf("receive %s: %w", r.Key, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("receive %s: %w", r.Key, err)
	}
	return nil
}

// Judge keeps a document's verdict. A document not kept (its receipt not
// written yet, or forgotten meanwhile) is an error, and is left as it is:
// the sandbox then tells no verdict, and judges it again later.
func (s *Store) Judge(ctx context.Context, key string, v sandbox.Verdict) error {
	var detalle, credits any
	if len(v.Detalle) > 0 {
		b, err := json.Marshal(v.Detalle)
		if err != nil {
			return fmt.Errorf("judge %s: %w", key, err)
		}
		detalle = string(b)
	}
	if len(v.Credits) > 0 {
		b, err := json.Marshal(v.Credits)
		if err != nil {
			return fmt.Errorf("judge %s: %w", key, err)
		}
		credits = string(b)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE documents SET estado = ?, answer = ?, detalle = ?, credits = ? WHERE key = ?`,
		v.Estado, v.Answer, detalle, credits, key)
	if err != nil {
		return fmt.Errorf("judge %s: %w", key, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("judge %s: %w", key, err)
	}
	if n == 0 {
		return fmt.Errorf("judge %s: %w", key, errNotKept)
	}
	return nil
}

// AnswerSigner returns the signer kept in the file, or mints one with mint
// and keeps it: the sandbox's answers are then signed with one certificate
// across starts, so that an answer kept from before verifies against the
// authority the service trusts now. A kept certificate that expires within
// a day is replaced by a new one.
func (s *Store) AnswerSigner(ctx context.Context, mint func() (*sandbox.CertificateSigner, error)) (*sandbox.CertificateSigner, error) {
	var (
		der   []byte
		chain string
	)
	err := s.db.QueryRowContext(ctx, `SELECT key, chain FROM answer_signer WHERE id = 1`).Scan(&der, &chain)
	switch {
	case err == nil:
		c, err := parseSigner(der, chain)
		if err != nil {
			return nil, fmt.Errorf("sandbox state: the kept answer signer: %w", err)
		}
		if time.Until(c.Certificate().NotAfter) > 24*time.Hour {
			return c, nil
		}
	case !errors.Is(err, sql.ErrNoRows):
		return nil, fmt.Errorf("sandbox state: read the answer signer: %w", err)
	}
	c, err := mint()
	if err != nil {
		return nil, err
	}
	der, err = x509.MarshalPKCS8PrivateKey(c.Key)
	if err != nil {
		return nil, fmt.Errorf("sandbox state: keep the answer signer: %w", err)
	}
	var b strings.Builder
	for _, cert := range c.Chain {
		b.Write(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}))
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO answer_signer (id, key, chain) VALUES (1, ?, ?)
ON CONFLICT (id) DO UPDATE SET key = excluded.key, chain = excluded.chain`, der, b.String()); err != nil {
		return nil, fmt.Errorf("sandbox state: keep the answer signer: %w", err)
	}
	return c, nil
}

// parseSigner reads a kept signer: its PKCS #8 key and its PEM chain.
func parseSigner(der []byte, chain string) (*sandbox.CertificateSigner, error) {
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("key: %w", err)
	}
	key, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("key of type %T cannot sign", k)
	}
	c := &sandbox.CertificateSigner{Key: key}
	rest := []byte(chain)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		cert, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate: %w", err)
		}
		c.Chain = append(c.Chain, cert)
	}
	if len(c.Chain) == 0 {
		return nil, errors.New("no certificate")
	}
	return c, nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// privateFile creates the file at path readable and writable by its
// owner only, and narrows the mode of an existing one and of its WAL
// files: they hold the documents received.
func privateFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	switch {
	case err == nil:
		return f.Close()
	case !errors.Is(err, fs.ErrExist):
		return fmt.Errorf("create the file: %w", err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if st.Mode().Perm()&0o077 != 0 {
			if err := os.Chmod(p, st.Mode().Perm()&0o700); err != nil {
				return fmt.Errorf("narrow the mode of %s: %w", p, err)
			}
		}
	}
	return nil
}
