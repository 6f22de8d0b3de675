package gateway

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// TestWebhookRoutes: register (the secret shown once), list without the
// secret, the delivery log, delete; unknown events, refused URLs and bad
// paths are 400s on their fields.
func TestWebhookRoutes(t *testing.T) {
	w := newWorld(t)
	co := w.createCompany(t, w.admin, "3101123456", "Empresa Ganchos S.A.")
	base := fmt.Sprintf("/api/companies/%d/webhooks", co.id)
	r := w.do(t, "POST", base+"/v4", &co.user, "application/json",
		[]byte(`{"URL":"https://93.184.215.14/hooks","Eventos":["documento.aceptado","recibido.rechazado","documento.aceptado"]}`))
	if r.status != 200 {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	created := r.object(t)
	secret, _ := created["secreto"].(string)
	if !strings.HasPrefix(secret, "whsec_") || len(secret) < 40 || fmt.Sprint(created["eventos"]) != "[documento.aceptado recibido.rechazado]" {
		t.Fatalf("created %s", r.body)
	}
	id := num(created["id"])
	r = w.do(t, "GET", base+"/v4", &co.user, "", nil)
	list := r.array(t)
	if len(list) != 1 || num(list[0]["id"]) != id || strings.Contains(string(r.body), secret) || list[0]["secreto"] != nil {
		t.Fatalf("list %s", r.body)
	}
	r = w.do(t, "GET", fmt.Sprintf("%s/%d/deliveries/v4?limit=10", base, id), &co.user, "", nil)
	if m := r.object(t); r.status != 200 || fmt.Sprint(m["items"]) != "[]" || m["next"] != "" {
		t.Fatalf("log %d %s", r.status, r.body)
	}
	for _, tt := range []struct {
		name, body, field, msg string
	}{
		{"url a number", `{"url":5,"eventos":["documento.aceptado"]}`, "url", "must be a JSON string, not a number"},
		{"url an array", `{"url":["https://93.184.215.14/h"],"eventos":["documento.aceptado"]}`, "url", "must be a JSON string, not an array"},
		{"url a boolean", `{"url":true,"eventos":["documento.aceptado"]}`, "url", "must be a JSON string, not a boolean"},
		{"ftp outside the sandbox", `{"url":"ftp://93.184.215.14/h","eventos":["documento.aceptado"]}`, "url", "must be https"},
		{"unknown event", `{"url":"https://93.184.215.14/h","eventos":["documento.borrado"]}`, "eventos", ""},
		{"no events", `{"url":"https://93.184.215.14/h","eventos":[]}`, "eventos", ""},
		{"events not an array", `{"url":"https://93.184.215.14/h","eventos":"documento.aceptado"}`, "eventos", ""},
		{"http outside the sandbox", `{"url":"http://93.184.215.14/h","eventos":["documento.aceptado"]}`, "url", ""},
		{"loopback", `{"url":"https://127.0.0.1/h","eventos":["documento.aceptado"]}`, "url", ""},
		{"metadata address", `{"url":"https://169.254.169.254/latest","eventos":["documento.aceptado"]}`, "url", ""},
		{"no url", `{"eventos":["documento.aceptado"]}`, "url", ""},
	} {
		t.Run("error/"+tt.name, func(t *testing.T) {
			r := w.do(t, "POST", base+"/v4", &co.user, "application/json", []byte(tt.body))
			errs := requireA7(t, r, 400)
			if errs[tt.field] == nil {
				t.Fatalf("errors %v, want one on %s", errs, tt.field)
			}
			if tt.msg != "" && fmt.Sprint(errs[tt.field]) != "["+tt.msg+"]" {
				t.Fatalf("errors on %s: %v, want [%s]", tt.field, errs[tt.field], tt.msg)
			}
		})
	}
	requireA7(t, w.do(t, "GET", fmt.Sprintf("%s/%d/deliveries/v4?limit=0", base, id), &co.user, "", nil), 400)
	requireA7(t, w.do(t, "DELETE", base+"/x/v4", &co.user, "", nil), 400)
	r = w.do(t, "DELETE", fmt.Sprintf("%s/%d/v4", base, id), &co.user, "", nil)
	if r.status != 204 {
		t.Fatalf("delete: %d %s", r.status, r.body)
	}
	requireA7(t, w.do(t, "DELETE", fmt.Sprintf("%s/%d/v4", base, id), &co.user, "", nil), 404)
	requireA7(t, w.do(t, "GET", fmt.Sprintf("%s/%d/deliveries/v4", base, id), &co.user, "", nil), 404)

	// A company that does not exist is 404 for the admin too, as on the
	// company's other routes, not an empty list.
	missing := fmt.Sprintf("/api/companies/%d/webhooks", co.id+1000)
	requireA7(t, w.do(t, "GET", missing+"/v4", &w.admin, "", nil), 404)
	requireA7(t, w.do(t, "POST", missing+"/v4", &w.admin, "application/json",
		[]byte(`{"url":"https://93.184.215.14/h","eventos":["documento.aceptado"]}`)), 404)
}

// TestWebhookLimitConcurrent: 20 registrations of one company at once,
// over the API, leave it with its 10 webhooks; the others are 400s on url
// saying why.
func TestWebhookLimitConcurrent(t *testing.T) {
	w := newWorld(t)
	co := w.createCompany(t, w.admin, "3101123456", "Empresa Muchos Ganchos S.A.")
	path := fmt.Sprintf("/api/companies/%d/webhooks/v4", co.id)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[int]int{}
		refusals []string
	)
	for i := range 20 {
		wg.Go(func() {
			r := w.do(t, "POST", path, &co.user, "application/json",
				fmt.Appendf(nil, `{"url":"https://93.184.215.14/h/%d","eventos":["documento.aceptado"]}`, i))
			mu.Lock()
			defer mu.Unlock()
			statuses[r.status]++
			if r.status == 400 {
				refusals = append(refusals, string(r.body))
			}
		})
	}
	wg.Wait()
	if statuses[200] != 10 || statuses[400] != 10 {
		t.Fatalf("statuses %v, want 10 × 200 and 10 × 400", statuses)
	}
	for _, b := range refusals {
		if !strings.Contains(b, `"url":["a company has at most 10 webhooks; delete one first"]`) {
			t.Errorf("refusal %s", b)
		}
	}
	if list := w.do(t, "GET", path, &co.user, "", nil).array(t); len(list) != 10 {
		t.Fatalf("%d webhooks listed, want 10", len(list))
	}
}
