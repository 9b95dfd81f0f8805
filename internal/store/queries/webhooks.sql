-- Webhook endpoints, deliveries and their attempts (package
-- internal/einvoicing, webhooks*.go). Secrets are sealed before they reach
-- these queries.

-- name: CreateWebhookEndpoint :one
INSERT INTO webhook_endpoints (id, account_id, environment, url, description, event_types, company_ids,
    enabled, secret, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(environment), sqlc.arg(url), sqlc.arg(description),
    sqlc.arg(event_types), sqlc.arg(company_ids), TRUE, sqlc.arg(secret), sqlc.arg(created_at), sqlc.arg(created_at))
RETURNING *;

-- name: GetWebhookEndpoint :one
SELECT * FROM webhook_endpoints WHERE id = sqlc.arg(id) AND account_id = sqlc.arg(account_id);

-- name: GetWebhookEndpointByID :one
SELECT * FROM webhook_endpoints WHERE id = sqlc.arg(id);

-- name: ListWebhookEndpoints :many
-- Newest first; after = '' starts at the newest. all_companies and
-- allowed are the credential's allow-list as in ListEvents: a credential
-- with one sees the endpoints limited to companies (company_ids,
-- space-separated, each once) that are all in it, counted among the
-- account's companies.
SELECT * FROM webhook_endpoints
WHERE webhook_endpoints.account_id = sqlc.arg(account_id) AND webhook_endpoints.environment = sqlc.arg(environment)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR (webhook_endpoints.company_ids <> ''
           AND length(webhook_endpoints.company_ids) - length(replace(webhook_endpoints.company_ids, ' ', '')) + 1 = (
           SELECT COUNT(*) FROM companies c
           WHERE c.account_id = webhook_endpoints.account_id
             AND replace(' ' || webhook_endpoints.company_ids || ' ', ' ' || c.id || ' ', '') <> ' ' || webhook_endpoints.company_ids || ' '
             AND replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || c.id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ')))
  AND (CAST(sqlc.arg(after) AS TEXT) = '' OR webhook_endpoints.id < sqlc.arg(after))
ORDER BY webhook_endpoints.id DESC LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: CountWebhookEndpoints :one
SELECT COUNT(*) FROM webhook_endpoints WHERE account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment);

-- name: ListFanOutEndpoints :many
-- The endpoints a new event of the account and environment may go to;
-- disabled ones get it as an abandoned delivery, for recover.
SELECT id, event_types, company_ids, enabled FROM webhook_endpoints
WHERE account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment)
ORDER BY id;

-- name: UpdateWebhookEndpoint :one
UPDATE webhook_endpoints
SET url = sqlc.arg(url), description = sqlc.arg(description), event_types = sqlc.arg(event_types),
    company_ids = sqlc.arg(company_ids), updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: EnableWebhookEndpoint :execrows
-- Re-enabling starts the failure clock afresh.
UPDATE webhook_endpoints
SET enabled = TRUE, disabled_at = NULL, disabled_reason = '', failing_since = NULL, updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id) AND NOT enabled;

-- name: DisableWebhookEndpoint :execrows
UPDATE webhook_endpoints
SET enabled = FALSE, disabled_at = sqlc.arg(now), disabled_reason = sqlc.arg(reason), updated_at = sqlc.arg(now)
WHERE id = sqlc.arg(id) AND enabled;

-- name: AutoDisableWebhookEndpoint :execrows
-- Disables an endpoint that has been failing since before the cutoff; one
-- row changed means this transaction disabled it (and mails the owners).
UPDATE webhook_endpoints
SET enabled = FALSE, disabled_at = sqlc.arg(now), disabled_reason = sqlc.arg(reason), updated_at = sqlc.arg(now)
WHERE id = sqlc.arg(id) AND enabled AND failing_since IS NOT NULL AND failing_since <= sqlc.arg(cutoff);

-- name: RotateWebhookSecret :one
UPDATE webhook_endpoints
SET secret = sqlc.arg(secret), previous_secret = sqlc.arg(previous_secret),
    previous_secret_expires_at = sqlc.arg(previous_secret_expires_at), updated_at = sqlc.arg(updated_at)
