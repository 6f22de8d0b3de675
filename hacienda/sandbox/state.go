package sandbox

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/shopspring/decimal"
)

// Store keeps what a sandbox received and judged, so that a sandbox
// started again on it (Options.Store) knows every document its
// predecessor received: a credit note may reference a document accepted
// before a restart, a receiver's message answer it, and a status query
// about it gets the same verdict and answer. Without a Store everything
// is kept in memory and forgotten at Close.
//
// The sandbox writes a document through Receive before its receipt is
// answered (202), and its verdict through Judge before the verdict is
// first told (status query or callback): an answer the sandbox gave is
// never lost by a crash after it. A write that fails is answered as the
// tax authority answers its own faults: a receipt with 503, a verdict
// stays procesando and is judged again at the next query.
//
// Package sqlitestate is the Store of a SQLite file.
type Store interface {
	// Load returns every document kept, in the order they arrived.
	Load(ctx context.Context) ([]Record, error)
	// Receive keeps a document just received, and forgets the documents
	// named in forget (the oldest, past Options.MaxDocuments), in one
	// step.
	Receive(ctx context.Context, r Record, forget []string) error
	// Judge keeps a received document's verdict; a document it does not
	// keep (its Receive not done yet) is an error, and no verdict is told.
	Judge(ctx context.Context, key string, v Verdict) error
}

// Record is a received document as a Store keeps it.
type Record struct {
	// Key is the status resource's key (Received.Key).
	Key string
	// Doc is the submission and what the sandbox read of its XML, in the
	// sandbox's own encoding (JSON): a Store keeps it as it is.
	Doc []byte
	// XML is the document as received.
	XML []byte
	// Verdict is nil until the document is judged.
	Verdict *Verdict
}

// Verdict is a judged document's state.
type Verdict struct {
	// Estado is aceptado, rechazado or error.
	Estado string
	// Answer is the signed MensajeHacienda; nil for error.
	Answer []byte
	// Detalle are the reasons of a rejection.
	Detalle []string
	// Credits are, for an accepted credit note, the amounts it took from
	// the documents it references, by their key (decimal strings).
	Credits map[string]string
}

// storedDoc is a Record's Doc: the submission (its XML apart) and what
// the sandbox read of the XML and drew for it at receipt, so that a
// sandbox started again need not read thousands of documents again.
type storedDoc struct {
	Received   Received   `json:"received"`
	Info       storedInfo `json:"info"`
	NoCallback bool       `json:"noCallback,omitempty"`
	Rejected   []string   `json:"rejected,omitempty"`
}

// storedInfo is docInfo with its fields exported, the root standing for
// its type.
type storedInfo struct {
	Root           string       `json:"root"`
	Clave          string       `json:"clave"`
	Consecutivo    string       `json:"consecutivo,omitempty"`
	FechaEmision   string       `json:"fechaEmision,omitempty"`
	EmisorNombre   string       `json:"emisorNombre,omitempty"`
	EmisorTipo     string       `json:"emisorTipo,omitempty"`
	EmisorNumero   string       `json:"emisorNumero,omitempty"`
	ReceptorNombre string       `json:"receptorNombre,omitempty"`
	ReceptorTipo   string       `json:"receptorTipo,omitempty"`
	ReceptorNumero string       `json:"receptorNumero,omitempty"`
	TotalImpuesto  string       `json:"totalImpuesto,omitempty"`
	TotalFactura   string       `json:"totalFactura,omitempty"`
	Refs           [][2]string  `json:"refs,omitempty"`
	Lines          []storedLine `json:"lines,omitempty"`
}

type storedLine struct {
	Numero string      `json:"numero"`
	Cabys  string      `json:"cabys,omitempty"`
	Exons  [][3]string `json:"exons,omitempty"`
}

// record is d as a Store keeps it.
func (d *document) record() (Record, error) {
	in := d.info
	si := storedInfo{
		Root: in.root, Clave: in.clave, Consecutivo: in.consecutivo, FechaEmision: in.fechaEmision,
		EmisorNombre: in.emisorNombre, EmisorTipo: in.emisorTipo, EmisorNumero: in.emisorNumero,
		ReceptorNombre: in.receptorNombre, ReceptorTipo: in.receptorTipo, ReceptorNumero: in.receptorNumero,
		TotalImpuesto: in.totalImpuesto, TotalFactura: in.totalFactura,
	}
	for _, r := range in.refs {
		si.Refs = append(si.Refs, [2]string{r.tipo, r.numero})
	}
	for _, l := range in.lines {
		sl := storedLine{Numero: l.numero, Cabys: l.cabys}
		for _, x := range l.exons {
			sl.Exons = append(sl.Exons, [3]string{x.tipo, x.numero, x.tarifa})
		}
		si.Lines = append(si.Lines, sl)
	}
	doc, err := json.Marshal(storedDoc{Received: d.Received, Info: si, NoCallback: d.faults.noCallback, Rejected: d.faults.rejected})
	if err != nil {
		return Record{}, fmt.Errorf("sandbox: encode document %s: %w", d.Key, err)
	}
	return Record{Key: d.Key, Doc: doc, XML: d.XML}, nil
}

