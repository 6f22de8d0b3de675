package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"

	"facturad/tenant"
)

// The operator's commands that change data (requeue, requeue-emails,
// admin-reset) record each change in the audit log (A.14) as the API's
// routes do: the actor is the command (user id 0, its name), the request
// id one of its own ("cli-" and 16 hex digits), the fields the names of
// the flags that chose what to change, or of what was changed.

// auditRecorder appends an entry to the audit log (*tenant.Service, or a
// store through storeAudit).
type auditRecorder interface {
	RecordAudit(ctx context.Context, e tenant.AuditEntry) error
}

// storeAudit records into a store opened without the service's keys.
type storeAudit struct{ st tenant.AuditStore }

func (s storeAudit) RecordAudit(ctx context.Context, e tenant.AuditEntry) error {
	return tenant.RecordAudit(ctx, s.st, e)
}

// recordCommand records a change command made to company (0: the
// platform's). The change is made by then: a failure to record does not
// fail the command (it would be run again); it is logged at ERROR with
// everything the entry held, for the operator to keep.
func recordCommand(ctx context.Context, rec auditRecorder, log *slog.Logger, command string, company int64, action string, fields ...string) {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	e := tenant.AuditEntry{
		Username: "facturad " + command, RequestID: "cli-" + hex.EncodeToString(b[:]),
		CompanyID: company, Action: action, Fields: fields,
	}
	if err := rec.RecordAudit(ctx, e); err != nil {
		log.Error("audit: the change was made but its audit entry could not be recorded",
			"request_id", e.RequestID, "action", e.Action, "company", e.CompanyID, "user", e.Username, "fields", e.Fields, "err", err)
	}
}
