package export

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"time"
	"unicode/utf8"

	"facturad/hacienda"
)

// zipWriter writes a ZIP archive (PKWARE APPNOTE 6.3) to a stream, one
// whole entry at a time, in memory bounded by the largest entry: the
// central directory, which names every entry and so grows with the
// archive, is spooled to a temporary file as entries are written and
// copied to the stream at the end. Every entry's sizes and CRC are known
// before its local header is written (an entry is added whole, or from a
// finished temporary file), so no entry needs a data descriptor; ZIP64
// records are written where a size, an offset or the number of entries
// needs them. Names are UTF-8 (general purpose flag bit 11; a name that
// is not valid UTF-8 is refused). Times are
// Costa Rica local time, as a ZIP's DOS times are local.
type zipWriter struct {
	w       io.Writer
	off     uint64 // bytes written to w
	dir     *os.File
	dirw    *bufio.Writer
	dirSize uint64
	entries uint64

	comp *flate.Writer
	buf  bytes.Buffer
}

const (
	sigLocal        = 0x04034b50
	sigCentral      = 0x02014b50
	sigEnd          = 0x06054b50
	sigEnd64        = 0x06064b50
	sigEnd64Locator = 0x07064b50

	flagUTF8     = 0x0800
	versionBase  = 20 // deflate, directories
	versionZip64 = 45
	madeByUnix   = 3 << 8
	max16        = 0xffff
	max32        = 0xffffffff
	// fileMode is the entries' Unix mode, rw-r--r-- regular file, in the
	// central directory's external attributes.
	fileMode = 0o100644 << 16
)

// newZipWriter writes an archive to w, spooling its central directory to
// a temporary file in tempDir (os.TempDir when empty), removed at once:
// it lives until close or abandon.
func newZipWriter(w io.Writer, tempDir string) (*zipWriter, error) {
	f, err := os.CreateTemp(tempDir, "facturad-export-dir-*")
	if err != nil {
		return nil, fmt.Errorf("export: central directory spool: %w", err)
	}
	_ = os.Remove(f.Name()) // unnamed: gone once closed, whatever happens
	comp, _ := flate.NewWriter(nil, flate.DefaultCompression)
	return &zipWriter{w: w, dir: f, dirw: bufio.NewWriterSize(f, 32<<10), comp: comp}, nil
}

// add writes one entry holding data, deflated when deflate is set and it
// makes the entry smaller (else stored).
func (z *zipWriter) add(name string, mod time.Time, data []byte, deflate bool) error {
	crc := crc32.ChecksumIEEE(data)
	method, body := zipStore, data
	if deflate && len(data) > 0 {
		z.buf.Reset()
		z.comp.Reset(&z.buf)
		if _, err := z.comp.Write(data); err != nil {
			return fmt.Errorf("export: deflate %s: %w", name, err)
		}
		if err := z.comp.Close(); err != nil {
			return fmt.Errorf("export: deflate %s: %w", name, err)
		}
		if z.buf.Len() < len(data) {
			method, body = zipDeflate, z.buf.Bytes()
		}
	}
	if err := z.header(name, mod, method, crc, uint64(len(body)), uint64(len(data))); err != nil {
		return err
	}
	return z.write(body)
}

// addRaw writes one entry whose compressed bytes r yields: csize of them,
// with method, crc and usize already worked out by the caller.
func (z *zipWriter) addRaw(name string, mod time.Time, method uint16, crc uint32, csize, usize uint64, r io.Reader) error {
	if err := z.header(name, mod, method, crc, csize, usize); err != nil {
		return err
	}
	n, err := io.Copy(z.counting(), io.LimitReader(r, int64(csize)))
	if err != nil {
		return fmt.Errorf("export: write %s: %w", name, err)
	}
	if uint64(n) != csize {
		return fmt.Errorf("export: %s: %d bytes of %d", name, n, csize)
	}
	return nil
}

const (
	zipStore   uint16 = 0
	zipDeflate uint16 = 8
)

