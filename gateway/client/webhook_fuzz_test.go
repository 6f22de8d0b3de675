package client_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
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
