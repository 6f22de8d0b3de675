package api

// The audit log (A.14): GET /api/companies/{CompaniaId}/auditoria/v4
// answers Page[AuditEntry], newest first, with the listings' limit and
// cursor.

// AuditEntry is one change recorded in a company's audit log: when it was
// made, by whom, under which request id, to which company, what change it
// was, and the names of the fields its request carried (never their
// values).
type AuditEntry struct {
	ID         int64     `json:"id"`
	Cuando     string    `json:"cuando"`
	Usuario    AuditUser `json:"usuario"`
	RequestID  string    `json:"requestId"`
	CompaniaID int64     `json:"companiaId"`
	Accion     string    `json:"accion"`
	Campos     []string  `json:"campos"`
}

// AuditUser is who made a change: an API user by id and name, or one of
// the operator's commands (id 0, named "facturad requeue"...).
type AuditUser struct {
	ID     int64  `json:"id"`
	Nombre string `json:"nombre"`
}
