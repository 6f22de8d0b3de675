// Package requestid carries the id of the API request being served in a
// context.Context, and adds it to every log line written under that
// context. The gateway puts the id in the context it hands to handlers;
// the pipeline and the tenant service pass that context down and log with
// the slog ...Context methods; the command's logger is wrapped in a
// Handler. It lives under the gateway, which mints the ids, but imports
// nothing of ours, so that every package may use it without importing the
// gateway.
package requestid

import (
	"context"
	"log/slog"
)

// Key is the log attribute the id is written under.
const Key = "request_id"

type ctxKey struct{}

// NewContext returns a copy of ctx that carries the request id id.
func NewContext(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// FromContext returns the request id ctx carries, or "" when none.
func FromContext(ctx context.Context) string {
	if ctx == nil {
		return ""
	}
	id, _ := ctx.Value(ctxKey{}).(string)
	return id
}

// Handler is a slog.Handler that adds the request id of the context a
// line is logged with (see FromContext) under Key, unless the line names
// one itself. Lines logged without a context, or under a context with no
// request id, pass through unchanged.
type Handler struct {
	next slog.Handler
}

// NewHandler wraps next.
func NewHandler(next slog.Handler) *Handler {
	return &Handler{next: next}
}

// Enabled reports whether next handles lines of level l.
func (h *Handler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

// Handle adds the request id to r and passes it on.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	if id := FromContext(ctx); id != "" && !hasKey(r) {
		r.AddAttrs(slog.String(Key, id))
	}
	return h.next.Handle(ctx, r)
}

// WithAttrs returns a Handler over next.WithAttrs(attrs).
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &Handler{next: h.next.WithAttrs(attrs)}
}

// WithGroup returns a Handler over next.WithGroup(name); the request id
// of a line then lands in that group.
func (h *Handler) WithGroup(name string) slog.Handler {
	return &Handler{next: h.next.WithGroup(name)}
}

func hasKey(r slog.Record) bool {
	found := false
	r.Attrs(func(a slog.Attr) bool {
		found = a.Key == Key
		return !found
	})
	return found
}
