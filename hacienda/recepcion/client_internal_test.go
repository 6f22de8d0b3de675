package recepcion

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
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
