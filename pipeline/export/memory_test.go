package export_test

import (
	"archive/zip"
	"bufio"
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/csv"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/sample"
	"facturad/pipeline/export"
	"facturad/signer"
	"facturad/signer/certmint"
	"facturad/tenant"
	"facturad/tenant/storetest"
)

// TestExportMemory measures an export of many documents: the process's
// peak RSS (VmHWM, reset just before the export with /proc/self/clear_refs)
// and peak heap while the archive streams, and the CPU per document
// against one raw RSA-2048 signature timed in the same run. It seeds the
// documents straight into the embedded store, each with its own signed
// XML and a signed answer, and runs only when FACTURAD_EXPORT_MEM_DOCS
// lists the counts (docs/performance.md, "Export"):
//
//	FACTURAD_EXPORT_MEM_DOCS=1000,10000 go test -run TestExportMemory -v -timeout 30m ./pipeline/export
func TestExportMemory(t *testing.T) {
	counts := os.Getenv("FACTURAD_EXPORT_MEM_DOCS")
	if counts == "" {
		t.Skip("set FACTURAD_EXPORT_MEM_DOCS=1000,10000 to measure")
	}
	for _, s := range strings.Split(counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			t.Fatalf("FACTURAD_EXPORT_MEM_DOCS: %q", s)
		}
		t.Run(strconv.Itoa(n), func(t *testing.T) { measureExport(t, n) })
	}
}

