package client_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"facturad/gateway/client"
	"facturad/tenant"
)

// TestQuotaCalls: the quota a send answer reports, the 402 beyond it as
// ErrQuota with the field and nothing available, a replay that is not
// refused, and the usage calls, their answers decoded strictly.
func TestQuotaCalls(t *testing.T) {
	ctx := testContext(t)
	admin := newAdmin(t)
	form := companyForm(nextIdent())
	two := "2"
	form.CuotaMensual = &two
	created, err := admin.CreateCompany(ctx, form)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{bodies: map[string][]byte{}}
	c, err := client.New(serviceURL, client.WithHTTPClient(&http.Client{Transport: rec}))
	if err != nil {
		t.Fatal(err)
	}
	branch := c.As(created.Credentials())

	var q client.Quota
	for i, want := range []int64{1, 0} {
		if _, err := branch.Send(ctx, invoice(fmt.Sprintf("Q-%d", i+1)), client.SendOptions{Quota: &q}); err != nil {
			t.Fatal(err)
		}
		if q != (client.Quota{Limited: true, Available: want}) {
			t.Errorf("send %d: quota %+v, want %d available", i+1, q, want)
		}
	}
	_, err = branch.Send(ctx, invoice("Q-3"), client.SendOptions{Quota: &q})
	var ae *client.Error
	if !errors.Is(err, client.ErrQuota) || !errors.As(err, &ae) || len(ae.Fields["cuotaMensual"]) != 1 || ae.Temporary() {
		t.Fatalf("beyond the quota: %v", err)
	}
	if q != (client.Quota{Limited: true, Available: 0}) {
		t.Errorf("402: quota %+v", q)
	}
	// A replay at the quota is answered.
	if d, err := branch.Send(ctx, invoice("Q-2"), client.SendOptions{Quota: &q}); err != nil || d.IDExterno != "Q-2" || !q.Limited {
		t.Errorf("replay at the quota: %+v, %v, %+v", d, err, q)
	}
	// A company without a quota: not limited.
	if _, err := newBranch(t).Send(ctx, invoice("F-1"), client.SendOptions{Quota: &q}); err != nil || q.Limited {
		t.Errorf("no quota: %+v, %v", q, err)
	}

	u, err := branch.Usage(ctx, created.CompaniaID, "")
	if err != nil || u.CompaniaID != created.CompaniaID || u.Periodo != tenant.MonthOf(time.Now()).Periodo ||
		u.Documentos.Total != 2 || u.Documentos.PorTipo["01"] != 2 {
		t.Fatalf("usage: %+v, %v", u, err)
	}
	strict(t, "usage", rec.bodies["GET /api/companies/"+itoa(created.CompaniaID)+"/uso/v4"], &client.Usage{})
	l, err := admin.Usages(ctx, "2001-01")
	if err != nil || l.Periodo != "2001-01" || len(l.Items) == 0 {
		t.Fatalf("usages: %+v, %v", l, err)
	}
	for _, it := range l.Items {
		if it.Documentos.Total != 0 {
			t.Errorf("2001-01: %+v", it)
		}
	}
	if _, err := branch.Usages(ctx, ""); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("a branch user's list: %v", err)
	}
	if _, err := admin.Usage(ctx, created.CompaniaID, "2026-13"); !errors.As(err, &ae) || !errors.Is(err, client.ErrValidation) || ae.Fields["periodo"] == nil {
		t.Errorf("a malformed periodo: %v", err)
	}
}
