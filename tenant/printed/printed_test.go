package printed_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"sync/atomic"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/pdf"
	"facturad/hacienda/sample"
	"facturad/tenant"
	"facturad/tenant/printed"
)

// companies serves what companies print from a map, counting the reads.
type companies struct {
	m     map[int64]tenant.CompanyPrint
	reads atomic.Int64
	err   error
}

func (c *companies) CompanyPrint(_ context.Context, id int64) (tenant.CompanyPrint, error) {
	c.reads.Add(1)
	if c.err != nil {
		return tenant.CompanyPrint{}, c.err
	}
	p, ok := c.m[id]
	if !ok {
		return tenant.CompanyPrint{}, tenant.ErrNotFound
	}
	return p, nil
}

func signed(t *testing.T) []byte {
	t.Helper()
	b, err := hacienda.MarshalXML(sample.Documents(2, 1)[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func logoPNG(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, 20, 10))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestAmbiente(t *testing.T) {
	tests := []struct {
		name     string
		sandbox  bool
		ambiente string
		want     pdf.Ambiente
	}{
		{"ok/produccion", false, tenant.AmbienteProduccion, pdf.AmbienteProduccion},
		{"ok/pruebas", false, tenant.AmbientePruebas, pdf.AmbientePruebas},
		{"ok/stored before environments", false, "", ""},
		{"ok/the sandbox whatever the company's", true, tenant.AmbienteProduccion, pdf.AmbienteSandbox},
		{"ok/the sandbox, pruebas", true, tenant.AmbientePruebas, pdf.AmbienteSandbox},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := (printed.Printer{Sandbox: tt.sandbox}).Ambiente(tt.ambiente); got != tt.want {
				t.Errorf("Ambiente(%q) = %q, want %q", tt.ambiente, got, tt.want)
			}
		})
	}
}

// TestIssued: an issued document gets its state, message, environment and
// its company's logo and notes; a logo that cannot be prepared is left
// out; an unreadable XML and a store that cannot answer are errors, told
// apart.
func TestIssued(t *testing.T) {
	ctx := context.Background()
	x := signed(t)
	cs := &companies{m: map[int64]tenant.CompanyPrint{
		1: {Logo: logoPNG(t), Notas: "Cuenta 1"},
		2: {Logo: []byte("not an image"), Notas: "Cuenta 2"},
	}}
	p := printed.Printer{Companies: cs}
	d := tenant.Document{CompanyID: 1, Clave: "x", Ambiente: tenant.AmbientePruebas,
		Submission: tenant.Submission{SignedXML: x, Estado: tenant.StateRejected, MensajeHacienda: "Rechazado"}}
	in, err := p.Issued(ctx, d, nil, pdf.FormatoTicket)
	if err != nil {
		t.Fatal(err)
	}
	if in.Document == nil || in.Estado != "02" || in.MensajeHacienda != "Rechazado" || in.Ambiente != pdf.AmbientePruebas ||
		in.Formato != pdf.FormatoTicket || in.Notas != "Cuenta 1" || in.Logo == nil {
		t.Errorf("Input %+v", in)
	}
	d.CompanyID = 2
	if in, err := p.Issued(ctx, d, nil, ""); err != nil || in.Logo != nil || in.Notas != "Cuenta 2" {
		t.Errorf("a bad stored logo: %+v, %v", in, err)
	}
	if _, err := p.Issued(ctx, tenant.Document{Submission: tenant.Submission{SignedXML: []byte("<x/>")}}, nil, ""); !errors.Is(err, printed.ErrUnreadable) {
		t.Errorf("unreadable XML: %v", err)
	}
	cs.err = tenant.ErrUnavailable
	if _, err := p.Issued(ctx, d, nil, ""); !errors.Is(err, tenant.ErrUnavailable) || errors.Is(err, printed.ErrUnreadable) {
		t.Errorf("store unavailable: %v", err)
	}
	if in, err := (printed.Printer{}).Issued(ctx, d, nil, ""); err != nil || in.Logo != nil || in.Notas != "" {
		t.Errorf("the zero printer: %+v, %v", in, err)
	}
}

// TestReceived: a supplier's document prints accepted, marked by the
// company's message's environment, without the company's logo or notes.
func TestReceived(t *testing.T) {
	cs := &companies{m: map[int64]tenant.CompanyPrint{1: {Logo: logoPNG(t), Notas: "Cuenta 1"}}}
	in, err := printed.Printer{Companies: cs, Sandbox: true}.Received(tenant.ReceivedDocument{CompanyID: 1, SupplierXML: signed(t)}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	if in.Estado != "01" || in.Ambiente != pdf.AmbienteSandbox || in.Logo != nil || in.Notas != "" || cs.reads.Load() != 0 {
		t.Errorf("Input %+v, %d reads", in, cs.reads.Load())
	}
	if _, err := (printed.Printer{}).Received(tenant.ReceivedDocument{SupplierXML: []byte("no")}, nil, ""); !errors.Is(err, printed.ErrUnreadable) {
		t.Errorf("unreadable XML: %v", err)
	}
}

// TestCache: a company's logo and notes are read once within the TTL,
// again after it; errors are not kept; the cache holds at most its size.
func TestCache(t *testing.T) {
	ctx := context.Background()
	cs := &companies{m: map[int64]tenant.CompanyPrint{1: {Notas: "uno"}, 2: {Notas: "dos"}, 3: {Notas: "tres"}}}
	c := printed.NewCache(cs, time.Hour, 2)
	for range 3 {
		if p, err := c.CompanyPrint(ctx, 1); err != nil || p.Notas != "uno" {
			t.Fatalf("%+v %v", p, err)
		}
	}
	if n := cs.reads.Load(); n != 1 {
		t.Errorf("%d reads of one company, want 1", n)
	}
	for i := range 2 {
		before := cs.reads.Load()
		if _, err := c.CompanyPrint(ctx, 9); !errors.Is(err, tenant.ErrNotFound) {
			t.Errorf("missing company, read %d: %v", i+1, err)
		}
		if cs.reads.Load() != before+1 {
			t.Errorf("missing company, read %d: the error came from the cache", i+1)
		}
	}
	c.CompanyPrint(ctx, 2)
	c.CompanyPrint(ctx, 3) // drops 1, read first
	before := cs.reads.Load()
	c.CompanyPrint(ctx, 1)
	if cs.reads.Load() != before+1 {
		t.Error("the cache kept more companies than its size")
	}
	short := printed.NewCache(cs, time.Nanosecond, 0)
	short.CompanyPrint(ctx, 1)
	time.Sleep(time.Millisecond)
	before = cs.reads.Load()
	short.CompanyPrint(ctx, 1)
	if cs.reads.Load() != before+1 {
		t.Error("an entry outlived its TTL")
	}
}
