-- name: AcquireUJPSlot :one
-- Takes the signer's slot when it is free (until passed); no row when
-- another call holds it or the signer's pause since its last call runs.
INSERT INTO ujp_slots (key, holder, until) VALUES (sqlc.arg(key), sqlc.arg(holder), sqlc.arg(until))
ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, until = excluded.until
WHERE ujp_slots.until <= sqlc.arg(now)
RETURNING key;

-- name: ReleaseUJPSlot :exec
-- Ends a call: the slot stays closed until next_at (the signer's pause).
UPDATE ujp_slots SET until = sqlc.arg(next_at) WHERE key = sqlc.arg(key) AND holder = sqlc.arg(holder);

-- name: GetUJPSlot :one
SELECT * FROM ujp_slots WHERE key = sqlc.arg(key);

-- name: LatestSignedRequestForLink :one
SELECT * FROM signing_requests
WHERE link_type = sqlc.arg(link_type) AND link_id = sqlc.arg(link_id) AND state = 'signed'
ORDER BY id DESC LIMIT 1;

-- name: OpenSigningRequestForLink :one
-- A request of the link still waiting for its signer.
SELECT * FROM signing_requests
WHERE link_type = sqlc.arg(link_type) AND link_id = sqlc.arg(link_id) AND state IN ('pending', 'claimed')
  AND expires_at > sqlc.arg(now)
ORDER BY id DESC LIMIT 1;

-- name: SetCertificateUJPRegistered :exec
UPDATE signing_certificates SET ujp_registered_at = sqlc.arg(at) WHERE id = sqlc.arg(id);

-- name: SetCertificateEUJPID :exec
UPDATE signing_certificates SET eujp_id = sqlc.arg(eujp_id) WHERE id = sqlc.arg(id);

-- name: StartEInvoiceSubmission :execrows
-- queued|held → submitting, counting the attempt.
UPDATE einvoices SET status = 'submitting', submit_attempts = submit_attempts + 1, updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND status = sqlc.arg(from_status);

-- name: SetEInvoiceHeldSince :exec
UPDATE einvoices SET held_since = sqlc.arg(held_since) WHERE id = sqlc.arg(id) AND held_since IS NULL;

-- name: SetEInvoiceDeliveredAt :exec
UPDATE einvoices SET delivered_at = sqlc.arg(at) WHERE id = sqlc.arg(id);

-- name: SetEInvoiceSettledAt :exec
UPDATE einvoices SET settled_at = sqlc.arg(at) WHERE id = sqlc.arg(id) AND settled_at IS NULL;

-- name: GetEInvoiceByEUID :one
SELECT * FROM einvoices WHERE company_id = sqlc.arg(company_id) AND euid = sqlc.arg(euid);

-- name: CompaniesAwaitingUJP :many
-- Companies with documents whose next status only UJP can tell (the buyer's
-- decision, auto-acceptance, a storno or correction taking effect).
SELECT DISTINCT company_id FROM einvoices WHERE status IN ('delivered', 'registered', 'draft_at_ujp');

-- name: GetChangeCursor :one
SELECT * FROM ujp_change_cursors WHERE company_id = sqlc.arg(company_id) AND environment = sqlc.arg(environment);

-- name: SetChangeCursor :exec
INSERT INTO ujp_change_cursors (company_id, environment, polled_through, updated_at)
VALUES (sqlc.arg(company_id), sqlc.arg(environment), sqlc.arg(polled_through), sqlc.arg(updated_at))
ON CONFLICT (company_id, environment) DO UPDATE SET polled_through = excluded.polled_through, updated_at = excluded.updated_at
WHERE ujp_change_cursors.polled_through < excluded.polled_through;

-- name: PutEInvoicePDF :exec
INSERT INTO einvoice_pdfs (einvoice_id, pdf, created_at) VALUES (sqlc.arg(einvoice_id), sqlc.arg(pdf), sqlc.arg(created_at))
ON CONFLICT (einvoice_id) DO UPDATE SET pdf = excluded.pdf, created_at = excluded.created_at;

-- name: GetEInvoicePDF :one
SELECT * FROM einvoice_pdfs WHERE einvoice_id = sqlc.arg(einvoice_id);

-- name: PendingSupersede :one
-- A storno or correction of original_id still on its way to UJP.
SELECT id FROM einvoices
WHERE original_id = sqlc.arg(original_id) AND kind IN ('storno', 'correction')
  AND status IN ('validating', 'awaiting_signature', 'queued', 'submitting', 'held')
ORDER BY id LIMIT 1;

-- name: ListExpiredSigningRequests :many
-- Requests past their expiry that nobody signed or refused.
SELECT * FROM signing_requests
WHERE state IN ('pending', 'claimed') AND expires_at <= sqlc.arg(now)
ORDER BY expires_at LIMIT 500;

-- name: PurgeSignedReads :execrows
-- Finished signing requests of UJP reads (change feeds, PDFs, the inbox's
-- reads) older than before. Document and decision signatures are kept: they
-- are the record of what was issued and decided.
DELETE FROM signing_requests
WHERE link_type IN ('ujp_changes', 'einvoice_pdf', 'ujp_purchase_ids', 'ujp_purchase_payloads', 'ujp_purchase_changes',
                    'inbox_pdf', 'inbox_status') AND state IN ('signed', 'refused', 'expired')
  AND updated_at < sqlc.arg(before);

-- name: CompanyAwaitingUJP :one
-- Whether a company has documents whose next status only UJP can tell.
SELECT COUNT(*) FROM einvoices WHERE company_id = sqlc.arg(company_id) AND status IN ('delivered', 'registered', 'draft_at_ujp');
