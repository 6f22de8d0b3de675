package pdf

import (
	"fmt"

	"github.com/boombuler/barcode/qr"
)

// qrModules returns the dark modules of a QR code of content (error
// correction level M, 15% of the symbol recoverable), row by row, without
// the quiet zone.
func qrModules(content string) ([][]bool, error) {
	code, err := qr.Encode(content, qr.M, qr.Auto)
	if err != nil {
		return nil, fmt.Errorf("encode the QR code: %w", err)
	}
	b := code.Bounds()
	rows := make([][]bool, b.Dy())
	for y := range rows {
		rows[y] = make([]bool, b.Dx())
		for x := range rows[y] {
			r, _, _, _ := code.At(b.Min.X+x, b.Min.Y+y).RGBA()
			rows[y][x] = r < 0x8000
		}
	}
	return rows, nil
}

// drawQR draws a QR code as vector squares in a size × size box at (x, y)
// whose border keeps the quiet zone of four modules white. A vector
// symbol stays sharp at any zoom and on any printer, and costs no image
// decoding; each run of dark modules of a row is one rectangle.
func drawQR(f *writer, rows [][]bool, x, y, size float64) {
	const quiet = 4
	n := len(rows)
	if n == 0 {
		return
	}
	m := size / float64(n+2*quiet)
	f.setFillColor([3]int{255, 255, 255})
	f.fillRect(x, y, size, size)
	f.setFillColor([3]int{0, 0, 0})
	for r, row := range rows {
		for c := 0; c < len(row); {
			if !row[c] {
				c++
				continue
			}
			start := c
			for c < len(row) && row[c] {
				c++
			}
			f.fillRect(x+float64(quiet+start)*m, y+float64(quiet+r)*m, float64(c-start)*m, m)
		}
	}
}
