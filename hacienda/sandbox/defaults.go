package sandbox

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"reflect"
	"strconv"

	"facturad/hacienda"
	"facturad/signer"
)

// DefaultChecks are the checks a sandbox runs when Options.Checks is nil,
// with the service's own packages:
//
//   - Schema: the strict v4.4 reader (hacienda.ParseXML): the root element
//     and namespace of an issued type, every element known in its place, no
//     element twice where one is allowed, decimals, integers and dates
//     readable.
//   - Signature: the XAdES verifier (signer.Verify): every reference
//     digest, the signature value, the signing certificate named in the
//     signed properties, the v4.4 policy.
//   - Totals: the document's amounts recomputed from its inputs
//     (hacienda.Calculate) and compared, every computed amount of every
//     line and of the summary.
func DefaultChecks() Checks { return DefaultChecksTrusting(nil) }

// DefaultChecksTrusting is DefaultChecks with signing certificates
// required to chain to roots (nil: any authority).
func DefaultChecksTrusting(roots *x509.CertPool) Checks {
	return Checks{
		Schema:    CheckFunc(checkStructure),
		Signature: SignatureCheck{Roots: roots, Cache: signer.NewVerifyCache(0)},
		Totals:    CheckFunc(checkTotals),
	}
}

// SignatureCheck rejects a document whose XAdES signature does not verify
// (with Roots, whose certificate does not chain to one of them), or whose
// signing certificate is not the issuer's: the SERIALNUMBER of its subject
// must be the identification of the taxpayer that issues the document (the
// Emisor; in a purchase invoice the Receptor, the buyer; in a receptor
// message the receptor), in the tax authority's words (spec §17 items 6–8).
type SignatureCheck struct {
	// Roots are the trusted certificate authorities; nil checks the
	// signature but not who certified its key.
	Roots *x509.CertPool
	// Cache, when set, keeps the certificates and chains of signers
	// seen before (nil: every document is verified from scratch).
	Cache *signer.VerifyCache
}

// Check implements Check.
func (c SignatureCheck) Check(ctx context.Context, xml []byte) []string {
	return checkReading(ctx, xml, c)
}

// checkRead is Check for a document the sandbox has read already.
func (c SignatureCheck) checkRead(_ context.Context, xml []byte, in docInfo) []string {
	res, err := signer.VerifyWith(xml, signer.VerifyOptions{Roots: c.Roots, Cache: c.Cache})
	if err != nil {
		line := "La firma del comprobante electrónico no es válida"
		if errors.Is(err, signer.ErrInvalidSignature) || errors.Is(err, signer.ErrPolicyMismatch) {
			return []string{line + " (" + err.Error() + ")"}
		}
		return []string{line + ": " + err.Error()}
	}
	issuer := in.signerID()
	id, err := signer.CertificateIdentification(res.Certificate)
	if err != nil || !hacienda.SameNumber(id.Numero, issuer) {
		return []string{fmt.Sprintf("El contribuyente que firma la factura electronica no es el emisor (certificado de %q, emisor %s)",
			res.Certificate.Subject.SerialNumber, issuer)}
	}
	return nil
}

func checkStructure(_ context.Context, xml []byte) []string {
	if _, err := hacienda.ParseXML(xml); err != nil {
		return []string{"El comprobante no cumple la estructura de la versión 4.4: " + err.Error()}
	}
	return nil
}

// checkTotals recomputes the document from its own inputs and reports
// every computed amount that differs from the one written.
func checkTotals(_ context.Context, xml []byte) []string {
	written, err := hacienda.ParseXML(xml)
	if err != nil {
		return nil // the structure check reports it
	}
	computed := cloneDocument(written) // Calculate fills it in place
	if err := hacienda.Calculate(computed); err != nil {
		// The document contradicts the calculation rules (a payment that
		// does not add up, a rate that does not match its code…): one line
		// per problem, in the model's field paths.
		var ve *hacienda.ValidationError
		if !errors.As(err, &ve) {
			return []string{"Los montos del comprobante no se pueden calcular: " + err.Error()}
		}
		var out []string
		for _, p := range ve.Paths() {
			for _, msg := range ve.FieldErrors()[p] {
				out = append(out, fmt.Sprintf("Los montos del comprobante no cumplen las reglas de cálculo: %s: %s", p, msg))
			}
		}
		return out
	}
	var out []string
	diffAmounts(reflect.ValueOf(written).Elem(), reflect.ValueOf(computed).Elem(), "", &out)
	return out
}

var amountType = reflect.TypeFor[hacienda.Amount]()

// cloneDocument returns a copy of d that shares nothing Calculate changes:
// every pointer and slice of the model is copied, so filling the copy's
// amounts leaves d as it was read. (Amounts themselves are immutable
// values and are copied as they are.) It costs far less than parsing the
// XML again.
func cloneDocument(d *hacienda.Document) *hacienda.Document {
	return cloneValue(reflect.ValueOf(d)).Interface().(*hacienda.Document)
}

func cloneValue(v reflect.Value) reflect.Value {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		c := reflect.New(v.Type().Elem())
		c.Elem().Set(cloneValue(v.Elem()))
		return c
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			c.Index(i).Set(cloneValue(v.Index(i)))
		}
		return c
	case reflect.Struct:
		c := reflect.New(v.Type()).Elem()
		c.Set(v) // every field, unexported ones included, as a first copy
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				c.Field(i).Set(cloneValue(v.Field(i)))
			}
		}
		return c
	case reflect.Map, reflect.Interface, reflect.Chan, reflect.Func:
		panic("sandbox: cloneDocument meets a " + v.Kind().String() + "; the model has none")
	}
	return v
}

// diffAmounts walks two values of the same type and reports every Amount
// whose value differs. An absent amount counts as zero: the builder omits
// some zero totals that Calculate sets.
func diffAmounts(w, c reflect.Value, path string, out *[]string) {
	if w.Type() == amountType {
		wa, ca := w.Interface().(hacienda.Amount), c.Interface().(hacienda.Amount)
		if wa.Decimal().Cmp(ca.Decimal()) != 0 {
			*out = append(*out, fmt.Sprintf("El monto %s (%s) no coincide con el calculado (%s).", path, show(wa), show(ca)))
		}
		return
	}
	switch w.Kind() {
	case reflect.Pointer:
		if w.IsNil() || c.IsNil() {
			return
		}
		diffAmounts(w.Elem(), c.Elem(), path, out)
	case reflect.Struct:
		for i := range w.NumField() {
			f := w.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			diffAmounts(w.Field(i), c.Field(i), join(path, f.Name), out)
		}
	case reflect.Slice:
		if w.Len() != c.Len() {
			*out = append(*out, fmt.Sprintf("%s tiene %d elementos; el cálculo da %d.", path, w.Len(), c.Len()))
			return
		}
		for i := range w.Len() {
			diffAmounts(w.Index(i), c.Index(i), path+"["+strconv.Itoa(i+1)+"]", out)
		}
	}
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "/" + name
}

func show(a hacienda.Amount) string {
	if !a.IsSet() {
		return "ausente"
	}
	return a.String()
}
