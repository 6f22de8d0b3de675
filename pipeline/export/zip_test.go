package export

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"facturad/hacienda"
)

// zipEntry is one entry a round-trip test writes.
type zipEntry struct {
	name    string
	data    []byte
	deflate bool
	// raw writes the entry with addRaw from a spooled entry (the way the
	// index is written) instead of add.
	raw bool
}

// TestZipRoundTrip writes archives with zipWriter and reads them back
// with archive/zip and, when python3 is installed, with Python's zipfile
// (an implementation that shares no code with ours or Go's): every name,
// size, CRC and byte, and whether the ZIP64 end records are there exactly
// when the number of entries needs them.
func TestZipRoundTrip(t *testing.T) {
	many := func(n int) []zipEntry {
		out := make([]zipEntry, n)
		for i := range out {
			out[i] = zipEntry{name: fmt.Sprintf("e/%06d.txt", i), data: []byte(fmt.Sprint(i)), deflate: i%2 == 0}
		}
		return out
	}
	xml := bytes.Repeat([]byte("<Linea><Detalle>Servicio</Detalle></Linea>\n"), 500)
	for _, tt := range []struct {
		name    string
		entries []zipEntry
		zip64   bool
	}{
		{name: "empty archive"},
		{name: "one entry", entries: []zipEntry{{name: "emitidos/a.xml", data: xml, deflate: true}}},
		{name: "one stored entry", entries: []zipEntry{{name: "a.pdf", data: []byte("%PDF-1.7 not compressed")}}},
		{name: "entries of 0 bytes", entries: []zipEntry{
			{name: "vacio-stored"}, {name: "vacio-deflate", deflate: true}, {name: "vacio-raw", raw: true},
			{name: "lleno", data: []byte("x")}, {name: "vacio-al-final", deflate: true},
		}},
		{name: "names in UTF-8", entries: []zipEntry{
			{name: "recibidos/Compañía Ñandú — facturación.xml", data: xml, deflate: true},
			{name: "emitidos/日本語/ファイル.pdf", data: []byte("datos")},
			{name: "año/€ 😀.txt", data: []byte("ñ"), deflate: true},
		}},
		{name: "incompressible entry deflated is stored", entries: []zipEntry{{name: "r", data: pseudoRandom(70 << 10), deflate: true}}},
		{name: "a spooled entry last, as the index", entries: []zipEntry{
			{name: "a.xml", data: xml, deflate: true},
			{name: IndexName, data: bytes.Repeat([]byte("origen,clave\r\nemitido,506\r\n"), 3000), raw: true},
		}},
		{name: "65,534 entries: no ZIP64", entries: many(max16 - 1)},
		{name: "65,535 entries: ZIP64, the count field is full", entries: many(max16), zip64: true},
		{name: "70,000 entries: ZIP64", entries: many(70000), zip64: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.entries) > 1000 && testing.Short() {
				t.Skip("many entries: not in -short")
			}
			mod := time.Date(2026, 11, 30, 23, 59, 59, 0, hacienda.CostaRica)
			var buf bytes.Buffer
			z, err := newZipWriter(&buf, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range tt.entries {
				if err := writeEntry(t, z, e, mod); err != nil {
					t.Fatal(err)
				}
			}
			if err := z.close(); err != nil {
				t.Fatal(err)
			}
			b := buf.Bytes()
			if got := hasZip64End(b); got != tt.zip64 {
				t.Errorf("ZIP64 end records: %v, want %v", got, tt.zip64)
			}
			want := make([]zipSeen, len(tt.entries))
			for i, e := range tt.entries {
				want[i] = zipSeen{Name: e.name, Size: uint64(len(e.data)), CRC: crc32.ChecksumIEEE(e.data)}
			}
			checkGoReader(t, bytes.NewReader(b), int64(len(b)), want, tt.entries, mod)
			path := filepath.Join(t.TempDir(), "a.zip")
			if err := os.WriteFile(path, b, 0o600); err != nil {
				t.Fatal(err)
			}
			checkPythonReader(t, path, want, 0)
		})
	}
}

