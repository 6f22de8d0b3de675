package tenant

import (
	"context"
	"errors"
	"fmt"

	"facturad/hacienda/msg"
)

// Branches lists a company's branches, ordered by id.
func (s *Service) Branches(ctx context.Context, p Principal, companyID int64) ([]Branch, error) {
	if err := s.companyVisible(ctx, p, companyID); err != nil {
		return nil, err
	}
	// A company that does not exist is ErrNotFound here.
	bs, err := s.store.Branches(ctx, companyID)
	if err != nil {
		return nil, fmt.Errorf("branches of company %d: %w", companyID, err)
	}
	if bs == nil {
		bs = []Branch{}
	}
	return bs, nil
}

// CreateBranch adds a branch to a company with its first API user, whose
// credentials are returned once. A Sucursal code the company already uses
// is a validation error on sucursal.
func (s *Service) CreateBranch(ctx context.Context, p Principal, companyID int64, in BranchInput) (Branch, Credentials, error) {
	c, err := s.companyFor(ctx, p, companyID)
	if err != nil {
		return Branch{}, Credentials{}, err
	}
	if err := normBranch(&in, true).orNil(); err != nil {
		return Branch{}, Credentials{}, err
	}
	b := Branch{CompanyID: c.ID}
	applyBranchInput(&b, in)
	b.Activo = flag(in.Activo)
	u, creds, err := s.newUser("", RoleBranch, c.NumeroIdentificacion, b.Sucursal)
	if err != nil {
		return Branch{}, Credentials{}, err
	}
	if err := s.store.CreateBranch(ctx, &b, &u); err != nil {
		if errors.Is(err, ErrConflict) {
			return Branch{}, Credentials{}, invalidField("sucursal", msg.BranchExists.With(b.Sucursal))
		}
		return Branch{}, Credentials{}, fmt.Errorf("create branch of company %d: %w", c.ID, err)
	}
	if stored, err := s.store.Branch(ctx, b.ID); err == nil {
		b = stored
	}
	return b, creds, nil
}

// UpdateBranch replaces a branch's details (a full replace; an empty activo
// keeps the current state). Setting activo to N drops the cached
// credentials of the branch's users.
func (s *Service) UpdateBranch(ctx context.Context, p Principal, companyID, branchID int64, in BranchInput) (Branch, error) {
	_, b, err := s.branchFor(ctx, p, companyID, branchID)
	if err != nil {
		return Branch{}, err
	}
	if err := normBranch(&in, false).orNil(); err != nil {
		return Branch{}, err
	}
	wasActive := b.Activo
	applyBranchInput(&b, in)
	if in.Activo != "" {
		b.Activo = flag(in.Activo)
	}
	if err := s.store.UpdateBranch(ctx, &b); err != nil {
		if errors.Is(err, ErrConflict) {
			return Branch{}, invalidField("sucursal", msg.BranchExists.With(b.Sucursal))
		}
		return Branch{}, fmt.Errorf("update branch %d: %w", branchID, err)
	}
	if wasActive && !b.Activo {
		if err := s.forgetCompanyUsers(ctx, companyID, branchID); err != nil {
			return Branch{}, fmt.Errorf("deactivate branch %d: %w", branchID, err)
		}
	}
	stored, err := s.store.Branch(ctx, branchID)
	if err != nil {
		return Branch{}, fmt.Errorf("update branch %d: %w", branchID, err)
	}
	return stored, nil
}

func applyBranchInput(b *Branch, in BranchInput) {
	b.Sucursal = in.Sucursal
	b.RazonComercial = in.RazonComercial
	b.Provincia = in.Provincia
	b.Canton = in.Canton
	b.Distrito = in.Distrito
	b.Barrio = in.Barrio
	b.OtrasSenas = in.OtrasSenas
	b.CodPais = in.CodPais
	b.Telefono = in.Telefono
	b.Fax = in.Fax
	b.CorreoElectronico = in.CorreoElectronico
	b.MonedaLocal = in.MonedaLocal
	b.MonedaExtranjera = in.MonedaExtranjera
	b.VerMonedaExtranjera = flag(in.VerMonedaExtranjera)
	b.Licencia = in.Licencia
}
