package api

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzJSONFields checks that any body is either read or refused on "body"
// (a 400 from the gateway), that every valid JSON object is read, and that
// reading fields of any type never panics.
func FuzzJSONFields(f *testing.F) {
	for _, seed := range []string{
		`{"sucursal":"001","Sucursal":2,"activo":true,"barrio":null}`,
		`{"a":{"b":[1,2]}}`, `[]`, `{`, `{"a":1} x`, `"s"`, `{"verMonedaExtranjera":"S"}`, "",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		fl, err := jsonFields(body)
		trimmed := bytes.TrimSpace(body)
		if json.Valid(trimmed) && len(trimmed) > 0 && trimmed[0] == '{' {
			if err != nil {
				t.Fatalf("valid object refused: %v", err)
			}
		}
		if err != nil {
			fe, ok := err.(*FieldError)
			if !ok || len(fe.Fields["body"]) == 0 {
				t.Fatalf("refusal is not a field error on body: %#v", err)
			}
			return
		}
		for name := range fl.json {
			fl.str(name)
			fl.flag(name)
		}
		_ = fl.err()
	})
}
