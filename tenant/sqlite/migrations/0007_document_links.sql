-- Documents that reference others (A.15, docs/design/credits-and-payments.md):
-- a credit note voiding an accepted document, a payment receipt (REP) paying
-- a credit sale, and the balance a credit sale (CondicionVenta 08 or 10)
-- opens.
--
-- document_claims holds one row per claiming document, inserted by
-- ReserveDocument in the transaction that numbers it, after the referenced
-- document's row is locked (the write transaction is exclusive) and the claims already on
-- it were checked in Go: two replicas voiding or paying one document at
-- once take turns, and never credit or pay more than it has. A claim
-- counts while its document is not rejected (estado 02); the join with
-- documents says which. amount is a decimal kept as text (summed in Go,
-- never as a float); detail is JSON: the credited quantities per line of
-- the referenced document, or a payment's tax per tax group.
CREATE TABLE document_claims (
    document_id INTEGER NOT NULL PRIMARY KEY REFERENCES documents (id),
    ref_id      INTEGER REFERENCES documents (id),
    kind        TEXT    NOT NULL CHECK (kind IN ('saldo', 'credito', 'pago')),
    amount      TEXT    NOT NULL,
    detail      TEXT    NOT NULL DEFAULT '',
    CHECK ((kind = 'saldo') = (ref_id IS NULL))
) STRICT;

CREATE INDEX document_claims_ref ON document_claims (ref_id, document_id) WHERE ref_id IS NOT NULL;
