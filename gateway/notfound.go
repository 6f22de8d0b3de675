package gateway

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/valyala/fasthttp"

	"facturad/hacienda/api"
	"facturad/hacienda/msg"
)

// notFound says what a 404 of rt did not find, in the words of the
// request: the innermost record its path names with the records around it
// (API user 7 of branch 3 of company 5), or the company its companiaId
// query names, or nothing in particular. The message is built from the
// request alone, never from what the store holds, so that a record of
// another tenant and one that does not exist are answered alike (A.1): the
// caller learns only that its credentials reach no such record, which it
// may know.
func (rt *route) notFound(rc *fasthttp.RequestCtx) msg.Message {
	has := func(name string) bool { return slices.Contains(rt.segs, "{"+name+"}") }
	param := func(name string) string {
		v, _ := rc.UserValue(name).(string)
		return echoed(v)
	}
	switch {
	case has(paramUserID):
		return msg.APIUserNotFound.With(param(paramCompanyID), param(paramBranchID), param(paramUserID))
	case has(paramWebhookID):
		return msg.WebhookNotFound.With(param(paramCompanyID), param(paramWebhookID))
	case has(paramBranchID):
		return msg.BranchNotFound.With(param(paramCompanyID), param(paramBranchID))
	case has(paramCompanyID):
		return msg.CompanyNotFound.With(param(paramCompanyID))
	case has("clave") && strings.HasPrefix(rt.pattern, "/api/received/"):
		return msg.ReceivedNotFound.With(param("clave"))
	case has("clave"):
		return msg.DocumentNotFound.With(param("clave"))
	}
	for k, v := range rc.QueryArgs().All() {
		if strings.EqualFold(string(k), api.ParamCompaniaID) && len(v) > 0 {
			return msg.CompanyNotFound.With(echoed(string(v)))
		}
	}
	return msg.NotFound.With()
}

// maxEchoed bounds what of a path or query value a message repeats.
const maxEchoed = 64

// echoed is a value of the request as a message repeats it: at most
// maxEchoed characters, valid UTF-8.
func echoed(v string) string {
	v = strings.ToValidUTF8(v, "\uFFFD")
	if utf8.RuneCountInString(v) <= maxEchoed {
		return v
	}
	return string([]rune(v)[:maxEchoed]) + "…"
}
