package client_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"facturad/gateway/client"
)

// A receiver of webhooks verifies each delivery's signature on the raw
// body, refuses it outside the tolerance, and uses the event's id to tell
// a repeated delivery (deliveries are at least once).
func ExampleVerifyWebhook() {
	const secret = "whsec_example" // the secreto CreateWebhook returned
	seen := map[string]bool{}      // a real receiver keeps this in its database
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "unreadable", http.StatusBadRequest)
			return
		}
		if err := client.VerifyWebhook(secret, r.Header.Get("Facturad-Signature"), body, time.Now(), client.WebhookTolerance); err != nil {
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var ev client.WebhookEvent
		if err := json.Unmarshal(body, &ev); err != nil {
			http.Error(w, "unreadable", http.StatusBadRequest)
			return
		}
		if seen[ev.ID] {
			w.WriteHeader(http.StatusOK) // already handled: acknowledge again
			return
		}
		seen[ev.ID] = true
		var doc client.Document
		_ = json.Unmarshal(ev.Data, &doc)
		fmt.Println(ev.Evento, doc.Clave, doc.Estado)
		w.WriteHeader(http.StatusNoContent)
	})

	// What the service sends: the body, signed at t.
	body := []byte(`{"id":"evt_1","evento":"documento.aceptado","creado":"2026-11-21T14:03:00","data":{"clave":"50621112600310112345600100001010000000001199999999","estado":"01"}}`)
	post := func(t time.Time, body []byte) int {
		ts := strconv.FormatInt(t.Unix(), 10)
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(ts + "." + string(body)))
		r := httptest.NewRequest(http.MethodPost, "/hooks", strings.NewReader(string(body)))
		r.Header.Set("Facturad-Signature", "t="+ts+",v1="+hex.EncodeToString(mac.Sum(nil)))
		w := httptest.NewRecorder()
		handler.ServeHTTP(w, r)
		return w.Code
	}
	fmt.Println(post(time.Now(), body))                      // delivered
	fmt.Println(post(time.Now(), body))                      // the same event again
	fmt.Println(post(time.Now().Add(-10*time.Minute), body)) // replayed later
	// Output:
	// documento.aceptado 50621112600310112345600100001010000000001199999999 01
	// 204
	// 200
	// 401
}
