package tenant

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"facturad/hacienda"
	"facturad/hacienda/msg"
)

// Monthly quotas and usage (A.14). A company's CuotaMensual bounds the
// documents it may have numbered in a Costa Rica calendar month, of any
// type and either environment; receivers' messages do not count. The store
// enforces it in the transaction that numbers a document
// (DocumentStore.ReserveDocument), so that replicas racing at the limit
// never let one more through (docs/design/quotas.md).

// ErrQuota is what a reservation refused by the company's monthly quota
// is: errors.Is(err, ErrQuota) holds for a *QuotaError.
var ErrQuota = errors.New("monthly quota reached")

// QuotaUse is a company's monthly quota and what it has numbered against
// it in one month.
type QuotaUse struct {
	// Periodo is the Costa Rica calendar month, YYYY-MM.
	Periodo string
	// Limit is the company's CuotaMensual.
	Limit int64
	// Used is how many documents the company has numbered in Periodo,
	// counting the one just reserved when a reservation reports it.
	Used int64
}

// Available is how many more documents the company may have numbered in
// the month: Limit − Used, never negative.
func (u QuotaUse) Available() int64 { return max(0, u.Limit-u.Used) }

// QuotaError refuses a reservation: the company has numbered its monthly
// quota. Nothing was numbered.
type QuotaError struct {
	QuotaUse
}

func (e *QuotaError) Error() string {
	return fmt.Sprintf("the company has numbered %d documents in %s, its monthly quota is %d", e.Used, e.Periodo, e.Limit)
}

// Is makes errors.Is(err, ErrQuota) hold.
func (e *QuotaError) Is(target error) bool { return target == ErrQuota }

// Month is a Costa Rica calendar month: the half-open interval of instants
// [Start, End) it spans, and its name YYYY-MM.
type Month struct {
	Periodo    string
	Start, End time.Time // in UTC
}

// MonthOf is the Costa Rica calendar month that holds t.
func MonthOf(t time.Time) Month {
	cr := t.In(hacienda.CostaRica)
	return monthFrom(cr.Year(), cr.Month())
}

func monthFrom(y int, m time.Month) Month {
	start := time.Date(y, m, 1, 0, 0, 0, 0, hacienda.CostaRica)
	return Month{
		Periodo: start.Format("2006-01"),
		Start:   start.UTC(),
		End:     start.AddDate(0, 1, 0).UTC(),
	}
}

// FieldPeriodo is the query parameter that names a month.
const FieldPeriodo = "periodo"

// ParsePeriodo reads a month written YYYY-MM (2000-01 to 2099-12, the
// years a clave can carry). A malformed one is a validation error on
// periodo.
func ParsePeriodo(s string) (Month, error) {
	bad := func() (Month, error) {
		e := newValidationError()
		e.Add(FieldPeriodo, msg.PeriodoFormat.With())
		return Month{}, e
	}
	if len(s) != 7 || s[4] != '-' {
		return bad()
	}
	y, err1 := strconv.Atoi(s[:4])
	m, err2 := strconv.Atoi(s[5:])
	if err1 != nil || err2 != nil || s[0] == '+' || s[5] == '+' || y < 2000 || y > 2099 || m < 1 || m > 12 {
		return bad()
	}
	return monthFrom(y, time.Month(m)), nil
}

// UsageCounts are the documents (or receivers' messages) a company
// numbered in a month: the total, and the total per document type and per
// estado. A type or estado with none is absent.
type UsageCounts struct {
	Total     int64
	PorTipo   map[string]int64
	PorEstado map[string]int64
}

// add counts n rows of type tipo (none for messages) in estado.
func (c *UsageCounts) add(tipo, estado string, n int64) {
	c.Total += n
	if tipo != "" {
		if c.PorTipo == nil {
			c.PorTipo = map[string]int64{}
		}
		c.PorTipo[tipo] += n
	}
	if c.PorEstado == nil {
		c.PorEstado = map[string]int64{}
	}
	c.PorEstado[estado] += n
}

// Usage is what one company numbered in one month.
type Usage struct {
	CompanyID int64
	Periodo   string
	// Documentos are the documents it issued (every type, both
	// environments), by the month they were numbered in.
	Documentos UsageCounts
	// Mensajes are its receiver's messages about its suppliers' documents
	// (A.11), by the month they were numbered in.
	Mensajes UsageCounts
}