WHERE id = sqlc.arg(id)
RETURNING *;

-- name: DeleteWebhookEndpoint :execrows
DELETE FROM webhook_endpoints WHERE id = sqlc.arg(id);

-- name: RecordWebhookSuccess :exec
-- Clears the failure clock. last_success_at is kept to within a second, so
-- that a busy endpoint's row is not rewritten (and locked) by every
-- delivery.
UPDATE webhook_endpoints SET last_success_at = sqlc.arg(now), failing_since = NULL
WHERE id = sqlc.arg(id)
  AND (failing_since IS NOT NULL OR last_success_at IS NULL OR last_success_at < sqlc.arg(stale_before));

-- name: RecordWebhookFailure :exec
-- Starts the failure clock unless it runs; last_failure_at to within a second.
UPDATE webhook_endpoints SET last_failure_at = sqlc.arg(now), failing_since = COALESCE(failing_since, sqlc.arg(now))
WHERE id = sqlc.arg(id)
  AND (failing_since IS NULL OR last_failure_at IS NULL OR last_failure_at < sqlc.arg(stale_before));

-- name: CreateWebhookDelivery :exec
INSERT INTO webhook_deliveries (id, account_id, environment, endpoint_id, event_id, event_type, company_id, test_body,
    state, abandoned_reason, max_attempts, next_manual, next_attempt_at, created_at, updated_at)
VALUES (sqlc.arg(id), sqlc.arg(account_id), sqlc.arg(environment), sqlc.arg(endpoint_id), sqlc.arg(event_id),
    sqlc.arg(event_type), sqlc.arg(company_id), sqlc.narg(test_body), sqlc.arg(state), sqlc.arg(abandoned_reason),
    sqlc.arg(max_attempts), sqlc.arg(next_manual), sqlc.narg(next_attempt_at), sqlc.arg(created_at), sqlc.arg(created_at));

-- name: GetWebhookDelivery :one
SELECT * FROM webhook_deliveries WHERE id = sqlc.arg(id);

-- name: GetWebhookDeliveryOf :one
SELECT * FROM webhook_deliveries
WHERE event_id = sqlc.arg(event_id) AND endpoint_id = sqlc.arg(endpoint_id) AND test_body IS NULL;

-- name: ListEventDeliveries :many
-- all_companies and allowed as in ListEvents; a test delivery has no
-- company. A credential with an allow-list sees only the deliveries to
-- endpoints it may manage (as in ListWebhookEndpoints): an account-wide
-- endpoint's deliveries, attempts and answers are not its to read.
SELECT * FROM webhook_deliveries
WHERE webhook_deliveries.event_id = sqlc.arg(event_id) AND webhook_deliveries.account_id = sqlc.arg(account_id)
  AND webhook_deliveries.environment = sqlc.arg(environment)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN)
       OR ((webhook_deliveries.company_id = ''
            OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || webhook_deliveries.company_id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ')
           AND webhook_deliveries.endpoint_id IN (
           SELECT e.id FROM webhook_endpoints e
           WHERE e.account_id = webhook_deliveries.account_id AND e.company_ids <> ''
             AND length(e.company_ids) - length(replace(e.company_ids, ' ', '')) + 1 = (
             SELECT COUNT(*) FROM companies c
             WHERE c.account_id = e.account_id
               AND replace(' ' || e.company_ids || ' ', ' ' || c.id || ' ', '') <> ' ' || e.company_ids || ' '
               AND replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || c.id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' '))))
  AND (CAST(sqlc.arg(after) AS TEXT) = '' OR webhook_deliveries.id < sqlc.arg(after))
  AND (CAST(sqlc.narg(state) AS TEXT) IS NULL OR webhook_deliveries.state = sqlc.narg(state))
  AND (CAST(sqlc.narg(status_class) AS TEXT) IS NULL OR webhook_deliveries.last_status_class = sqlc.narg(status_class))
