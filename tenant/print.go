package tenant

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"facturad/hacienda/msg"
	"facturad/hacienda/pdf"
	"facturad/hacienda/xmltext"
)

// What a company prints on its documents besides their XML: a logo and
// free notes (bank accounts, a return policy). Both are set through the
// company's form (A.2, ours) and drawn by hacienda/pdf.

// The company fields of the printed documents, named as in forms, answers
// and errors.
const (
	FieldNotasImpresas = "notasImpresas"
	FieldLogo          = "logo"
	FieldQuitarLogo    = "quitarLogo"
)

// MaxNotasImpresas is how many characters a company's notes may have.
const MaxNotasImpresas = 1000

// CompanyPrint is what a company prints on its documents: its logo (the
// PNG or JPEG file as uploaded; nil when it has none) and its notes.
type CompanyPrint struct {
	Logo  []byte
	Notas string
}

// CompanyPrintStore reads what a company prints on its documents (both
// store adapters implement it).
type CompanyPrintStore interface {
	// CompanyPrint returns the company's logo and notes; a company that
	// does not exist is ErrNotFound.
	CompanyPrint(ctx context.Context, companyID int64) (CompanyPrint, error)
}

// CompanyPrint returns what the company prints on its documents. It checks
// no principal: it is for the code that draws a document the caller was
// already allowed to read (the PDF routes, the e-mail, the export, the
// archive). A store without it prints nothing of the kind.
func (s *Service) CompanyPrint(ctx context.Context, companyID int64) (CompanyPrint, error) {
	ps, ok := s.store.(CompanyPrintStore)
	if !ok {
		return CompanyPrint{}, nil
	}
	p, err := ps.CompanyPrint(ctx, companyID)
	if err != nil {
		return CompanyPrint{}, fmt.Errorf("company %d: what it prints: %w", companyID, err)
	}
	return p, nil
}

// normPrint checks the printed documents' fields of a company request:
// the notes (line breaks made \n, blanks around them trimmed, at most
// MaxNotasImpresas characters of text an XML document could carry), and
// the logo (pdf.ParseLogo, which decodes it whole within its bounds).
func normPrint(e *ValidationError, in *CompanyInput) {
	if in.NotasImpresas != nil {
		v := strings.ReplaceAll(*in.NotasImpresas, "\r\n", "\n")
		v = strings.ReplaceAll(v, "\r", "\n")
		lines := strings.Split(v, "\n")
		for i, l := range lines {
			lines[i] = strings.TrimSpace(l)
		}
		v = strings.TrimSpace(strings.Join(lines, "\n"))
		*in.NotasImpresas = v
		if m := xmltext.Check(v); !m.IsZero() {
			e.Add(FieldNotasImpresas, m)
		} else if n := runes(v); n > MaxNotasImpresas {
			e.Add(FieldNotasImpresas, msg.NotasTooLong.With(MaxNotasImpresas, n))
		}
	}
	if len(in.Logo) > 0 {
		if in.QuitarLogo {
			e.Add(FieldQuitarLogo, msg.LogoAndRemoval.With())
		}
		if _, err := pdf.ParseLogo(in.Logo); err != nil {
			e.Add(FieldLogo, logoMessage(err))
		}
	}
}

// logoMessage says why a logo was refused, in a field error's words.
func logoMessage(err error) msg.Message {
	switch {
	case errors.Is(err, pdf.ErrLogoTooLarge):
		return msg.LogoTooLarge.With(pdf.MaxLogoBytes >> 10)
	case errors.Is(err, pdf.ErrLogoFormat):
		return msg.LogoFormat.With()
	case errors.Is(err, pdf.ErrLogoSize):
		return msg.LogoSize.With(pdf.MaxLogoSide)
	}
	return msg.LogoUnreadable.With()
}

// applyPrint copies the printed documents' fields of a checked request
// into c: the notes when sent, a new logo, or the removal of the stored
// one.
func applyPrint(c *Company, in CompanyInput) {
	if in.NotasImpresas != nil {
		c.NotasImpresas = *in.NotasImpresas
	}
	switch {
	case len(in.Logo) > 0:
		c.Logo, c.ReplaceLogo = in.Logo, true
	case in.QuitarLogo:
		c.Logo, c.ReplaceLogo = nil, true
	}
}