// UsageRow is one count a UsageStore reads: n documents (Tipo set) or
// receiver's messages (Tipo empty) of a company in one estado.
type UsageRow struct {
	CompanyID int64
	Message   bool
	Tipo      string
	Estado    string
	N         int64
}

// UsageQuery selects the companies whose usage is counted, and the month.
type UsageQuery struct {
	// CompanyID, when not zero, counts that company only.
	CompanyID int64
	// OwnerID, when not nil, counts the companies of that reseller only.
	OwnerID *int64
	Month   Month
}

// UsageStore counts what companies numbered (both store adapters
// implement it).
type UsageStore interface {
	// UsageCompanies returns the ids of the companies q selects, in
	// order (the month is not looked at).
	UsageCompanies(ctx context.Context, q UsageQuery) ([]int64, error)
	// UsageRows counts the documents and the receiver's messages of the
	// companies q selects that were numbered (created) in q.Month, per
	// company, type and estado. Companies with none have no rows.
	UsageRows(ctx context.Context, q UsageQuery) ([]UsageRow, error)
	// QuotaUse reads the company's monthly quota and what it has
	// numbered in the month that holds at: nil when it has no quota. A
	// missing company is ErrNotFound.
	QuotaUse(ctx context.Context, companyID int64, at time.Time) (*QuotaUse, error)
}

// usageStore is the Service's store as a UsageStore.
func (s *Service) usageStore() (UsageStore, error) {
	us, ok := s.store.(UsageStore)
	if !ok {
		return nil, errors.New("tenant: the store counts no usage")
	}
	return us, nil
}

// monthOrNow reads periodo, the current Costa Rica month when empty.
func (s *Service) monthOrNow(periodo string) (Month, error) {
	if periodo == "" {
		return MonthOf(s.now()), nil
	}
	return ParsePeriodo(periodo)
}

// Usage counts what a company numbered in a month (periodo YYYY-MM, the
// current Costa Rica month when empty): for anyone who may see the
// company (its admin, its reseller, its users). Another tenant's company
// is ErrNotFound.
func (s *Service) Usage(ctx context.Context, p Principal, companyID int64, periodo string) (Usage, error) {
	m, err := s.monthOrNow(periodo)
	if err != nil {
		return Usage{}, err
	}
	us, err := s.usageStore()
	if err != nil {
		return Usage{}, err
	}
	if _, err := s.companyFor(ctx, p, companyID); err != nil {
		return Usage{}, err
	}
	out, err := s.usages(ctx, us, UsageQuery{CompanyID: companyID, Month: m})
	if err != nil {
		return Usage{}, err
	}
	if len(out) != 1 {
		return Usage{}, fmt.Errorf("usage of company %d: %w", companyID, ErrNotFound)
	}
	return out[0], nil
}

// Usages counts what every company p manages numbered in a month: an
// admin's every company, a reseller's own, ordered by company id. A
// branch user manages no company: ErrNotFound, as for the other calls
// that are the operators' (the contract has no 403).
func (s *Service) Usages(ctx context.Context, p Principal, periodo string) (string, []Usage, error) {
	var q UsageQuery
	switch p.Role {
	case RoleAdmin:
	case RoleReseller:
		if p.UserID == 0 {
			return "", nil, ErrNotFound
		}
		owner := p.UserID
		q.OwnerID = &owner
	default:
		return "", nil, ErrNotFound
	}
	m, err := s.monthOrNow(periodo)
	if err != nil {
		return "", nil, err
	}
	q.Month = m
	us, err := s.usageStore()
	if err != nil {
		return "", nil, err
	}
	out, err := s.usages(ctx, us, q)
	return m.Periodo, out, err
}

// usages reads the companies q selects and their counts, one Usage per
// company, zeros included.
func (s *Service) usages(ctx context.Context, us UsageStore, q UsageQuery) ([]Usage, error) {
	ids, err := us.UsageCompanies(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	rows, err := us.UsageRows(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("usage: %w", err)
	}
	out := make([]Usage, len(ids))
	at := make(map[int64]*Usage, len(ids))
	for i, id := range ids {
		out[i] = Usage{CompanyID: id, Periodo: q.Month.Periodo}
		at[id] = &out[i]
	}
	for _, r := range rows {
		u := at[r.CompanyID]
		if u == nil {
			continue // a company created between the two reads
		}
		if r.Message {
			u.Mensajes.add("", r.Estado, r.N)
		} else {
			u.Documentos.add(r.Tipo, r.Estado, r.N)
		}
	}
	return out, nil
}
