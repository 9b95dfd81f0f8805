package denar

import (
	"errors"
	"time"

	"github.com/denar-mk/denar/sdk/webhook"
)

// WebhookSignatureHeader is the header of a webhook delivery that carries
// its signature.
const WebhookSignatureHeader = webhook.Header

// Errors of VerifySignature, as errors.Is finds them.
var (
	ErrWebhookMalformed = webhook.ErrMalformed
	ErrWebhookTimestamp = webhook.ErrTimestamp
	ErrWebhookSignature = webhook.ErrSignature
)

// VerifySignature checks a webhook delivery: header (Service-Signature)
// must sign rawBody, the request body exactly as received, with one of
// secrets (during the 24 hours after a rotation, keep both), at a time
// within tolerance of the clock (0: 300 s). Verify before parsing the
// body.
func VerifySignature(rawBody []byte, header string, secrets []string, tolerance time.Duration) error {
	return verifyAt(rawBody, header, secrets, tolerance, time.Now())
}

func verifyAt(rawBody []byte, header string, secrets []string, tolerance time.Duration, now time.Time) error {
	err := ErrWebhookSignature
	for _, s := range secrets {
		e := webhook.Verify(rawBody, header, s, tolerance, now)
		if e == nil {
			return nil
		}
		if !errors.Is(e, ErrWebhookSignature) {
			return e
		}
		err = e
	}
	return err
}
