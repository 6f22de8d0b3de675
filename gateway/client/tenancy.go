package client

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"facturad/hacienda/api"
)

// The bodies of the company, branch and user calls (A.2–A.4) are the
// contract's, from package hacienda/api.
type (
	// Credentials are an API user's, shown in clear only in the answer of
	// the call that created them (or rotated the token).
	Credentials = api.Credentials
	// Company is a company as searched (A.2, search form).
	Company = api.Company
	// CompanyDetail is a company as read by id (A.2, get form); its
	// ContrasenaHacienda and Clave are "" unless the caller manages the
	// company (the admin, its reseller).
	CompanyDetail = api.CompanyDetail
	// UpdatedCompany is the answer of a company update.
	UpdatedCompany = api.UpdatedCompany
	// CreatedCompany is the answer of a company create, with its first API
	// user's credentials (CreatedCompany.Credentials).
	CreatedCompany = api.CreatedCompany
	// CompanyForm is the form of a company create or update (A.2); an
	// update is a full replace.
	CompanyForm = api.CompanyForm
	// Branch is a company's branch (A.3).
	Branch = api.Branch
	// BranchInput is the body of a branch create or update (A.3); an
	// update is a full replace.
	BranchInput = api.BranchInput
	// CreatedBranch is the answer of a branch create, with its first API
	// user's credentials (CreatedBranch.Credentials).
	CreatedBranch = api.CreatedBranch
	// UpdatedBranch is the answer of a branch update.
	UpdatedBranch = api.UpdatedBranch
	// APIUser is a branch's API user as listed (never its password or
	// token).
	APIUser = api.APIUser
	// PruebaConexion is the answer of TestConnection.
	PruebaConexion = api.PruebaConexion
)

// ConnectionOK is PruebaConexion's Token and Certificado when they work.
const ConnectionOK = api.ConnectionOK

func companyPath(id int64) string { return "/api/companies/" + strconv.FormatInt(id, 10) }

// SearchCompanies lists the companies whose name contains name (empty:
// all), at most 100, among those the caller may see.
func (c *Client) SearchCompanies(ctx context.Context, name string) ([]Company, error) {
	var out []Company
	err := c.callJSON(ctx, request{method: http.MethodGet, path: "/api/companies/v4?Name=" + url.QueryEscape(name), safe: true}, &out)
	return out, err
}

