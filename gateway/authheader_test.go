package gateway

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"facturad/hacienda/msg"
)

// A refused credential header is named in the answer, its value never.
func TestMalformedCredentialHeaders(t *testing.T) {
	b := setup(t, Options{Tenants: &fakeTenants{}})
	path := "/api/companies/2/branches/v4"
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	const secret = "s3cr3t-value"
	tests := []struct {
		name   string
		hdr    []string
		reason *msg.Entry // the end of the 401's message
	}{
		{"error/no AuthToken", []string{"Authorization", "Basic " + b64("u1:"+secret)}, msg.AuthNoToken},
		{"error/no Authorization", []string{"AuthToken", fakeUser.token}, msg.AuthNoAuth},
		{"error/Bearer", []string{"AuthToken", fakeUser.token, "Authorization", "Bearer " + secret}, msg.AuthNotBasic},
		{"error/Basic alone", []string{"AuthToken", fakeUser.token, "Authorization", "Basic"}, msg.AuthEmptyBasic},
		{"error/not base64", []string{"AuthToken", fakeUser.token, "Authorization", "Basic " + secret + "%%"}, msg.AuthNotBase64},
		{"error/no colon", []string{"AuthToken", fakeUser.token, "Authorization", "Basic " + b64("u1"+secret)}, msg.AuthNoColon},
		{"error/empty usuario", []string{"AuthToken", fakeUser.token, "Authorization", "Basic " + b64(":"+secret)}, msg.AuthEmptyUser},
		{"error/empty contrasena", []string{"AuthToken", fakeUser.token, "Authorization", "Basic " + b64("u1:")}, msg.AuthEmptyPassword},
		{"error/wrong pair", []string{"AuthToken", fakeUser.token, "Authorization", "Basic " + b64("u1:"+secret)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.do(t, "GET", path, nil, "", nil, tt.hdr...)
			errs := requireA7(t, r, http.StatusUnauthorized)
			if len(errs) != 0 {
				t.Errorf("401 errors should be empty: %v", errs)
			}
			m, _ := r.object(t)["message"].(string)
			reason := ""
			if tt.reason != nil {
				reason = tt.reason.With().String()
			}
			if !strings.HasPrefix(m, msgUnauth) || !strings.HasSuffix(m, reason) {
				t.Errorf("message %q, want %q then %q", m, msgUnauth, reason)
			}
			if reason == "" && m != msgUnauth {
				t.Errorf("a wrong pair says more than %q: %q", msgUnauth, m)
			}
			if strings.Contains(string(r.body), secret) {
				t.Errorf("the answer repeats the header's value: %s", r.body)
			}
		})
	}
}

// A long Basic value encoded by `printf … | base64` is wrapped at 76
// columns; sent as is, its second line is a header line without ':'.
func TestWrappedBasicHeader(t *testing.T) {
	b := setup(t, Options{Tenants: &fakeTenants{}})
	pair := "3101123456-001-k7fq2m:" + strings.Repeat("x", 60)
	enc := base64.StdEncoding.EncodeToString([]byte(pair))
	wrapped := enc[:76] + "\n" + enc[76:]
	tests := []struct {
		name   string
		raw    string
		status int
		field  string
		want   string
	}{
		{"error/Authorization wrapped with a line feed",
			"GET /api/companies/2/branches/v4 HTTP/1.1\r\nHost: x\r\nAuthToken: tok-1\r\nAuthorization: Basic " + wrapped + "\r\n\r\n",
			http.StatusBadRequest, "Authorization", msg.AuthorizationWrapped.With().String()},
		{"error/another header wrapped",
			"GET /api/companies/2/branches/v4 HTTP/1.1\r\nHost: x\r\nX-Note: one\r\ntwo\r\n\r\n",
			http.StatusBadRequest, "X-Note", "The X-Note header's value is broken"},
		{"error/Authorization folded onto a second line",
			"GET /api/companies/2/branches/v4 HTTP/1.1\r\nHost: x\r\nAuthToken: tok-1\r\nAuthorization: Basic " + enc[:76] + "\r\n " + enc[76:] + "\r\n\r\n",
			http.StatusUnauthorized, "", msg.AuthWrapped.With().String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := b.apiLn.Dial()
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_ = c.SetDeadline(time.Now().Add(10 * time.Second))
			if _, err := io.WriteString(c, tt.raw); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.status, body)
			}
			if strings.Contains(string(body), enc[:20]) || strings.Contains(string(body), "two") {
				t.Errorf("the answer repeats a header value: %s", body)
			}
			var m struct {
				Message string              `json:"message"`
				Errors  map[string][]string `json:"errors"`
			}
			if err := json.Unmarshal(body, &m); err != nil {
				t.Fatalf("%v: %s", err, body)
			}
			if tt.field == "" {
				if !strings.HasSuffix(m.Message, tt.want) {
					t.Errorf("message %q, want it to end with %q", m.Message, tt.want)
				}
				return
			}
			if got := m.Errors[tt.field]; len(got) != 1 || !strings.HasPrefix(got[0], tt.want) {
				t.Errorf("errors %v, want %s: %q", m.Errors, tt.field, tt.want)
			}
		})
	}
}
