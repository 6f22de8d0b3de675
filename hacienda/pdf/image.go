package pdf

import (
	"bytes"
	"compress/zlib"
	"crypto/sha256"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"sync"
)

// Bounds of a company's logo. The logo is printed at most about 50 × 18
// mm; 1,200 pixels a side is 600 dpi at that size, and the bounds keep a
// hostile image (a small file that decodes to a huge bitmap) from costing
// more than a few megabytes to read.
const (
	// MaxLogoBytes is the largest logo file taken.
	MaxLogoBytes = 256 << 10
	// MaxLogoSide is the most pixels a logo may have across or down.
	MaxLogoSide = 1200
)

// The ways a logo is refused; ParseLogo's error wraps one of them.
var (
	ErrLogoTooLarge = errors.New("the logo is larger than " + fmt.Sprint(MaxLogoBytes>>10) + " KiB")
	ErrLogoFormat   = errors.New("the logo must be a PNG or JPEG image")
	ErrLogoSize     = errors.New("the logo must be from 1 to " + fmt.Sprint(MaxLogoSide) + " pixels wide and high")
	ErrLogoDamaged  = errors.New("the logo image could not be read")
)

// Logo is a company's logo ready to print: a JPEG as its own compressed
// data (a PDF reader decodes it: DCTDecode), anything else decoded once
// into 8-bit samples compressed with Flate, its transparency as a soft
// mask. Make it with ParseLogo.
type Logo struct {
	w, h   int    // pixels
	colors int    // 1 grey, 3 RGB
	filter string // DCTDecode or FlateDecode
	data   []byte
	alpha  []byte // the soft mask's samples, Flate-compressed; nil when opaque
}

// Size is the logo's width and height in pixels.
func (l *Logo) Size() (w, h int) { return l.w, l.h }

// ParseLogo checks an uploaded logo and prepares it for printing: a PNG or
// a JPEG of at most MaxLogoBytes and MaxLogoSide pixels a side, decoded
// whole, so that a damaged or truncated file is refused here rather than
// printed broken. The header is read first: an image whose size is out of
// bounds is refused before its pixels are decoded. The error says why in
// words fit for the caller (it wraps ErrLogoTooLarge, ErrLogoFormat,
// ErrLogoSize or ErrLogoDamaged).
func ParseLogo(b []byte) (*Logo, error) {
	if len(b) > MaxLogoBytes {
		return nil, ErrLogoTooLarge
	}
	isJPEG := bytes.HasPrefix(b, []byte{0xff, 0xd8, 0xff})
	decodeConfig, decode := jpeg.DecodeConfig, jpeg.Decode
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		decodeConfig, decode = png.DecodeConfig, png.Decode
	case !isJPEG:
		return nil, ErrLogoFormat
	}
	cfg, err := decodeConfig(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLogoDamaged, err)
	}
	if cfg.Width < 1 || cfg.Height < 1 || cfg.Width > MaxLogoSide || cfg.Height > MaxLogoSide {
		return nil, fmt.Errorf("%w (it is %d × %d)", ErrLogoSize, cfg.Width, cfg.Height)
	}
	img, err := decode(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLogoDamaged, err)
	}
	if r := img.Bounds(); r.Dx() != cfg.Width || r.Dy() != cfg.Height {
		return nil, ErrLogoDamaged
	}
	switch img.(type) {
	case *image.Gray:
		if isJPEG {
			return &Logo{w: cfg.Width, h: cfg.Height, colors: 1, filter: "DCTDecode", data: b}, nil
		}
	case *image.YCbCr:
		// A baseline or progressive JPEG in YCbCr (or RGB): the reader
		// decodes it itself, so the file goes in as it is.
		return &Logo{w: cfg.Width, h: cfg.Height, colors: 3, filter: "DCTDecode", data: b}, nil
	}
	return samples(img), nil
}

// samples decodes any image (a PNG of any colour type and depth, a CMYK
// JPEG) into 8-bit RGB or grey samples and, when some pixel is not
// opaque, an alpha channel, each compressed with Flate.
func samples(img image.Image) *Logo {
	r := img.Bounds()
	w, h := r.Dx(), r.Dy()
	gray := false
	switch m := img.(type) {
	case *image.Gray, *image.Gray16:
		gray = true
	case *image.Paletted:
		gray = true
		for _, c := range m.Palette {
			cr, cg, cb, _ := c.RGBA()
			if cr != cg || cg != cb {
				gray = false
				break
			}
		}
	}
	colors := 3
	if gray {
		colors = 1
	}
	pix := make([]byte, 0, w*h*colors)
	alpha := make([]byte, 0, w*h)
	opaque := true
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			if gray {
				pix = append(pix, c.R)
			} else {
				pix = append(pix, c.R, c.G, c.B)
			}
			alpha = append(alpha, c.A)
			opaque = opaque && c.A == 0xff
		}
	}
	l := &Logo{w: w, h: h, colors: colors, filter: "FlateDecode", data: deflate(pix)}
	if !opaque {
		l.alpha = deflate(alpha)
	}
	return l
}

// deflate compresses b with zlib (the PDF's FlateDecode).
func deflate(b []byte) []byte {
	var out bytes.Buffer
	z := zlibWriters.Get().(*zlib.Writer)
	z.Reset(&out)
	_, _ = z.Write(b) // a bytes.Buffer does not fail
	_ = z.Close()
	zlibWriters.Put(z)
	return out.Bytes()
}

// logoCacheSize is how many prepared logos a process keeps: a PNG logo is
// decoded and compressed once, not on every render of its company's
// documents.
const logoCacheSize = 64

// logos keeps the logos prepared lately, by the SHA-256 of their file.
var logos = struct {
	sync.Mutex
	m     map[[32]byte]*Logo
	order [][32]byte // oldest first
}{m: map[[32]byte]*Logo{}}

// CachedLogo is ParseLogo with the process's cache of the logos prepared
// lately (the same file is prepared once): what the renders of a company's
// documents call with its stored logo.
func CachedLogo(b []byte) (*Logo, error) {
	key := sha256.Sum256(b)
	logos.Lock()
	l, ok := logos.m[key]
	logos.Unlock()
	if ok {
		return l, nil
	}
	l, err := ParseLogo(b)
	if err != nil {
		return nil, err
	}
	logos.Lock()
	defer logos.Unlock()
	if _, ok := logos.m[key]; !ok {
		if len(logos.order) >= logoCacheSize {
			delete(logos.m, logos.order[0])
			logos.order = logos.order[1:]
		}
		logos.m[key] = l
		logos.order = append(logos.order, key)
	}
	return l, nil
}
