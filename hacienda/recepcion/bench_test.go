package recepcion_test

import (
	"context"
	"sync/atomic"
	"testing"

	"facturad/hacienda/recepcion"
	"facturad/hacienda/sandbox"
)

// BenchmarkSubmit measures submissions through the client to an in-process
// sandbox over loopback HTTP, with no added latency and the delegated
// checks off (they run when the status is asked, not at reception).
func BenchmarkSubmit(b *testing.B) {
	bn := setup(b, sandbox.Options{Checks: noChecks}, recepcion.Options{})
	ctx := context.Background()
	var n atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			clave, xml := unsignedDoc(int(n.Add(1)))
			if _, err := bn.client.Submit(ctx, creds, submission(clave, xml)); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkStatusVerdict measures the first status call of a complete,
// signed v4.4 invoice: the sandbox parses it, verifies its signature,
// recomputes its amounts, and writes and signs its MensajeHacienda; the
// client reads it.
func BenchmarkStatusVerdict(b *testing.B) {
	bn := setup(b, sandbox.Options{}, recepcion.Options{})
	ctx := context.Background()
	claves := make([]string, b.N)
	for i := range b.N {
		clave, xml := realDoc(b, 100000+i, nil)
		if _, err := bn.client.Submit(ctx, creds, submission(clave, xml)); err != nil {
			b.Fatal(err)
		}
		claves[i] = clave
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		st, err := bn.client.Status(ctx, creds, claves[i])
		if err != nil || st.Estado != recepcion.EstadoAceptado {
			b.Fatalf("%v %v", st.Estado, err)
		}
	}
}
