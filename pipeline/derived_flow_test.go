package pipeline

import (
	"context"
	"maps"
	"testing"
	"time"

	"facturad/tenant"
)

// The derived routes (A.15) run end to end on the harness: the original
// sent, settled by the sandbox, then voided, re-issued or paid.

// settle checks the document until the sandbox's verdict and fails the
// test unless it is want.
func (b *bundle) settle(t *testing.T, clave string, want tenant.State) Outcome {
	t.Helper()
	out, err := b.p.Check(context.Background(), b.branch, clave)
	if err != nil || out.Estado != want {
		t.Fatalf("check %s: %v %s, want estado %s", clave, err, describe(out), want)
	}
	return out
}

// derivedCtx bounds one derived call.
func derivedCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// twoLines is an FE of two lines sent without numeroLinea, which a send
// may leave out (the validation numbers the lines 1, 2); the last line
// has the smaller quantity.
func twoLines(idExterno string) map[string]any {
	r := request("01", idExterno)
	l1 := r["detalleServicio"].([]any)[0].(map[string]any)
	delete(l1, "numeroLinea")
	l2 := maps.Clone(l1)
	l2["detalle"], l2["cantidad"] = "Servicio de soporte", 1
	r["detalleServicio"] = []any{l1, l2}
	return r
}

// TestVoidLinesWithoutNumeroLinea: the void names a line by the number
// the document carries even when its send left numeroLinea out, and a
// full void counts every line, so a second one is refused.
func TestVoidLinesWithoutNumeroLinea(t *testing.T) {
	b := setup(t, setupOptions{})
	fe := b.mustSend(t, twoLines("fe-sin-numeros"))
	clave := fe.Document.Clave
	b.settle(t, clave, tenant.StateAccepted)

	partial, err := b.p.Void(derivedCtx(t), b.branch, clave, &VoidRequest{IDExterno: "nc-1", Razon: "Devolución parcial",
		Lineas: []VoidLine{{NumeroLinea: 1, Cantidad: "1"}}})
	if err != nil {
		t.Fatalf("a partial void of line 1: %v", err)
	}
	b.settle(t, partial.Document.Clave, tenant.StateAccepted)
	// Line 1 has 1 of 2 left: 2 is beyond it.
	_, err = b.p.Void(derivedCtx(t), b.branch, clave, &VoidRequest{IDExterno: "nc-2", Razon: "Demasiado",
		Lineas: []VoidLine{{NumeroLinea: 1, Cantidad: "2"}}})
	requireFieldErr(t, err, "lineas[0].cantidad")

	rest, err := b.p.Void(derivedCtx(t), b.branch, clave, &VoidRequest{IDExterno: "nc-3", Razon: "El resto"})
	if err != nil {
		t.Fatalf("a void of the rest: %v", err)
	}
	b.settle(t, rest.Document.Clave, tenant.StateAccepted)
	_, err = b.p.Void(derivedCtx(t), b.branch, clave, &VoidRequest{IDExterno: "nc-4", Razon: "Otra vez"})
	requireFieldErr(t, err, "clave")
	_, err = b.p.Void(derivedCtx(t), b.branch, clave, &VoidRequest{IDExterno: "nc-5", Razon: "Otra vez",
		Lineas: []VoidLine{{NumeroLinea: 2, Cantidad: "1"}}})
	requireFieldErr(t, err, "lineas[0].cantidad")
}

// TestVoidFullTwice: a full void of a document sent without numeroLinea
// leaves nothing to void again.
func TestVoidFullTwice(t *testing.T) {
	b := setup(t, setupOptions{})
	fe := b.mustSend(t, twoLines("fe-entera"))
	clave := fe.Document.Clave
	b.settle(t, clave, tenant.StateAccepted)
	if _, err := b.p.Void(derivedCtx(t), b.branch, clave, &VoidRequest{IDExterno: "nc-1", Razon: "Emitida por error"}); err != nil {
		t.Fatalf("a full void: %v", err)
	}
	_, err := b.p.Void(derivedCtx(t), b.branch, clave, &VoidRequest{IDExterno: "nc-2", Razon: "Otra vez"})
	requireFieldErr(t, err, "clave")
}
