package openapicheck

import (
	"bytes"
	"context"
	"errors"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
)

// doc describes one form call and one JSON answer with a composed schema.
const doc = `{
  "openapi": "3.0.3",
  "info": {"title": "t", "version": "1"},
  "paths": {
    "/things": {
      "post": {
        "requestBody": {"content": {
          "multipart/form-data": {"schema": {"$ref": "#/components/schemas/Form"}},
          "application/x-www-form-urlencoded": {"schema": {"$ref": "#/components/schemas/Form"}}
        }},
        "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Answer"}}}}}
      }
    }
  },
  "components": {"schemas": {
    "Form": {"type": "object", "required": ["Nombre"], "properties": {
      "Nombre": {"type": "string", "minLength": 3},
      "Provincia": {"type": "string", "enum": ["1", "2"]},
      "Archivo": {"type": "string", "format": "binary"}
    }},
    "Answer": {"allOf": [
      {"type": "object", "properties": {"id": {"type": "integer"}, "items": {"type": "array", "items": {"$ref": "#/components/schemas/Item"}}}},
      {"type": "object", "properties": {"mensaje": {"type": "string"}, "extra": {"type": "object", "additionalProperties": {"type": "string"}}}}
    ]},
    "Item": {"oneOf": [
      {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}},
      {"type": "object", "required": ["b"], "properties": {"b": {"type": "integer"}}}
    ]}
  }}
}`

func multipartBody(t *testing.T, fields map[string]string) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	w := multipart.NewWriter(&b)
	for k, v := range fields {
		if k == "archivo" {
			fw, err := w.CreateFormFile(k, "x.p12")
			if err != nil {
				t.Fatal(err)
			}
			fw.Write([]byte(v))
			continue
		}
		if err := w.WriteField(k, v); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	return w.FormDataContentType(), b.Bytes()
}

func TestCheck(t *testing.T) {
	c, err := New(context.Background(), []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	const okAnswer = `{"id":1,"mensaje":"","items":[{"a":"x"},{"b":2}],"extra":{"any":"thing"}}`
	tests := []struct {
		name    string
		ct      string
		body    []byte
		answer  string
		wantErr string
	}{
		{name: "ok/multipart, names in any case, a file", answer: okAnswer,
			ct: "multipart", body: []byte("nombre=Empresa|PROVINCIA=1|archivo=binary\x00data")},
		{name: "ok/urlencoded", ct: "application/x-www-form-urlencoded", body: []byte("NOMBRE=Empresa&provincia=2"), answer: okAnswer},
		{name: "error/multipart field not described", ct: "multipart", body: []byte("Nombre=Empresa|Canton=01"), answer: okAnswer,
			wantErr: `form field "Canton" is not described`},
		{name: "error/multipart value outside the enumeration", ct: "multipart", body: []byte("Nombre=Empresa|Provincia=9"), answer: okAnswer,
			wantErr: "Provincia"},
		{name: "error/multipart required field missing", ct: "multipart", body: []byte("Provincia=1"), answer: okAnswer,
			wantErr: "Nombre"},
		{name: "error/urlencoded field not described", ct: "application/x-www-form-urlencoded", body: []byte("Nombre=Empresa&x=1"), answer: okAnswer,
			wantErr: `form field "x" is not described`},
		{name: "error/answer field not described", ct: "application/x-www-form-urlencoded", body: []byte("Nombre=Empresa"),
			answer: `{"id":1,"mensaje":"","secreto":"s"}`, wantErr: "fields the document does not describe: secreto"},
		{name: "error/answer field not described in a oneOf item", ct: "application/x-www-form-urlencoded", body: []byte("Nombre=Empresa"),
			answer: `{"id":1,"items":[{"a":"x","c":1}]}`, wantErr: "items[0].c"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct, body := tt.ct, tt.body
			if ct == "multipart" {
				fields := map[string]string{}
				for _, kv := range strings.Split(string(body), "|") {
					k, v, _ := strings.Cut(kv, "=")
					fields[k] = v
				}
				ct, body = multipartBody(t, fields)
			}
			req, err := http.NewRequest("POST", "http://x.test/things", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", ct)
			err = c.Check(context.Background(), Call{Request: req, RequestBody: body, Status: 200,
				Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(tt.answer)})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
	t.Run("error/not described", func(t *testing.T) {
		req, _ := http.NewRequest("GET", "http://x.test/other", nil)
		if err := c.Check(context.Background(), Call{Request: req, Status: 404}); !errors.Is(err, ErrNotDescribed) {
			t.Fatalf("err = %v", err)
		}
	})
}