// header writes an entry's local header and spools its central
// directory record.
func (z *zipWriter) header(name string, mod time.Time, method uint16, crc uint32, csize, usize uint64) error {
	if len(name) > max16 {
		return fmt.Errorf("export: entry name of %d bytes", len(name))
	}
	// Every name is flagged UTF-8: one that is not would be read as
	// something else, so it is refused.
	if !utf8.ValidString(name) {
		return fmt.Errorf("export: entry name %q is not UTF-8", name)
	}
	offset := z.off
	dosTime, dosDate := dosDateTime(mod)

	sizes64 := csize >= max32 || usize >= max32
	version := uint16(versionBase)
	if sizes64 {
		version = versionZip64
	}
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, sigLocal)
	b = binary.LittleEndian.AppendUint16(b, version)
	b = binary.LittleEndian.AppendUint16(b, flagUTF8)
	b = binary.LittleEndian.AppendUint16(b, method)
	b = binary.LittleEndian.AppendUint16(b, dosTime)
	b = binary.LittleEndian.AppendUint16(b, dosDate)
	b = binary.LittleEndian.AppendUint32(b, crc)
	var extra []byte
	if sizes64 {
		b = binary.LittleEndian.AppendUint32(b, max32)
		b = binary.LittleEndian.AppendUint32(b, max32)
		extra = binary.LittleEndian.AppendUint16(extra, 0x0001)
		extra = binary.LittleEndian.AppendUint16(extra, 16)
		extra = binary.LittleEndian.AppendUint64(extra, usize)
		extra = binary.LittleEndian.AppendUint64(extra, csize)
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(csize))
		b = binary.LittleEndian.AppendUint32(b, uint32(usize))
	}
	b = binary.LittleEndian.AppendUint16(b, uint16(len(name)))
	b = binary.LittleEndian.AppendUint16(b, uint16(len(extra)))
	b = append(b, name...)
	b = append(b, extra...)
	if err := z.write(b); err != nil {
		return err
	}

	// The central directory record: every ZIP64 field in its extra field
	// once any of them needs it.
	cen64 := sizes64 || offset >= max32
	version = versionBase
	extra = extra[:0]
	if cen64 {
		version = versionZip64
		extra = binary.LittleEndian.AppendUint16(extra, 0x0001)
		extra = binary.LittleEndian.AppendUint16(extra, 24)
		extra = binary.LittleEndian.AppendUint64(extra, usize)
		extra = binary.LittleEndian.AppendUint64(extra, csize)
		extra = binary.LittleEndian.AppendUint64(extra, offset)
	}
	c := make([]byte, 0, 46+len(name)+len(extra))
	c = binary.LittleEndian.AppendUint32(c, sigCentral)
	c = binary.LittleEndian.AppendUint16(c, madeByUnix|versionZip64)
	c = binary.LittleEndian.AppendUint16(c, version)
	c = binary.LittleEndian.AppendUint16(c, flagUTF8)
	c = binary.LittleEndian.AppendUint16(c, method)
	c = binary.LittleEndian.AppendUint16(c, dosTime)
	c = binary.LittleEndian.AppendUint16(c, dosDate)
	c = binary.LittleEndian.AppendUint32(c, crc)
	if cen64 {
		c = binary.LittleEndian.AppendUint32(c, max32)
		c = binary.LittleEndian.AppendUint32(c, max32)
	} else {
		c = binary.LittleEndian.AppendUint32(c, uint32(csize))
		c = binary.LittleEndian.AppendUint32(c, uint32(usize))
	}
	c = binary.LittleEndian.AppendUint16(c, uint16(len(name)))
	c = binary.LittleEndian.AppendUint16(c, uint16(len(extra)))
	c = binary.LittleEndian.AppendUint16(c, 0) // comment
	c = binary.LittleEndian.AppendUint16(c, 0) // disk
	c = binary.LittleEndian.AppendUint16(c, 0) // internal attributes
	c = binary.LittleEndian.AppendUint32(c, fileMode)
	if cen64 {
		c = binary.LittleEndian.AppendUint32(c, max32)
	} else {
		c = binary.LittleEndian.AppendUint32(c, uint32(offset))
	}
	c = append(c, name...)
	c = append(c, extra...)
	if _, err := z.dirw.Write(c); err != nil {
		return fmt.Errorf("export: central directory spool: %w", err)
	}
	z.dirSize += uint64(len(c))
	z.entries++
	return nil
}

