package sqlitestate_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"facturad/hacienda/sandbox"
	"facturad/hacienda/sandbox/sqlitestate"
)

func open(t *testing.T, path string) *sqlitestate.Store {
	t.Helper()
	s, err := sqlitestate.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// Documents come back in arrival order with their verdicts; a document
// received again replaces the one kept under its key, at the end; the
// forgotten ones are gone; a verdict for a key not kept (not received yet, or forgotten) is
// an error and changes nothing.
func TestReceiveJudgeLoad(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sandbox.db")
	s := open(t, path)
	for _, k := range []string{"a", "b", "c"} {
		if err := s.Receive(ctx, sandbox.Record{Key: k, Doc: []byte(`{"k":"` + k + `"}`), XML: []byte("<x/>")}, nil); err != nil {
			t.Fatal(err)
		}
	}
	v := sandbox.Verdict{Estado: "aceptado", Answer: []byte("<MensajeHacienda/>"), Detalle: []string{"uno"}, Credits: map[string]string{"a": "10.5"}}
	if err := s.Judge(ctx, "b", v); err != nil {
		t.Fatal(err)
	}
	if err := s.Judge(ctx, "zzz", v); err == nil {
		t.Fatal("a verdict for a key not kept: no error")
	}
	if err := s.Receive(ctx, sandbox.Record{Key: "a", Doc: []byte(`{"again":true}`), XML: nil}, []string{"c"}); err != nil {
		t.Fatal(err)
	}
	rs, err := open(t, path).Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, r := range rs {
		keys = append(keys, r.Key)
	}
	if !slices.Equal(keys, []string{"b", "a"}) {
		t.Fatalf("kept %v, want b then a", keys)
	}
	b, a := rs[0], rs[1]
	if b.Verdict == nil || b.Verdict.Estado != "aceptado" || string(b.Verdict.Answer) != "<MensajeHacienda/>" ||
		!slices.Equal(b.Verdict.Detalle, []string{"uno"}) || b.Verdict.Credits["a"] != "10.5" || string(b.XML) != "<x/>" {
		t.Errorf("b: %+v %+v", b, b.Verdict)
	}
	if a.Verdict != nil || string(a.Doc) != `{"again":true}` || len(a.XML) != 0 {
		t.Errorf("a received again: %+v", a)
	}
}

// The file is its owner's only, and a file written by a later layout is
// refused rather than misread.
func TestFileModeAndLayout(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sandbox.db")
	s := open(t, path)
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", st.Mode(), err)
	}
	s.Close()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`PRAGMA user_version = 99`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := sqlitestate.Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), "later version") {
		t.Fatalf("a later layout: %v", err)
	}
}
