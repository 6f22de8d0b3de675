package trust

import (
	"crypto/x509"
	"strings"
	"testing"
	"time"
)

// TestNationalPKI checks the embedded authorities: the two national roots
// are the only anchors, and every intermediate chains to one of them at an
// instant inside its validity, as SOURCES.md claims its issuer's signature
// vouches for it.
func TestNationalPKI(t *testing.T) {
	n, err := NationalPKI()
	if err != nil {
		t.Fatal(err)
	}
	var roots []string
	for _, c := range n.Certificates {
		if !selfIssued(c) {
			continue
		}
		roots = append(roots, c.Subject.CommonName)
	}
	if len(roots) != 2 || !strings.HasPrefix(roots[0], "CA RAIZ NACIONAL") || !strings.HasPrefix(roots[1], "CA RAIZ NACIONAL") {
		t.Errorf("roots %q, want the two national roots", roots)
	}
	inters := n.Certificates[len(roots):]
	if len(inters) < 7 {
		t.Fatalf("%d intermediates, want the policy and SINPE authorities", len(inters))
	}
	for _, c := range inters {
		mid := c.NotBefore.Add(c.NotAfter.Sub(c.NotBefore) / 2)
		if _, err := c.Verify(x509.VerifyOptions{Roots: n.Roots, Intermediates: n.Intermediates, CurrentTime: mid,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			t.Errorf("%s (%s): does not chain to a national root: %v", c.Subject.CommonName, c.NotBefore.Format(time.DateOnly), err)
		}
		if !n.NamesAuthority(c) {
			t.Errorf("%s: its issuer is not named among the authorities", c.Subject.CommonName)
		}
	}
	if n.NamesAuthority(&x509.Certificate{RawIssuer: []byte("not a national authority")}) {
		t.Error("NamesAuthority names an issuer outside the national PKI")
	}
}
