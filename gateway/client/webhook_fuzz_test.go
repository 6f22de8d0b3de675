package client_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"facturad/gateway/client"
	"facturad/pipeline/delivery"
)

// FuzzVerifyWebhook: any Facturad-Signature header is read without a
// panic; a header verifies only if it holds, beside a time within the
// tolerance, the HMAC of that time and the body under the secret; and a
// header signed as the service signs verifies, but not for another body
// nor another secret.
func FuzzVerifyWebhook(f *testing.F) {
	now := time.Unix(1795000000, 0)
	sign := func(secret, ts string, body []byte) string {
		m := hmac.New(sha256.New, []byte(secret))
		m.Write([]byte(ts + "."))
		m.Write(body)
		return hex.EncodeToString(m.Sum(nil))
	}
	body := []byte(`{"id":"evt_1","evento":"documento.aceptado"}`)
	good := "t=1795000000,v1=" + sign("whsec_1", "1795000000", body)
	for _, h := range []string{
		good, "t=1795000000", "v1=00", "", ",,,", "t=abc,v1=00", "t=1795000000,v1=zz",
		"t=9223372036854775807,v1=00", "t=-9223372036854775808,v1=00", " t = 1795000000 , v1=" + sign("whsec_1", "1795000000", body),
		"t=+1795000000,v1=" + sign("whsec_1", "+1795000000", body), "t=1795000000,v1=" + strings.ToUpper(sign("whsec_1", "1795000000", body)),
		"t=1,t=1795000000,v1=00,v1=" + sign("whsec_1", "1795000000", body),
	} {
		f.Add("whsec_1", h, body, int64(0))
	}
	f.Fuzz(func(t *testing.T, secret, header string, body []byte, skew int64) {
		err := client.VerifyWebhook(secret, header, body, now, client.WebhookTolerance)
		if err == nil {
			// It verified: some t in the header is within the tolerance
			// and some v1 is the HMAC of it and the body.
			var ts, sigs []string
			for _, part := range strings.Split(header, ",") {
				k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
				switch k {
				case "t":
					ts = append(ts, v)
				case "v1":
					sigs = append(sigs, strings.ToLower(v))
				}
			}
			right := false
			for _, s := range ts {
				sec, perr := strconv.ParseInt(s, 10, 64)
				if perr != nil || sec < now.Unix()-300 || sec > now.Unix()+300 {
					continue
				}
				want := sign(secret, s, body)
				for _, v := range sigs {
					right = right || v == want
				}
			}
			if !right {
				t.Fatalf("header %q verifies body %q under %q without its HMAC", header, body, secret)
			}
		}

		// Signed as the service signs, at a time within the tolerance.
		h := delivery.Sign([]byte(secret), body, now.Add(time.Duration(skew%300)*time.Second))
		if err := client.VerifyWebhook(secret, h, body, now, client.WebhookTolerance); err != nil {
			t.Fatalf("a right signature %q refused: %v", h, err)
		}
		if err := client.VerifyWebhook(secret, h, append(body[:len(body):len(body)], 'x'), now, client.WebhookTolerance); err == nil {
			t.Fatalf("%q verifies another body", h)
		}
		if err := client.VerifyWebhook(secret+"x", h, body, now, client.WebhookTolerance); err == nil {
			t.Fatalf("%q verifies under another secret", h)
		}
		// The same signature, replayed beyond the tolerance.
		late := now.Add(client.WebhookTolerance + time.Duration(301+skew%300)*time.Second)
		if err := client.VerifyWebhook(secret, h, body, late, client.WebhookTolerance); err == nil {
			t.Fatalf("%q verifies %s later", h, late.Sub(now))
		}
	})
}

// TestVerifyWebhookWindow: a right signature verifies only when its time
// is within the tolerance of now, on either side: one dated in the future
// beyond it is refused as surely as an old one, or a captured delivery
// signed ahead could be replayed for as long as the date lies ahead.
func TestVerifyWebhookWindow(t *testing.T) {
	now := time.Unix(1795000000, 0)
	body := []byte(`{"id":"evt_1","evento":"documento.aceptado"}`)
	tests := []struct {
		name   string
		signed time.Duration // relative to now
		ok     bool
	}{
		{"ok/now", 0, true},
		{"ok/at the tolerance in the past", -client.WebhookTolerance, true},
		{"ok/at the tolerance in the future", client.WebhookTolerance, true},
		{"error/a second beyond the tolerance in the past", -client.WebhookTolerance - time.Second, false},
		{"error/a second beyond the tolerance in the future", client.WebhookTolerance + time.Second, false},
		{"error/a day in the future", 24 * time.Hour, false},
		{"error/a year in the future", 365 * 24 * time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := delivery.Sign([]byte("whsec_1"), body, now.Add(tt.signed))
			err := client.VerifyWebhook("whsec_1", h, body, now, client.WebhookTolerance)
			if tt.ok && err != nil {
				t.Fatalf("VerifyWebhook(%q) = %v, want nil", h, err)
			}
			if !tt.ok && !errors.Is(err, client.ErrWebhookSignature) {
				t.Fatalf("VerifyWebhook(%q) = %v, want ErrWebhookSignature", h, err)
			}
		})
	}
}