// close writes the central directory and the end records, and drops the
// spool. The archive is complete once it returns nil.
func (z *zipWriter) close() error {
	defer z.dir.Close()
	if err := z.dirw.Flush(); err != nil {
		return fmt.Errorf("export: central directory spool: %w", err)
	}
	if _, err := z.dir.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("export: central directory spool: %w", err)
	}
	dirOff := z.off
	n, err := io.Copy(z.counting(), z.dir)
	if err != nil {
		return fmt.Errorf("export: write the central directory: %w", err)
	}
	if uint64(n) != z.dirSize {
		return fmt.Errorf("export: central directory of %d bytes, spooled %d", n, z.dirSize)
	}
	var b []byte
	if z.entries >= max16 || dirOff >= max32 || z.dirSize >= max32 {
		end64 := z.off
		b = binary.LittleEndian.AppendUint32(b, sigEnd64)
		b = binary.LittleEndian.AppendUint64(b, 44) // the record's size after this field
		b = binary.LittleEndian.AppendUint16(b, madeByUnix|versionZip64)
		b = binary.LittleEndian.AppendUint16(b, versionZip64)
		b = binary.LittleEndian.AppendUint32(b, 0) // this disk
		b = binary.LittleEndian.AppendUint32(b, 0) // the directory's disk
		b = binary.LittleEndian.AppendUint64(b, z.entries)
		b = binary.LittleEndian.AppendUint64(b, z.entries)
		b = binary.LittleEndian.AppendUint64(b, z.dirSize)
		b = binary.LittleEndian.AppendUint64(b, dirOff)
		b = binary.LittleEndian.AppendUint32(b, sigEnd64Locator)
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint64(b, end64)
		b = binary.LittleEndian.AppendUint32(b, 1) // disks
	}
	b = binary.LittleEndian.AppendUint32(b, sigEnd)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint16(b, 0)
	b = binary.LittleEndian.AppendUint16(b, uint16(min(z.entries, max16)))
	b = binary.LittleEndian.AppendUint16(b, uint16(min(z.entries, max16)))
	b = binary.LittleEndian.AppendUint32(b, uint32(min(z.dirSize, max32)))
	b = binary.LittleEndian.AppendUint32(b, uint32(min(dirOff, max32)))
	b = binary.LittleEndian.AppendUint16(b, 0) // comment
	return z.write(b)
}

// abandon drops the spool without finishing the archive: what was
// written has no central directory, so ZIP readers refuse it.
func (z *zipWriter) abandon() { _ = z.dir.Close() }

func (z *zipWriter) write(b []byte) error {
	n, err := z.w.Write(b)
	z.off += uint64(n)
	if err != nil {
		return fmt.Errorf("export: write: %w", err)
	}
	return nil
}

// counting is z's stream, counted into z.off.
func (z *zipWriter) counting() io.Writer { return zipCounter{z} }

type zipCounter struct{ z *zipWriter }

func (c zipCounter) Write(b []byte) (int, error) {
	n, err := c.z.w.Write(b)
	c.z.off += uint64(n)
	return n, err
}

// dosDateTime is t in Costa Rica as a ZIP's MS-DOS time and date (two
// seconds' resolution, 1980 to 2107; a time outside is clamped).
func dosDateTime(t time.Time) (uint16, uint16) {
	t = t.In(hacienda.CostaRica)
	if t.Year() < 1980 {
		return 0, 1<<5 | 1 // 1980-01-01 00:00
	}
	if t.Year() > 2107 {
		t = time.Date(2107, 12, 31, 23, 59, 58, 0, hacienda.CostaRica)
	}
	return uint16(t.Hour()<<11 | t.Minute()<<5 | t.Second()/2),
		uint16((t.Year()-1980)<<9 | int(t.Month())<<5 | t.Day())
}

// spooledEntry is an entry written to a temporary file first, deflated
// on the way, while its size and CRC are counted (the CSV index, which
// grows with the archive): addRaw copies it into the archive at the end.
type spooledEntry struct {
	f     *os.File
	bw    *bufio.Writer
	comp  *flate.Writer
	crc   uint32
	usize uint64
}

func newSpooledEntry(tempDir string) (*spooledEntry, error) {
	f, err := os.CreateTemp(tempDir, "facturad-export-index-*")
	if err != nil {
		return nil, fmt.Errorf("export: index spool: %w", err)
	}
	_ = os.Remove(f.Name())
	bw := bufio.NewWriterSize(f, 32<<10)
	comp, _ := flate.NewWriter(bw, flate.DefaultCompression)
	return &spooledEntry{f: f, bw: bw, comp: comp}, nil
}

func (s *spooledEntry) Write(b []byte) (int, error) {
	s.crc = crc32.Update(s.crc, crc32.IEEETable, b)
	s.usize += uint64(len(b))
	return s.comp.Write(b)
}

// finish ends the entry and returns its compressed size, ready to read
// from the start.
func (s *spooledEntry) finish() (uint64, error) {
	if err := s.comp.Close(); err != nil {
		return 0, fmt.Errorf("export: index spool: %w", err)
	}
	if err := s.bw.Flush(); err != nil {
		return 0, fmt.Errorf("export: index spool: %w", err)
	}
	end, err := s.f.Seek(0, io.SeekCurrent)
	if err != nil {
		return 0, fmt.Errorf("export: index spool: %w", err)
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return 0, fmt.Errorf("export: index spool: %w", err)
	}
	return uint64(end), nil
}

func (s *spooledEntry) close() { _ = s.f.Close() }
