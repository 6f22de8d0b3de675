package gateway

import (
	"context"
	"net/http"

	"facturad/hacienda"
)

// CalculateMaxBody is the calculate call's body limit, the send call's.
const CalculateMaxBody = SendMaxBody

// CalculateRoute returns the calculate call of A.5 for Options.Routes:
// POST /api/documents/calculate/v4 computes every line amount and summary
// total of a document body with the v4.4 rules and answers
// AmountsCalculateDocumentResponse, or the 400 validation form with every
// problem at once. It stores nothing and calls no one, so any authenticated
// principal may use it.
func CalculateRoute() Route {
	return Route{
		Method:  http.MethodPost,
		Path:    "/api/documents/calculate/v4",
		MaxBody: CalculateMaxBody,
		Handle:  calculate,
	}
}

func calculate(_ context.Context, r *Request) (Reply, error) {
	req, err := hacienda.DecodeCalculateRequest(r.Body)
	if err != nil {
		return Reply{}, err
	}
	resp, err := hacienda.CalculateAmounts(req)
	if err != nil {
		return Reply{}, err
	}
	return Reply{JSON: resp}, nil
}