// fromRecord is the document r keeps, with its verdict when it has one.
func fromRecord(r Record) (*document, error) {
	var sd storedDoc
	if err := json.Unmarshal(r.Doc, &sd); err != nil {
		return nil, fmt.Errorf("sandbox: kept document %s: %w", r.Key, err)
	}
	if sd.Received.Key != r.Key {
		return nil, fmt.Errorf("sandbox: kept document %s names key %q", r.Key, sd.Received.Key)
	}
	si := sd.Info
	in := docInfo{
		root: si.Root, typ: rootTypes[si.Root], clave: si.Clave, consecutivo: si.Consecutivo, fechaEmision: si.FechaEmision,
		emisorNombre: si.EmisorNombre, emisorTipo: si.EmisorTipo, emisorNumero: si.EmisorNumero,
		receptorNombre: si.ReceptorNombre, receptorTipo: si.ReceptorTipo, receptorNumero: si.ReceptorNumero,
		totalImpuesto: si.TotalImpuesto, totalFactura: si.TotalFactura,
	}
	for _, ref := range si.Refs {
		in.refs = append(in.refs, docRef{tipo: ref[0], numero: ref[1]})
	}
	for _, sl := range si.Lines {
		l := docLine{numero: sl.Numero, cabys: sl.Cabys}
		for _, x := range sl.Exons {
			l.exons = append(l.exons, docExon{tipo: x[0], numero: x[1], tarifa: x[2]})
		}
		in.lines = append(in.lines, l)
	}
	d := &document{Received: sd.Received, info: in,
		faults: receiptFaults{stuck: sd.Received.Stuck, noCallback: sd.NoCallback, rejected: sd.Rejected}}
	d.XML = r.XML
	if v := r.Verdict; v != nil {
		d.judged, d.estado, d.answer, d.detalle, d.credits = true, v.Estado, v.Answer, v.Detalle, map[string]decimal.Decimal{}
		for k, a := range v.Credits {
			amount, err := decimal.NewFromString(a)
			if err != nil {
				return nil, fmt.Errorf("sandbox: kept document %s: credit to %s: %w", r.Key, k, err)
			}
			d.credits[k] = amount
		}
	}
	return d, nil
}

// load fills a new sandbox with the documents its Store keeps: their
// verdicts, what accepted credit notes took from the documents they
// reference, and the receivers' messages by document. The oldest past
// MaxDocuments are left out (and forgotten at the next receipt). A
// document not judged yet whose callback was pending is called back.
func (s *Sandbox) load(ctx context.Context) error {
	rs, err := s.opts.Store.Load(ctx)
	if err != nil {
		return fmt.Errorf("sandbox: load the kept documents: %w", err)
	}
	if n := len(rs) - s.opts.MaxDocuments; n > 0 {
		s.overflow = make([]string, 0, n)
		for _, r := range rs[:n] {
			s.overflow = append(s.overflow, r.Key)
		}
		rs = rs[n:]
	}
	for _, r := range rs {
		d, err := fromRecord(r)
		if err != nil {
			return err
		}
		if _, dup := s.docs[d.Key]; dup {
			continue
		}
		if d.info.typ.IsReceiverMessage() {
			s.replies[replyKey(d.Clave, d.info.receptorNumero)] = d.Key
		}
		s.docs[d.Key] = d
		s.order = append(s.order, d.Key)
	}
	for _, k := range s.order {
		d := s.docs[k]
		for ref, amount := range d.credits {
			if r := s.docs[ref]; r != nil && d.estado == "aceptado" {
				r.credited = r.credited.Add(amount)
			}
		}
		if !d.judged && d.CallbackURL != "" && !d.Dropped {
			go s.callBack(d)
		}
	}
	if len(rs) > 0 {
		s.log.InfoContext(ctx, "sandbox: the documents received before this start are known again", "documents", len(rs))
	}
	return nil
}