func measureExport(t *testing.T, n int) {
	ctx := context.Background()
	store := storetest.NewSQLite(t)
	companies, branches := storetest.NewListBenchFixture(t, store)
	company, branch := companies[0], branches[0]
	docs := store.(export.Documents)
	m, err := certmint.MintCertificate(certmint.Options{TipoIdentificacion: "02", Identificacion: "3101000000", Name: "Emisor"})
	if err != nil {
		t.Fatal(err)
	}
	chain := []*x509.Certificate{m.Leaf}
	start := time.Now().Add(-time.Hour)
	samples := sample.Documents(7, 50)
	seedStart := time.Now()
	for i := range n {
		d := *samples[i%len(samples)]
		d.FechaEmision = start.Add(time.Duration(i) * 100 * time.Millisecond)
		cons, err := hacienda.ParseConsecutivo(fmt.Sprintf("00100001%s%010d", d.Type, i+1))
		if err != nil {
			t.Fatal(err)
		}
		clave, err := hacienda.NewClave(d.FechaEmision, "3101000000", cons, "1", nil)
		if err != nil {
			t.Fatal(err)
		}
		d.Clave, d.NumeroConsecutivo = clave.String(), cons.String()
		x, err := hacienda.MarshalXML(&d)
		if err != nil {
			t.Fatal(err)
		}
		signed, err := signer.Sign(x, m.Key, chain, signer.PolicyV44)
		if err != nil {
			t.Fatal(err)
		}
		answer, err := signer.Sign([]byte(fmt.Sprintf(`<?xml version="1.0" encoding="utf-8"?>`+
			`<MensajeHacienda xmlns="https://cdn.comprobanteselectronicos.go.cr/xml-schemas/v4.4/mensajeHacienda">`+
			`<Clave>%s</Clave><NombreEmisor>%s</NombreEmisor><TipoIdentificacionEmisor>02</TipoIdentificacionEmisor>`+
			`<NumeroCedulaEmisor>3101000000</NumeroCedulaEmisor><Mensaje>1</Mensaje><DetalleMensaje>Este comprobante fue aceptado.</DetalleMensaje>`+
			`<MontoTotalImpuesto>0</MontoTotalImpuesto><TotalFactura>0</TotalFactura></MensajeHacienda>`, d.Clave, "Emisor")), m.Key, chain, signer.PolicyV44)
		if err != nil {
			t.Fatal(err)
		}
		row := tenant.Document{CompanyID: company, BranchID: branch, IDExterno: fmt.Sprintf("mem-%d", i), Tipo: string(d.Type),
			Terminal: "00001", Situacion: "1", FechaEmision: d.FechaEmision, EmisorTipo: "02", EmisorNumero: "3101000000",
			Submission: tenant.Submission{Phase: tenant.PhaseFor(tenant.StateSent), Estado: tenant.StateSent}}
		if err := store.(interface {
			ReserveDocument(context.Context, *tenant.Document) error
		}).ReserveDocument(ctx, &row); err != nil {
			t.Fatal(err)
		}
		row.Clave, row.Consecutivo, row.SignedXML = d.Clave, d.NumeroConsecutivo, signed
		if err := store.(interface {
			SaveDocument(context.Context, *tenant.Document) error
		}).SaveDocument(ctx, &row); err != nil {
			t.Fatal(err)
		}
		row.ResponseXML = answer
		row.Phase, row.Estado = tenant.PhaseFor(tenant.StateAccepted), tenant.StateAccepted
		if err := store.(interface {
			SaveDocument(context.Context, *tenant.Document) error
		}).SaveDocument(ctx, &row); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("seeded %d documents in %s", n, time.Since(seedStart).Round(time.Millisecond))

	e, err := export.New(export.Options{Companies: allCompanies{}, Documents: docs, Received: store.(tenant.ReceivedStore),
		Logger: quietLogger()})
	if err != nil {
		t.Fatal(err)
	}
	x, err := e.Start(ctx, tenant.Principal{Role: tenant.RoleAdmin}, company, start.Add(-time.Minute), time.Now().Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Release()

	runtime.GC()
	debug.FreeOSMemory()
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Logf("cannot reset the peak RSS (%v): VmHWM includes the seeding", err)
	}
	var peakHeap atomic.Uint64
	done := make(chan struct{})
	go func() {
		tk := time.NewTicker(5 * time.Millisecond)
		defer tk.Stop()
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-tk.C:
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse > peakHeap.Load() {
					peakHeap.Store(ms.HeapInuse)
				}
			}
		}
	}()
	// The archive goes to a file, as a client would save it: its bytes
	// are in the page cache, not in the process's memory.
	out, err := os.Create(filepath.Join(t.TempDir(), "export.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	cpu0 := cpuTime()
	t0 := time.Now()
	cw := &countWriter{w: out}
	bw := bufio.NewWriterSize(cw, 32<<10)
	if err := x.WriteTo(ctx, bw); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	wall, cpu := time.Since(t0), cpuTime()-cpu0
	close(done)
	hwm := vmHWM(t)
	checkWholeArchive(t, out, cw.n, n)

	rsaCPU := rawRSACPU(t, 300)
	perDoc := cpu / time.Duration(n)
	t.Logf("export of %d documents: %d MB archive, wall %s, CPU %s (%s a document = %.2f× raw RSA-2048 at %s), peak RSS (VmHWM) %d MB, peak heap in use %d MB",
		n, cw.n>>20, wall.Round(time.Millisecond), cpu.Round(time.Millisecond), perDoc.Round(time.Microsecond),
		float64(perDoc)/float64(rsaCPU), rsaCPU.Round(time.Microsecond), hwm>>10, peakHeap.Load()>>20)
}

type allCompanies struct{}

func (allCompanies) ListCompany(_ context.Context, _ tenant.Principal, id int64) (int64, error) {
	return id, nil
}

// countWriter counts what goes through it to w.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// checkWholeArchive reads the archive of size bytes in f back with
// archive/zip: for each of the n documents seeded its signed XML, its
// answer and its PDF, each entry read whole (archive/zip checks its
// CRC), and last the index with a line per document.
func checkWholeArchive(t *testing.T, f *os.File, size int64, n int) {
	t.Helper()
	zr, err := zip.NewReader(f, size)
	if err != nil {
		t.Fatalf("the archive is not a whole ZIP: %v", err)
	}
	if want := 3*n + 1; len(zr.File) != want {
		t.Errorf("%d entries, want %d (3 for each of %d documents, and the index)", len(zr.File), want, n)
	}
	kinds := map[string]int{}
	for _, zf := range zr.File {
		switch {
		case zf.Name == export.IndexName:
			kinds["index"]++
		case strings.HasSuffix(zf.Name, "-respuesta.xml"):
			kinds["answer"]++
		case strings.HasSuffix(zf.Name, ".xml"):
			kinds["xml"]++
		case strings.HasSuffix(zf.Name, ".pdf"):
			kinds["pdf"]++
		default:
			t.Errorf("unexpected entry %s", zf.Name)
		}
		rc, err := zf.Open()
		if err != nil {
			t.Fatalf("%s: %v", zf.Name, err)
		}
		_, err = io.Copy(io.Discard, rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", zf.Name, err)
		}
	}
	if kinds["xml"] != n || kinds["answer"] != n || kinds["pdf"] != n || kinds["index"] != 1 {
		t.Errorf("entries %v for %d documents", kinds, n)
	}
	if last := zr.File[len(zr.File)-1].Name; last != export.IndexName {
		t.Errorf("last entry %s, want the index", last)
	}
	rc, err := zr.File[len(zr.File)-1].Open()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	rows, err := csv.NewReader(rc).ReadAll()
	if err != nil {
		t.Fatalf("index: %v", err)
	}
	if len(rows) != n+1 {
		t.Errorf("index of %d lines, want a header and %d", len(rows), n)
	}
}

// cpuTime is the process's user and system CPU so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// vmHWM is the process's peak resident set in KiB.
func vmHWM(t *testing.T) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// rawRSACPU is the process CPU of one RSA-2048 PKCS#1 v1.5 SHA-256
// signature, the mean of n.
func rawRSACPU(t *testing.T, n int) time.Duration {
	key := certmint.TestKey(0)
	h := sha256.Sum256([]byte("facturad"))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c0 := cpuTime()
	for range n {
		if _, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, h[:]); err != nil {
			t.Fatal(err)
		}
	}
	return (cpuTime() - c0) / time.Duration(n)
}

var _ io.Writer = (*countWriter)(nil)
