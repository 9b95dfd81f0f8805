-- name: EnsureUJPSlot :exec
-- The user's slot, free since long ago, unless it exists.
INSERT INTO ujp_slots (key, holder, until) VALUES (sqlc.arg(key), '', sqlc.arg(until))
ON CONFLICT (key) DO NOTHING;

-- name: PutUJPWaiter :exec
-- A waiter for a turn of key says it is still waiting (seen_at), keeping
-- the moment it started waiting (since) from its first ask.
INSERT INTO ujp_waiters (key, waiter, priority, since, seen_at)
VALUES (sqlc.arg(key), sqlc.arg(waiter), sqlc.arg(priority), sqlc.arg(since), sqlc.arg(seen_at))
ON CONFLICT (key, waiter) DO UPDATE SET priority = excluded.priority, seen_at = excluded.seen_at;

-- name: GetUJPWaiter :one
SELECT * FROM ujp_waiters WHERE key = sqlc.arg(key) AND waiter = sqlc.arg(waiter);

-- name: LockUJPSlot :exec
-- Locks the user's slot for the rest of the transaction (the row on
-- PostgreSQL, the database on SQLite), so that the turn taken or started
-- next is stamped with the time it is really taken.
UPDATE ujp_slots SET holder = holder WHERE key = sqlc.arg(key);

-- name: TakeUJPTurn :execrows
-- Takes the user's turn when it is due and no waiter still waiting (seen
-- after fresh_after) goes first: a higher priority; or the same priority
-- and waiting since earlier (then the smaller waiter name). The next turn
-- is then next_at.
UPDATE ujp_slots SET until = sqlc.arg(next_at), holder = sqlc.arg(waiter)
WHERE ujp_slots.key = sqlc.arg(key) AND ujp_slots.until <= sqlc.arg(now)
  AND NOT EXISTS (
    SELECT 1 FROM ujp_waiters w
    WHERE w.key = sqlc.arg(key) AND w.waiter <> sqlc.arg(waiter) AND w.seen_at > sqlc.arg(fresh_after)
      AND (w.priority > sqlc.arg(priority)
        OR (w.priority = sqlc.arg(priority)
          AND (w.since < sqlc.arg(since) OR (w.since = sqlc.arg(since) AND w.waiter < sqlc.arg(waiter))))));

-- name: DeleteUJPWaiter :exec
DELETE FROM ujp_waiters WHERE key = sqlc.arg(key) AND waiter = sqlc.arg(waiter);

-- name: PurgeUJPWaiters :exec
-- Waiters gone for good (a process that died waiting, a job discarded).
DELETE FROM ujp_waiters WHERE key = sqlc.arg(key) AND seen_at < sqlc.arg(before);

-- name: UJPWaitersAhead :one
-- How many fresh waiters go before one of priority and since.
SELECT COUNT(*) FROM ujp_waiters w
WHERE w.key = sqlc.arg(key) AND w.waiter <> sqlc.arg(waiter) AND w.seen_at > sqlc.arg(fresh_after)
  AND (w.priority > sqlc.arg(priority) OR (w.priority = sqlc.arg(priority) AND w.since < sqlc.arg(since)));

-- name: DeferUJPSlot :exec
-- Pushes the user's next turn to at (UJP's Retry-After), never earlier.
UPDATE ujp_slots SET until = sqlc.arg(at) WHERE key = sqlc.arg(key) AND until < sqlc.arg(at);

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
-- A storno or correction of original_id on its way to UJP, or at UJP while
-- the original has not moved yet (UJP reports the original's 07 or 09, and
-- may do so only once the buyer confirms a storno); one that failed, was
-- found invalid, or was rejected by the buyer leaves the original as it is.
SELECT e.id FROM einvoices e
JOIN einvoices o ON o.id = e.original_id
WHERE e.original_id = sqlc.arg(original_id) AND e.kind IN ('storno', 'correction')
  AND e.status NOT IN ('invalid', 'failed', 'rejected')
  AND o.status NOT IN ('cancelled_by_storno', 'corrected')
ORDER BY e.id LIMIT 1;

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
                    'inbox_pdf', 'inbox_status', 'ujp_sales_lookup', 'ujp_sales_lookup_payloads')
  AND state IN ('signed', 'refused', 'expired')
  AND updated_at < sqlc.arg(before);

-- name: CompanyAwaitingUJP :one
-- Whether a company has documents whose next status only UJP can tell.
SELECT COUNT(*) FROM einvoices WHERE company_id = sqlc.arg(company_id) AND status IN ('delivered', 'registered', 'draft_at_ujp');

-- name: SetEInvoiceSendUnknown :exec
-- A send got no answer (or UJP's E1023 without the EUID): UJP may hold the
-- document. NULL once UJP's records were read.
UPDATE einvoices SET send_unknown_since = sqlc.narg(since) WHERE id = sqlc.arg(id);

-- name: GetCompanyUJPProblems :one
SELECT ujp_problems FROM companies WHERE id = sqlc.arg(id);

-- name: SetCompanyUJPProblems :exec
UPDATE companies SET ujp_problems = sqlc.arg(problems) WHERE id = sqlc.arg(id);

-- name: ListQueuedEInvoiceIDs :many
-- A company's documents waiting to be sent.
SELECT id FROM einvoices WHERE company_id = sqlc.arg(company_id) AND status = 'queued' ORDER BY id;

-- name: StartUJPSlot :exec
-- The call of a turn taken earlier starts now: the next turn is at next_at,
-- replacing the hold the taker put on the slot.
UPDATE ujp_slots SET until = sqlc.arg(next_at), holder = '' WHERE key = sqlc.arg(key);

-- name: HoldUJPSlot :exec
-- A turn taken ahead of its call holds the next one back until its call
-- starts (StartUJPSlot), or until lapses.
UPDATE ujp_slots SET until = sqlc.arg(until), holder = sqlc.arg(holder) WHERE key = sqlc.arg(key);
