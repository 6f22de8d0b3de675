//go:build openssl

package main

import (
	"strings"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/signer/openssl"
)

// TestOpenSSLSignsTheServiceDocuments runs in the image's build
// (CGO_ENABLED=1, -tags openssl; deploy/test.sh): the service says it
// signs with OpenSSL, and OpenSSL makes the signature of every document it
// sends, each of which sendEveryType checks with xmlsec1, the XSD and the
// sandbox's verdict.
func TestOpenSSLSignsTheServiceDocuments(t *testing.T) {
	out, logs := new(syncBuffer), new(syncBuffer)
	api, _, stop := startServiceTo(t, t.TempDir(), out, logs, out, "--log-level", "info",
		"--admin-user", e2eAdminUser, "--admin-password", e2eAdminPass, "--admin-token", e2eAdminToken)
	defer stop()
	// The started line follows the one startServiceTo waited for.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(logs.String(), `"msg":"started"`); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no started line:\n%s", logs)
		}
	}
	if !strings.Contains(logs.String(), `"rsa":"openssl"`) {
		t.Errorf("the started line does not say rsa openssl:\n%s", logs)
	}
	before := openssl.Signatures()
	sendEveryType(t, api)
	if got, want := openssl.Signatures()-before, int64(len(hacienda.DocumentTypes)); got < want {
		t.Errorf("OpenSSL made %d signatures for %d documents", got, want)
	}
}
