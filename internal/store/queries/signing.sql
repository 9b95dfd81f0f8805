-- name: CreatePairingCode :exec
INSERT INTO agent_pairing_codes (code_hash, account_id, environment, company_ids, created_at, expires_at)
VALUES (sqlc.arg(code_hash), sqlc.arg(account_id), sqlc.arg(environment), sqlc.arg(company_ids), sqlc.arg(created_at), sqlc.arg(expires_at));

-- name: UsePairingCode :one
UPDATE agent_pairing_codes SET used_at = sqlc.arg(now)
WHERE code_hash = sqlc.arg(code_hash) AND used_at IS NULL AND expires_at > sqlc.arg(now)
RETURNING *;

-- name: CreateSigningAgent :one
INSERT INTO signing_agents (id, account_id, environment, name, secret_hash, company_ids, created_at)
VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(environment), sqlc.arg(name), sqlc.arg(secret_hash), sqlc.arg(company_ids),
        sqlc.arg(created_at))
RETURNING *;

-- name: GetSigningAgent :one
SELECT * FROM signing_agents WHERE id = sqlc.arg(id);

-- name: ListSigningAgents :many
-- Every agent, for denar admin agent list.
SELECT * FROM signing_agents ORDER BY account_id, id;

-- name: RevokeSigningAgent :one
-- Revokes an agent once; last_seen_at is cleared so signerReady turns
-- false at once.
UPDATE signing_agents SET revoked_at = sqlc.arg(now), last_seen_at = NULL
WHERE id = sqlc.arg(id) AND revoked_at IS NULL
RETURNING *;

-- name: ReleaseAgentClaims :execrows
-- A revoked agent's unfinished claims go back to pending, for another
-- agent of the company to claim (which issues the header again for it).
UPDATE signing_requests SET state = 'pending', claimed_by = '', updated_at = sqlc.arg(now)
WHERE state = 'claimed' AND claimed_by = sqlc.arg(agent_id);

-- name: TouchSigningAgent :exec
UPDATE signing_agents SET last_seen_at = sqlc.arg(now) WHERE id = sqlc.arg(id);

-- name: CreateSigningCertificate :one
INSERT INTO signing_certificates (id, agent_id, company_id, der, serial, subject, not_before, not_after, created_at)
VALUES (sqlc.arg(id), sqlc.arg(agent_id), sqlc.arg(company_id), sqlc.arg(der), sqlc.arg(serial), sqlc.arg(subject),
        sqlc.arg(not_before), sqlc.arg(not_after), sqlc.arg(created_at))
RETURNING *;

-- name: CurrentSigningCertificate :one
-- The newest certificate of a company valid at now whose agent is not
-- revoked.
SELECT c.* FROM signing_certificates c JOIN signing_agents a ON a.id = c.agent_id
WHERE c.company_id = sqlc.arg(company_id) AND c.not_before <= sqlc.arg(now) AND c.not_after > sqlc.arg(now)
  AND a.revoked_at IS NULL
ORDER BY c.created_at DESC, c.id DESC LIMIT 1;

-- name: GetSigningCertificate :one
SELECT * FROM signing_certificates WHERE id = sqlc.arg(id);

-- name: CompanySignerReady :one
-- A valid certificate whose agent is not revoked and was seen since seen_after.
SELECT COUNT(*) FROM signing_certificates c JOIN signing_agents a ON a.id = c.agent_id
WHERE c.company_id = sqlc.arg(company_id) AND c.not_before <= sqlc.arg(now) AND c.not_after > sqlc.arg(now)
  AND a.revoked_at IS NULL AND a.last_seen_at >= sqlc.arg(seen_after);

-- name: CreateSigningRequest :one
INSERT INTO signing_requests (id, account_id, company_id, certificate_id, purpose, state, protected_header, payload,
                              link_type, link_id, expires_at, created_at, updated_at, summary)
VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(company_id), sqlc.arg(certificate_id), sqlc.arg(purpose), 'pending',
        sqlc.arg(protected_header), sqlc.arg(payload), sqlc.arg(link_type), sqlc.arg(link_id),
        sqlc.arg(expires_at), sqlc.arg(created_at), sqlc.arg(created_at), sqlc.arg(summary))
RETURNING *;

-- name: InsertSigningRequest :exec
-- CreateSigningRequest for a caller that holds every value of the row and
-- needs none back.
INSERT INTO signing_requests (id, account_id, company_id, certificate_id, purpose, state, protected_header, payload,
                              link_type, link_id, expires_at, created_at, updated_at, summary)
VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(company_id), sqlc.arg(certificate_id), sqlc.arg(purpose), 'pending',
        sqlc.arg(protected_header), sqlc.arg(payload), sqlc.arg(link_type), sqlc.arg(link_id),
        sqlc.arg(expires_at), sqlc.arg(created_at), sqlc.arg(created_at), sqlc.arg(summary));

