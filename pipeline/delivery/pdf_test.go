package delivery_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/pdf"
	"facturad/hacienda/sample"
	"facturad/pipeline/delivery"
	"facturad/tenant"
)

// An e-mail's PDF takes a slot of the process's render bound: while
// every slot is held it waits (here until its context ends), and once one
// is freed it draws.
func TestPrintedPDFWaitsForARenderSlot(t *testing.T) {
	doc := sample.Documents(9, 1)[0]
	x, err := hacienda.MarshalXML(doc)
	if err != nil {
		t.Fatal(err)
	}
	d := tenant.Document{Clave: doc.Clave, Submission: tenant.Submission{Estado: tenant.StateAccepted, SignedXML: x}}
	lim := pdf.NewLimiter(1, 1)
	p := delivery.PrintedPDF{Renders: lim}
	release, err := lim.WaitRender(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := p.DocumentPDF(ctx, d, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("with every slot held: %v, want the context's deadline", err)
	}
	release()
	b, err := p.DocumentPDF(context.Background(), d, nil)
	if err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Fatalf("with a free slot: %v, %.20q", err, b)
	}
	if lim.InUse() != 0 {
		t.Fatalf("%d slots held after the render", lim.InUse())
	}
}