ORDER BY webhook_deliveries.id DESC LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: ListEndpointDeliveries :many
-- all_companies and allowed as in ListEvents; a test delivery has no company.
SELECT * FROM webhook_deliveries
WHERE endpoint_id = sqlc.arg(endpoint_id) AND account_id = sqlc.arg(account_id) AND environment = sqlc.arg(environment)
  AND (CAST(sqlc.arg(all_companies) AS BOOLEAN) OR company_id = ''
       OR replace(' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ', ' ' || company_id || ' ', '') <> ' ' || CAST(sqlc.arg(allowed) AS TEXT) || ' ')
  AND (CAST(sqlc.arg(after) AS TEXT) = '' OR id < sqlc.arg(after))
  AND (CAST(sqlc.narg(state) AS TEXT) IS NULL OR state = sqlc.narg(state))
  AND (CAST(sqlc.narg(status_class) AS TEXT) IS NULL OR last_status_class = sqlc.narg(status_class))
ORDER BY id DESC LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: ListWebhookAttempts :many
SELECT * FROM webhook_attempts WHERE delivery_id = sqlc.arg(delivery_id) ORDER BY number;

-- name: CreateWebhookAttempt :exec
INSERT INTO webhook_attempts (id, delivery_id, number, trigger, started_at, duration_ms, status_code, error,
    response_body, succeeded)
VALUES (sqlc.arg(id), sqlc.arg(delivery_id), sqlc.arg(number), sqlc.arg(trigger), sqlc.arg(started_at),
    sqlc.arg(duration_ms), sqlc.narg(status_code), sqlc.arg(error), sqlc.arg(response_body), sqlc.arg(succeeded));

-- name: SetWebhookDeliveryOutcome :execrows
-- Records an attempt's outcome on its delivery; fenced by the number of
-- attempts the worker saw, so an outcome is never recorded twice.
UPDATE webhook_deliveries
SET state = sqlc.arg(state), attempts = attempts + 1, next_manual = FALSE, next_attempt_at = sqlc.narg(next_attempt_at),
    last_attempt_at = sqlc.arg(now), last_status_code = sqlc.narg(last_status_code),
    last_status_class = sqlc.arg(last_status_class), abandoned_reason = sqlc.arg(abandoned_reason), updated_at = sqlc.arg(now)
WHERE id = sqlc.arg(id) AND attempts = sqlc.arg(seen_attempts) AND state IN ('pending', 'failed');

-- name: ReopenWebhookDelivery :execrows
-- A replay or a recovery: the next attempt is due now and is manual.
UPDATE webhook_deliveries
SET state = 'pending', next_manual = TRUE, next_attempt_at = sqlc.arg(now), abandoned_reason = '', updated_at = sqlc.arg(now)
WHERE id = sqlc.arg(id);

-- name: AbandonWebhookDelivery :execrows
UPDATE webhook_deliveries
SET state = 'abandoned', next_attempt_at = NULL, abandoned_reason = sqlc.arg(reason), updated_at = sqlc.arg(now)
WHERE id = sqlc.arg(id) AND state IN ('pending', 'failed');

-- name: AbandonEndpointDeliveries :execrows
-- An endpoint was disabled: what was still waiting for it is abandoned
-- (recover re-opens it once the endpoint is enabled again).
UPDATE webhook_deliveries
SET state = 'abandoned', next_attempt_at = NULL, abandoned_reason = sqlc.arg(reason), updated_at = sqlc.arg(now)
WHERE endpoint_id = sqlc.arg(endpoint_id) AND state IN ('pending', 'failed');

-- name: ListRecoverableDeliveries :many
SELECT id FROM webhook_deliveries
WHERE endpoint_id = sqlc.arg(endpoint_id) AND state IN ('failed', 'abandoned') AND test_body IS NULL
  AND created_at >= sqlc.arg(since)
ORDER BY id LIMIT CAST(sqlc.arg(lim) AS BIGINT);

-- name: SetAccountOwners :execrows
UPDATE accounts SET owner_emails = sqlc.arg(owner_emails) WHERE id = sqlc.arg(id);

