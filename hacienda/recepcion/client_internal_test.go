package recepcion

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"maps"
	"testing"
)

// TestEncodeSubmission: the body written in one pass is the JSON the
// struct with its comprobanteXml field would encode to.
func TestEncodeSubmission(t *testing.T) {
	xml := bytes.Repeat([]byte("<a>é&amp;\"</a>\x00\xff"), 500)
	for _, b := range []submitBody{
		{Clave: "50601", Fecha: "2026-01-02T03:04:05-06:00", Emisor: Party{TipoIdentificacion: "02", NumeroIdentificacion: "3101123456"}},
		{Clave: "50601", Fecha: "f", Emisor: Party{TipoIdentificacion: "01", NumeroIdentificacion: "1"},
			Receptor: &Party{TipoIdentificacion: "01", NumeroIdentificacion: "2"}, CallbackURL: "https://x/<&>", ConsecutivoReceptor: "00100001050000000001"},
	} {
		body, err := encodeSubmission(b, xml)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, body)
		}
		want := map[string]any{}
		plain, _ := json.Marshal(b)
		if err := json.Unmarshal(plain, &want); err != nil {
			t.Fatal(err)
		}
		want["comprobanteXml"] = base64.StdEncoding.EncodeToString(xml)
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if !bytes.Equal(g, w) {
			t.Errorf("body\n%s\nwant\n%s", g, w)
		}
	}
}

// statusBodies are status answers as the tax authority and others might
// write them.
var statusBodies = []string{
	`{"clave":"50601","fecha":"2026-01-02T03:04:05-06:00","ind-estado":"aceptado","respuesta-xml":"PD94bWw+"}`,
	"{ \"Clave\" : \"1\" ,\n\t\"IND_ESTADO\":\"rechazado\", \"respuesta-xml\": null }\r\n",
	`{}`, `{"a":"ñandú","a":"b"}`, `{"a":"x","a":null}`, `{"ind-estado":"aceptado","IND_ESTADO":null}`,
	`{"ind-estado":"aceptado","ind_estado":"rechazado"}`,
	// Left to encoding/json:
	`{"a":"\u00f1"}`, `{"a":"x\/y"}`, `{"a":1}`, `{"a":{"b":"c"}}`, `{"a":"x",}`, `["a"]`, `{"a":"x"} x`, "{\"a\":\"\xff\"}",
}

// TestPlainStatusFields: the answers the plain reader takes give the fields
// encoding/json gives, and it leaves the others to it.
func TestPlainStatusFields(t *testing.T) {
	plain := 0
	for _, b := range statusBodies {
		got, ok := plainStatusFields([]byte(b))
		want, err := jsonStatusFields([]byte(b))
		if !ok {
			continue
		}
		plain++
		if err != nil {
			t.Errorf("%s: read plainly, but encoding/json refuses it: %v", b, err)
			continue
		}
		if !maps.Equal(got, want) {
			t.Errorf("%s: fields %v, want %v", b, got, want)
		}
	}
	if plain != 7 {
		t.Errorf("%d answers read plainly, want the first 7", plain)
	}
}

// TestStatusFieldsOrder: of two names that normalize alike the later in
// the answer wins, whichever reader reads it, every time.
func TestStatusFieldsOrder(t *testing.T) {
	for _, tt := range []struct{ body, want string }{
		{`{"ind-estado":"aceptado","ind_estado":"rechazado"}`, "rechazado"},
		{`{"ind_estado":"rechazado","IND-ESTADO":"aceptado","x":1}`, "aceptado"},
		{`{"ind-estado":"aceptado","IndEstado":null}`, ""},
		{`{"ind-estado":"aceptado","IndEstado":{"a":1}}`, ""},
		{`{"ind-estado":"aceptado","IndEstado":"\u0061"}`, "a"},
	} {
		for range 20 {
			f, err := statusFields([]byte(tt.body))
			if err != nil {
				t.Fatalf("%s: %v", tt.body, err)
			}
			if f["indestado"] != tt.want {
				t.Fatalf("%s: indestado %q, want %q", tt.body, f["indestado"], tt.want)
			}
		}
	}
}

func FuzzPlainStatusFields(f *testing.F) {
	for _, b := range statusBodies {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b string) {
		got, ok := plainStatusFields([]byte(b))
		if !ok {
			return
		}
		want, err := jsonStatusFields([]byte(b))
		if err != nil {
			t.Fatalf("read plainly, but encoding/json refuses it: %v", err)
		}
		if !maps.Equal(got, want) {
			t.Fatalf("fields %v, want %v", got, want)
		}
	})
}