// TestZipBeyond4GiB writes an archive of more than 4 GiB for real: an
// entry of 4 GiB + 1 KiB, so that its sizes need ZIP64 extra fields, then
// small entries whose offsets are beyond 4 GiB, so that their central
// records and the end records need them too. The big entry's bytes are
// zeros and the test writer turns runs of zeros into holes of a sparse
// file, so the archive takes little disk; reading it back still reads
// every byte (the CRC of the big entry is checked by archive/zip).
// Python's zipfile reads the directory and every small entry (its CRC
// checked); it is not made to read the 4 GiB entry, for time.
func TestZipBeyond4GiB(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads an archive of 4 GiB: not in -short")
	}
	const big = 4<<30 + 1<<10
	path := filepath.Join(t.TempDir(), "big.zip")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := newZipWriter(&sparseWriter{f: f}, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mod := time.Date(2026, 1, 2, 3, 4, 6, 0, hacienda.CostaRica)
	small := []zipEntry{
		{name: "después/a.xml", data: bytes.Repeat([]byte("<a>ñ</a>"), 100), deflate: true},
		{name: "después/b.pdf", data: []byte("%PDF- stored")},
		{name: "después/vacío"},
		{name: IndexName, data: []byte("origen,clave\r\n"), raw: true},
	}
	if err := writeEntry(t, z, zipEntry{name: "antes.txt", data: []byte("before the big one")}, mod); err != nil {
		t.Fatal(err)
	}
	bigCRC := zeroCRC(big)
	if err := z.addRaw("grande.bin", mod, zipStore, bigCRC, big, big, zeroReader{}); err != nil {
		t.Fatal(err)
	}
	for _, e := range small {
		if err := writeEntry(t, z, e, mod); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.close(); err != nil {
		t.Fatal(err)
	}
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if st.Size() <= max32 {
		t.Fatalf("archive of %d bytes: not beyond 4 GiB", st.Size())
	}
	entries := append([]zipEntry{{name: "antes.txt", data: []byte("before the big one")}, {name: "grande.bin"}}, small...)
	want := make([]zipSeen, len(entries))
	for i, e := range entries {
		want[i] = zipSeen{Name: e.name, Size: uint64(len(e.data)), CRC: crc32.ChecksumIEEE(e.data)}
	}
	want[1] = zipSeen{Name: "grande.bin", Size: big, CRC: bigCRC}
	entries[1].data = nil // checked by archive/zip's CRC, not compared in memory

	zr := checkGoReader(t, f, st.Size(), want, entries, mod)
	for _, zf := range zr.File[2:] {
		off, err := zf.DataOffset()
		if err != nil {
			t.Fatal(err)
		}
		if off <= max32 {
			t.Errorf("%s at %d: not beyond 4 GiB", zf.Name, off)
		}
	}
	checkPythonReader(t, path, want, 1<<20)
}

// TestZipHeaderFields checks the records' bytes where ZIP64 changes
// them, through the writer's offset (an unexported field, set here as if
// 5 GiB were written before): a local header keeps 32-bit sizes and no
// extra field, the central record says 0xFFFFFFFF for the offset and
// carries the three 64-bit values, and the end records point at the
// directory. archive/zip then reads the archive placed at that offset.
func TestZipHeaderFields(t *testing.T) {
	const start = 5 << 30
	var buf bytes.Buffer
	z, err := newZipWriter(&buf, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	z.off = start
	mod := time.Date(2026, 6, 15, 12, 30, 10, 0, hacienda.CostaRica)
	data := []byte("contenido")
	if err := z.add("a.txt", mod, data, false); err != nil {
		t.Fatal(err)
	}
	if err := z.close(); err != nil {
		t.Fatal(err)
	}
	b := buf.Bytes()
	le := binary.LittleEndian

	// The local header: at the start, 32-bit sizes, no extra field.
	if le.Uint32(b) != sigLocal || le.Uint16(b[4:]) != versionBase || le.Uint16(b[6:])&flagUTF8 == 0 {
		t.Fatalf("local header % x", b[:30])
	}
	if le.Uint32(b[14:]) != crc32.ChecksumIEEE(data) || le.Uint32(b[18:]) != uint32(len(data)) ||
		le.Uint32(b[22:]) != uint32(len(data)) || le.Uint16(b[28:]) != 0 {
		t.Errorf("local header fields % x", b[:30])
	}
	dirAt := 30 + len("a.txt") + len(data)
	c := b[dirAt:]
	if le.Uint32(c) != sigCentral || le.Uint16(c[6:]) != versionZip64 {
		t.Fatalf("central record % x", c[:46])
	}
	if le.Uint32(c[20:]) != max32 || le.Uint32(c[24:]) != max32 || le.Uint32(c[42:]) != max32 {
		t.Errorf("central record sizes and offset are not 0xFFFFFFFF: % x", c[:46])
	}
	extra := c[46+len("a.txt") : 46+len("a.txt")+int(le.Uint16(c[30:]))]
	if len(extra) != 28 || le.Uint16(extra) != 0x0001 || le.Uint16(extra[2:]) != 24 ||
		le.Uint64(extra[4:]) != uint64(len(data)) || le.Uint64(extra[12:]) != uint64(len(data)) || le.Uint64(extra[20:]) != start {
		t.Errorf("ZIP64 extra field % x", extra)
	}
	dirSize := 46 + len("a.txt") + len(extra)
	e64 := c[dirSize:]
	if le.Uint32(e64) != sigEnd64 || le.Uint64(e64[24:]) != 1 || le.Uint64(e64[32:]) != 1 ||
		le.Uint64(e64[40:]) != uint64(dirSize) || le.Uint64(e64[48:]) != start+uint64(dirAt) {
		t.Errorf("ZIP64 end record % x", e64[:56])
	}
	loc := e64[56:]
	if le.Uint32(loc) != sigEnd64Locator || le.Uint64(loc[8:]) != start+uint64(dirAt+dirSize) || le.Uint32(loc[16:]) != 1 {
		t.Errorf("ZIP64 locator % x", loc[:20])
	}
	end := loc[20:]
	if le.Uint32(end) != sigEnd || le.Uint16(end[8:]) != 1 || le.Uint32(end[12:]) != uint32(dirSize) ||
		le.Uint32(end[16:]) != max32 || len(end) != 22 {
		t.Errorf("end record % x", end)
	}

	// archive/zip reads it where it would be: after 5 GiB of anything.
	r := &offsetReader{off: start, b: b}
	checkGoReader(t, r, start+int64(len(b)), []zipSeen{{Name: "a.txt", Size: uint64(len(data)), CRC: crc32.ChecksumIEEE(data)}},
		[]zipEntry{{name: "a.txt", data: data}}, mod)
}

// TestZipBadNames: a name the 16-bit length field cannot hold, or one
// that is not UTF-8, is an error, not a corrupt archive.
func TestZipBadNames(t *testing.T) {
	z, err := newZipWriter(io.Discard, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer z.abandon()
	if err := z.add(strings.Repeat("a", max16+1), time.Now(), nil, false); err == nil {
		t.Fatal("no error")
	}
	if err := z.add(strings.Repeat("a", max16), time.Now(), nil, false); err != nil {
		t.Fatalf("the longest name: %v", err)
	}
	// Every name is flagged UTF-8, so one that is not is refused.
	if err := z.add("emitidos/\xf1o.xml", time.Now(), nil, false); err == nil {
		t.Fatal("a Latin-1 name was written flagged UTF-8")
	}
}

// TestDOSDateTime: local Costa Rica time, two seconds' resolution, clamped
// to what the fields hold.
func TestDOSDateTime(t *testing.T) {
	for _, tt := range []struct {
		in   time.Time
		want time.Time
	}{
		{time.Date(2026, 11, 30, 23, 59, 59, 0, hacienda.CostaRica), time.Date(2026, 11, 30, 23, 59, 58, 0, time.UTC)},
		{time.Date(2026, 12, 1, 5, 59, 59, 0, time.UTC), time.Date(2026, 11, 30, 23, 59, 58, 0, time.UTC)},
		{time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2107, 12, 31, 23, 59, 58, 0, time.UTC)},
	} {
		tm, d := dosDateTime(tt.in)
		got := time.Date(int(d>>9)+1980, time.Month(d>>5&0xf), int(d&0x1f), int(tm>>11), int(tm>>5&0x3f), int(tm&0x1f)*2, 0, time.UTC)
		if !got.Equal(tt.want) {
			t.Errorf("%s: %s, want %s", tt.in, got, tt.want)
		}
	}
}

// FuzzZipRoundTrip writes the entries the fuzzer makes up and reads them
// back with archive/zip.
func FuzzZipRoundTrip(f *testing.F) {
	f.Add("a.xml", []byte("<a/>"), true, uint8(1), int64(0))
	f.Add("ñ/ü.txt", []byte{}, false, uint8(3), int64(1<<40))
	f.Add("", bytes.Repeat([]byte{0}, 1000), true, uint8(0), int64(-1<<40))
	f.Fuzz(func(t *testing.T, name string, data []byte, deflate bool, n uint8, sec int64) {
		if len(name) > 1000 {
			t.Skip("a name this long is TestZipBadNames'")
		}
		mod := time.Unix(sec%(300*365*24*3600), 0)
		var buf bytes.Buffer
		z, err := newZipWriter(&buf, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		var want []zipSeen
		var entries []zipEntry
		for i := range int(n % 8) {
			e := zipEntry{name: fmt.Sprintf("%s%d", name, i), data: data, deflate: deflate, raw: i%3 == 2}
			err := writeEntry(t, z, e, mod)
			if !utf8.ValidString(e.name) {
				if err == nil {
					t.Fatalf("name %q that is not UTF-8 written flagged UTF-8", e.name)
				}
				z.abandon()
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			entries = append(entries, e)
			want = append(want, zipSeen{Name: e.name, Size: uint64(len(data)), CRC: crc32.ChecksumIEEE(data)})
		}
		if err := z.close(); err != nil {
			t.Fatal(err)
		}
		checkGoReaderWith(t, bytes.NewReader(buf.Bytes()), int64(buf.Len()), want, entries, mod, false)
	})
}

// writeEntry adds e to z as the export does: whole with add, or spooled
// and copied with addRaw.
func writeEntry(t testing.TB, z *zipWriter, e zipEntry, mod time.Time) error {
	if !e.raw {
		return z.add(e.name, mod, e.data, e.deflate)
	}
	s, err := newSpooledEntry(t.TempDir())
	if err != nil {
		return err
	}
	defer s.close()
	if _, err := s.Write(e.data); err != nil {
		return err
	}
	csize, err := s.finish()
	if err != nil {
		return err
	}
	return z.addRaw(e.name, mod, zipDeflate, s.crc, csize, s.usize, s.f)
}

// zipSeen is what a reader reports of one entry.
type zipSeen struct {
	Name string `json:"name"`
	Size uint64 `json:"size"`
	CRC  uint32 `json:"crc"`
}

func checkGoReader(t *testing.T, r io.ReaderAt, size int64, want []zipSeen, entries []zipEntry, mod time.Time) *zip.Reader {
	t.Helper()
	return checkGoReaderWith(t, r, size, want, entries, mod, true)
}

// checkGoReaderWith reads the archive with archive/zip: its entries are
// want in order, each one's bytes read whole (archive/zip checks the CRC
// and the size at the end) and equal to its data when it has any, its
// name flagged UTF-8, its time mod's in Costa Rica to two seconds.
func checkGoReaderWith(t testing.TB, r io.ReaderAt, size int64, want []zipSeen, entries []zipEntry, mod time.Time, checkTime bool) *zip.Reader {
	t.Helper()
	zr, err := zip.NewReader(r, size)
	if err != nil {
		t.Fatalf("archive/zip: %v", err)
	}
	if len(zr.File) != len(want) {
		t.Fatalf("archive/zip: %d entries, want %d", len(zr.File), len(want))
	}
	cr := mod.In(hacienda.CostaRica)
	wantMod := time.Date(cr.Year(), cr.Month(), cr.Day(), cr.Hour(), cr.Minute(), cr.Second()&^1, 0, time.UTC)
	for i, zf := range zr.File {
		w := want[i]
		if zf.Name != w.Name || zf.UncompressedSize64 != w.Size || zf.CRC32 != w.CRC || zf.NonUTF8 {
			t.Fatalf("archive/zip entry %d: %q %d bytes crc %08x nonUTF8 %v, want %+v", i, zf.Name, zf.UncompressedSize64, zf.CRC32, zf.NonUTF8, w)
		}
		if zf.Method != zipStore && zf.Method != zipDeflate {
			t.Errorf("%s: method %d", zf.Name, zf.Method)
		}
		if zf.Method == zipStore && zf.CompressedSize64 != zf.UncompressedSize64 {
			t.Errorf("%s: stored, %d bytes of %d", zf.Name, zf.CompressedSize64, zf.UncompressedSize64)
		}
		if checkTime && !zf.Modified.Equal(wantMod) {
			t.Errorf("%s: modified %s, want %s", zf.Name, zf.Modified, wantMod)
		}
		rc, err := zf.Open()
		if err != nil {
			t.Fatalf("%s: %v", zf.Name, err)
		}
		h := crc32.NewIEEE()
		var got bytes.Buffer
		var dst io.Writer = h
		if entries[i].data != nil {
			dst = io.MultiWriter(h, &got)
		}
		n, err := io.Copy(dst, rc)
		rc.Close()
		if err != nil {
			t.Fatalf("%s: %v", zf.Name, err)
		}
		if uint64(n) != w.Size || h.Sum32() != w.CRC {
			t.Fatalf("%s: read %d bytes crc %08x", zf.Name, n, h.Sum32())
		}
		if entries[i].data != nil && !bytes.Equal(got.Bytes(), entries[i].data) {
			t.Errorf("%s: content differs", zf.Name)
		}
	}
	return zr
}

// pythonZip reads the archive argv[1] with Python's zipfile: it prints,
// as JSON, every entry's name, size and CRC, and the result of reading
// the entries (each CRC checked by zipfile): testzip's first bad name or
// null, or with argv[2] > 0 the same over the entries smaller than it.
const pythonZip = `
import json, sys, zipfile
z = zipfile.ZipFile(sys.argv[1])
limit = int(sys.argv[2])
if limit == 0:
    bad = z.testzip()
else:
    bad = None
    for i in z.infolist():
        if i.file_size < limit:
            try:
                z.read(i)
            except Exception as e:
                bad = i.filename + ": " + str(e)
                break
print(json.dumps({"entries": [{"name": i.filename, "size": i.file_size, "crc": i.CRC} for i in z.infolist()], "bad": bad}))
`

// checkPythonReader reads the archive at path with Python's zipfile,
// when python3 is installed.
func checkPythonReader(t *testing.T, path string, want []zipSeen, limit int64) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("python3 is not installed: the archive is not read back with Python's zipfile")
		return
	}
	out, err := exec.Command(py, "-c", pythonZip, path, fmt.Sprint(limit)).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("python zipfile: %v: %s", err, ee.Stderr)
		}
		t.Fatalf("python3: %v", err)
	}
	var got struct {
		Entries []zipSeen `json:"entries"`
		Bad     *string   `json:"bad"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("python's answer %q: %v", out, err)
	}
	if got.Bad != nil {
		t.Errorf("python zipfile: bad entry %s", *got.Bad)
	}
	if len(got.Entries) != len(want) {
		t.Fatalf("python zipfile: %d entries, want %d", len(got.Entries), len(want))
	}
	for i := range want {
		if got.Entries[i] != want[i] {
			t.Fatalf("python zipfile entry %d: %+v, want %+v", i, got.Entries[i], want[i])
		}
	}
}

// hasZip64End tells whether b ends with a ZIP64 end record and locator
// before its end record (which has no comment).
func hasZip64End(b []byte) bool {
	const endLen, locLen, end64Len = 22, 20, 56
	if len(b) < endLen+locLen+end64Len {
		return false
	}
	loc := b[len(b)-endLen-locLen:]
	if binary.LittleEndian.Uint32(loc) != sigEnd64Locator {
		return false
	}
	at := binary.LittleEndian.Uint64(loc[8:])
	return at == uint64(len(b)-endLen-locLen-end64Len) && binary.LittleEndian.Uint32(b[at:]) == sigEnd64
}

// sparseWriter writes to a file, skipping over writes of zeros (the file
// gets holes there, so a huge entry of zeros takes no disk).
type sparseWriter struct{ f *os.File }

var zeros = make([]byte, 256<<10)

func (s *sparseWriter) Write(b []byte) (int, error) {
	if len(b) <= len(zeros) && bytes.Equal(b, zeros[:len(b)]) {
		if _, err := s.f.Seek(int64(len(b)), io.SeekCurrent); err != nil {
			return 0, err
		}
		return len(b), nil
	}
	return s.f.Write(b)
}

// zeroReader reads zeros for ever.
type zeroReader struct{}

func (zeroReader) Read(b []byte) (int, error) {
	clear(b)
	return len(b), nil
}

// zeroCRC is the CRC-32 of n zero bytes.
func zeroCRC(n int64) uint32 {
	var crc uint32
	for n > 0 {
		k := min(n, int64(len(zeros)))
		crc = crc32.Update(crc, crc32.IEEETable, zeros[:k])
		n -= k
	}
	return crc
}

// offsetReader is b placed at offset off of a stream of zeros.
type offsetReader struct {
	off int64
	b   []byte
}

func (r *offsetReader) ReadAt(p []byte, at int64) (int, error) {
	n := 0
	for n < len(p) {
		pos := at + int64(n)
		switch {
		case pos < r.off:
			k := min(int64(len(p)-n), r.off-pos)
			clear(p[n : n+int(k)])
			n += int(k)
		case pos-r.off < int64(len(r.b)):
			n += copy(p[n:], r.b[pos-r.off:])
		default:
			return n, io.EOF
		}
	}
	return n, nil
}

// pseudoRandom is n bytes deflate cannot shrink.
func pseudoRandom(n int) []byte {
	b := make([]byte, n)
	x := uint64(0x9e3779b97f4a7c15)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}