// GetCompany reads a company (A.2, get form). Its tax-authority password
// and certificate PIN come with it only for the admin and the company's
// reseller (and for nobody when the service hides them): any other
// caller, the company's own users included, gets them "". A form built
// from it for UpdateCompany may send them back empty, which keeps the
// stored ones.
func (c *Client) GetCompany(ctx context.Context, id int64) (*CompanyDetail, error) {
	var out CompanyDetail
	if err := c.callJSON(ctx, request{method: http.MethodGet, path: companyPath(id) + "/v4", safe: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateCompany creates a company with its first branch and API user (an
// admin or a reseller only). A connection failure is not retried: a
// second create would be refused as a duplicate Identificacion and the
// first one's credentials would be lost; search for the company instead.
func (c *Client) CreateCompany(ctx context.Context, f CompanyForm) (*CreatedCompany, error) {
	ct, body, err := f.Encode()
	if err != nil {
		return nil, fmt.Errorf("facturad: create company: encode the form: %w", err)
	}
	var out CreatedCompany
	if err := c.callJSON(ctx, request{method: http.MethodPost, path: "/api/companies/v4", contentType: ct, body: body}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateCompany replaces a company's details (a full replace: send them
// all); a form with a Certificado replaces the certificate. The answer
// carries no secret (ContrasenaHacienda and Clave are "").
func (c *Client) UpdateCompany(ctx context.Context, id int64, f CompanyForm) (*UpdatedCompany, error) {
	ct, body, err := f.Encode()
	if err != nil {
		return nil, fmt.Errorf("facturad: update company: encode the form: %w", err)
	}
	var out UpdatedCompany
	if err := c.callJSON(ctx, request{method: http.MethodPut, path: companyPath(id) + "/v4", contentType: ct, body: body, safe: true}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TestConnection runs the company's connection test (POST
// /api/companies/{id}/prueba-conexion/v4, A.14): the service logs in
// afresh at the company's environment and opens its certificate, and
// sends nothing. Whatever it finds is in the answer (Token and
// Certificado are ConnectionOK or the reason; a refused login is the tax
// authority's own words); an error means the call itself failed (a
// company the caller may not read is ErrNotFound). Each call is a login
// attempt on the taxpayer's account at the tax authority: do not run it
// in a loop.
func (c *Client) TestConnection(ctx context.Context, companyID int64) (*PruebaConexion, error) {
	var out PruebaConexion
	err := c.callJSON(ctx, request{method: http.MethodPost, path: companyPath(companyID) + "/prueba-conexion/v4", safe: true}, &out)
	if err != nil {
		return nil, err
	}
	return &out, nil
}

func branchesPath(companyID int64) string { return companyPath(companyID) + "/branches" }

// ListBranches lists a company's branches.
func (c *Client) ListBranches(ctx context.Context, companyID int64) ([]Branch, error) {
	var out []Branch
	err := c.callJSON(ctx, request{method: http.MethodGet, path: branchesPath(companyID) + "/v4", safe: true}, &out)
	return out, err
}

// CreateBranch creates a branch with its first API user. A connection
// failure is not retried (a repeat would be refused on sucursal).
func (c *Client) CreateBranch(ctx context.Context, companyID int64, in BranchInput) (*CreatedBranch, error) {
	r, err := jsonRequest(http.MethodPost, branchesPath(companyID)+"/v4", in, false)
	if err != nil {
		return nil, err
	}
	var out CreatedBranch
	if err := c.callJSON(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// UpdateBranch replaces a branch's details (a full replace).
func (c *Client) UpdateBranch(ctx context.Context, companyID, branchID int64, in BranchInput) (*UpdatedBranch, error) {
	r, err := jsonRequest(http.MethodPut, branchesPath(companyID)+"/"+strconv.FormatInt(branchID, 10)+"/v4", in, true)
	if err != nil {
		return nil, err
	}
	var out UpdatedBranch
	if err := c.callJSON(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func usersPath(companyID, branchID int64) string {
	return branchesPath(companyID) + "/" + strconv.FormatInt(branchID, 10) + "/users"
}

// CreateAPIUser creates an API user of a branch (A.4) and returns its
// credentials, shown only here. A connection failure is not retried (a
// repeat would be refused on usuario).
func (c *Client) CreateAPIUser(ctx context.Context, companyID, branchID int64, usuario string) (*Credentials, error) {
	r, err := jsonRequest(http.MethodPost, usersPath(companyID, branchID)+"/v4", api.UserRequest{Usuario: usuario}, false)
	if err != nil {
		return nil, err
	}
	var out Credentials
	if err := c.callJSON(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ListAPIUsers lists a branch's API users.
func (c *Client) ListAPIUsers(ctx context.Context, companyID, branchID int64) ([]APIUser, error) {
	var out []APIUser
	err := c.callJSON(ctx, request{method: http.MethodGet, path: usersPath(companyID, branchID) + "/v4", safe: true}, &out)
	return out, err
}

// SetAPIUserActive switches an API user on or off.
func (c *Client) SetAPIUserActive(ctx context.Context, companyID, branchID, userID int64, active bool) (*APIUser, error) {
	activo := "N"
	if active {
		activo = "S"
	}
	r, err := jsonRequest(http.MethodPut, usersPath(companyID, branchID)+"/"+strconv.FormatInt(userID, 10)+"/v4", api.APIUserUpdate{Activo: activo}, true)
	if err != nil {
		return nil, err
	}
	var out APIUser
	if err := c.callJSON(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// RotateAPIToken gives an API user a new token, shown only in the answer;
// the old one stops working. A connection failure is not retried (the
// new token would be lost with the answer).
func (c *Client) RotateAPIToken(ctx context.Context, companyID, branchID, userID int64) (*Credentials, error) {
	path := usersPath(companyID, branchID) + "/" + strconv.FormatInt(userID, 10) + "/token/v4"
	var out Credentials
	if err := c.callJSON(ctx, request{method: http.MethodPost, path: path, contentType: "application/json", body: []byte("{}")}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// CreateReseller creates a reseller API user (an admin only) and returns
// its credentials, shown only here.
func (c *Client) CreateReseller(ctx context.Context, usuario string) (*Credentials, error) {
	r, err := jsonRequest(http.MethodPost, "/api/resellers/v4", api.UserRequest{Usuario: usuario}, false)
	if err != nil {
		return nil, err
	}
	var out Credentials
	if err := c.callJSON(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
