package sandbox

import (
	"context"
	"errors"

	"facturad/signer"
)

// DefaultChecks are the checks a sandbox runs when Options.Checks is nil:
// the signature with the service's own XAdES verifier (every reference
// digest, the signature value, the signing certificate, the v4.4 policy).
func DefaultChecks() Checks {
	return Checks{
		Signature: CheckFunc(verifySignature),
	}
}

// verifySignature rejects a document whose signature does not verify, in
// the tax authority's words followed by the verifier's reason.
func verifySignature(_ context.Context, xml []byte) []string {
	_, err := signer.Verify(xml)
	if err == nil {
		return nil
	}
	line := "La firma del comprobante electrónico no es válida"
	if errors.Is(err, signer.ErrInvalidSignature) || errors.Is(err, signer.ErrPolicyMismatch) {
		return []string{line + " (" + err.Error() + ")"}
	}
	return []string{line + ": " + err.Error()}
}
