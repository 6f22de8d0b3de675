package client_test

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"facturad/gateway/client"
)

// TestListDocuments lists a company's documents through the real gateway:
// pages and cursors, the iterator, filters, the answer's shape, and a walk
// while documents are being sent.
func TestListDocuments(t *testing.T) {
	ctx := testContext(t)
	rec := &recorder{bodies: map[string][]byte{}}
	branch := newBranch(t, client.WithHTTPClient(&http.Client{Transport: rec}))
	var sent []string // claves, in the order sent
	for i := range 7 {
		d, err := branch.Send(ctx, invoice(fmt.Sprintf("LIST-%d", i)), client.SendOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sent = append(sent, d.Clave)
	}
	// Newest first: issue times are to the second, so ties fall to the
	// order of numbering, the later first.
	want := slices.Clone(sent)
	slices.Reverse(want)

	p, err := branch.ListDocuments(ctx, client.ListQuery{Limit: 3}, "")
	if err != nil {
		t.Fatal(err)
	}
	strict(t, "list", rec.bodies["GET /api/documents/v4"], &client.DocumentPage{})
	if len(p.Items) != 3 || p.Next == "" || p.Items[0].XML != nil {
		t.Fatalf("first page: %+v", p)
	}
	var got []string
	for d, err := range branch.Documents(ctx, client.ListQuery{Limit: 2}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, d.Clave)
	}
	if !slices.Equal(got, want) {
		t.Errorf("walk:\n got %v\nwant %v", got, want)
	}

	// Filters.
	p, err = branch.ListDocuments(ctx, client.ListQuery{IDExterno: "LIST-4"}, "")
	if err != nil || len(p.Items) != 1 || p.Items[0].Clave != sent[4] || p.Next != "" {
		t.Fatalf("by id_externo: %+v, %v", p, err)
	}
	p, err = branch.ListDocuments(ctx, client.ListQuery{Receptor: "109870654", TipoDocumento: "01",
		Desde: time.Now().Add(-time.Hour), Hasta: time.Now().Add(time.Hour)}, "")
	if err != nil || len(p.Items) != 7 {
		t.Fatalf("by receptor, type and dates: %d, %v", len(p.Items), err)
	}
	p, err = branch.ListDocuments(ctx, client.ListQuery{Hasta: time.Now().Add(-time.Hour)}, "")
	if err != nil || len(p.Items) != 0 || p.Next != "" {
		t.Fatalf("before any: %+v, %v", p, err)
	}

	// A bad filter or a cursor of other filters is a 400 naming it.
	var ae *client.Error
	if _, err := branch.ListDocuments(ctx, client.ListQuery{Limit: 501}, ""); !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Fields["limit"] == nil {
		t.Errorf("limit 501: %v", err)
	}
	first, err := branch.ListDocuments(ctx, client.ListQuery{Limit: 2}, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := branch.ListDocuments(ctx, client.ListQuery{Limit: 2, Estado: client.EstadoAccepted}, first.Next); !errors.As(err, &ae) || ae.StatusCode != 400 || ae.Fields["cursor"] == nil {
		t.Errorf("a cursor of other filters: %v", err)
	}
	// An admin names the company; another company's is not found.
	admin := newAdmin(t)
	if _, err := admin.ListDocuments(ctx, client.ListQuery{}, ""); !errors.As(err, &ae) || ae.Fields["companiaId"] == nil {
		t.Errorf("admin without companiaId: %v", err)
	}
	other := newBranch(t)
	if _, err := other.ListDocuments(ctx, client.ListQuery{CompaniaID: 1 << 40}, ""); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("another company: %v", err)
	}

	// A walk while documents are being sent meets every document that
	// was there before it exactly once.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 5 {
			if _, err := branch.Send(ctx, invoice(fmt.Sprintf("DURING-%d", i)), client.SendOptions{}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	seen := map[string]int{}
	for d, err := range branch.Documents(ctx, client.ListQuery{Limit: 1}) {
		if err != nil {
			t.Fatal(err)
		}
		seen[d.Clave]++
		time.Sleep(5 * time.Millisecond)
	}
	wg.Wait()
	for _, c := range sent {
		if seen[c] != 1 {
			t.Errorf("document %s listed %d times", c, seen[c])
		}
	}
	for c, n := range seen {
		if n != 1 {
			t.Errorf("document %s listed %d times", c, n)
		}
	}
}