-- name: GetSigningRequest :one
SELECT * FROM signing_requests WHERE id = sqlc.arg(id);

-- name: GetSigningRequestInReach :one
-- A signing request within the credential's reach (tenancy.sql); its
-- environment is its company's.
SELECT r.* FROM signing_requests r JOIN companies c ON c.id = r.company_id
WHERE r.id = sqlc.arg(id) AND r.account_id = sqlc.arg(account_id) AND c.environment = sqlc.arg(environment)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || r.company_id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ');

-- name: ListSigningRequests :many
SELECT r.* FROM signing_requests r JOIN companies c ON c.id = r.company_id
WHERE r.account_id = sqlc.arg(account_id) AND c.environment = sqlc.arg(environment)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || r.company_id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ')
  AND (CAST(sqlc.arg(state) AS TEXT) = '' OR r.state = CAST(sqlc.arg(state) AS TEXT))
  AND (CAST(sqlc.arg(company_id) AS TEXT) = '' OR r.company_id = CAST(sqlc.arg(company_id) AS TEXT))
  AND r.id > sqlc.arg(after_id)
ORDER BY r.id LIMIT sqlc.arg(lim);

-- name: AgentCompanies :many
-- Companies for which an agent holds a certificate, for its events.
SELECT DISTINCT company_id FROM signing_certificates WHERE agent_id = sqlc.arg(agent_id) ORDER BY company_id;

-- name: ListAgentPendingRequests :many
-- Requests an agent may sign: pending ones of every company for which it
-- holds a valid certificate (several agents of one company all see them;
-- the first claim wins), plus those it claimed and has not finished; both
-- within the agent's scope (its allow-list, tenancy.sql), whatever
-- certificates it holds.
SELECT r.* FROM signing_requests r
WHERE r.state = 'pending' AND r.expires_at > sqlc.arg(now)
  AND r.company_id IN (SELECT c.company_id FROM signing_certificates c
                       WHERE c.agent_id = sqlc.arg(agent_id) AND c.not_before <= sqlc.arg(now) AND c.not_after > sqlc.arg(now))
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || r.company_id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ')
UNION ALL
SELECT r.* FROM signing_requests r
WHERE r.state = 'claimed' AND r.claimed_by = sqlc.arg(agent_id) AND r.expires_at > sqlc.arg(now)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || r.company_id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ')
ORDER BY id LIMIT sqlc.arg(lim);

-- name: AgentCertificate :one
-- The agent's newest certificate for a company valid at now.
SELECT * FROM signing_certificates
WHERE agent_id = sqlc.arg(agent_id) AND company_id = sqlc.arg(company_id)
  AND not_before <= sqlc.arg(now) AND not_after > sqlc.arg(now)
ORDER BY created_at DESC, id DESC LIMIT 1;

-- name: ClaimSigningRequest :execrows
-- The claimer signs with its own certificate: the request's header is
-- issued again for it (the payload never changes).
UPDATE signing_requests SET state = 'claimed', claimed_by = sqlc.arg(claimed_by), certificate_id = sqlc.arg(certificate_id),
    protected_header = sqlc.arg(protected_header), updated_at = sqlc.arg(now)
WHERE id = sqlc.arg(id) AND state = 'pending';

-- name: FinishSigningRequest :execrows
-- Moves a pending or claimed request to signed/refused/expired exactly once;
-- the state guard is what makes a second signature impossible.
UPDATE signing_requests SET state = sqlc.arg(state), jws = sqlc.arg(jws), refusal_reason = sqlc.arg(refusal_reason),
    refusal_message = sqlc.arg(refusal_message), replaced_by = sqlc.arg(replaced_by), updated_at = sqlc.arg(now)
WHERE id = sqlc.arg(id) AND state IN ('pending', 'claimed');

-- name: GetAccountCompanySigner :one
-- A company within the credential's reach (tenancy.sql) and, in the same read, the id, DER and EUJP id
-- of its current certificate as CurrentSigningCertificate chooses it (NULL when it
-- has none): what issuing a document needs before its transaction.
SELECT sqlc.embed(co), c.id AS cert_id, c.der AS cert_der, c.eujp_id AS cert_eujp_id
FROM companies co
LEFT JOIN signing_certificates c ON c.id = (
  SELECT c2.id FROM signing_certificates c2 JOIN signing_agents a ON a.id = c2.agent_id
  WHERE c2.company_id = co.id AND c2.not_before <= sqlc.arg(now) AND c2.not_after > sqlc.arg(now)
    AND a.revoked_at IS NULL
  ORDER BY c2.created_at DESC, c2.id DESC LIMIT 1)
WHERE co.id = sqlc.arg(id) AND co.account_id = sqlc.arg(account_id) AND co.environment = sqlc.arg(environment)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || co.id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ');
