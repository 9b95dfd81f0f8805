package einvoicing

// A company's problems with UJP that are not a document's: UJP refuses the
// caller — its user (E1010), a portal privilege (E1011), the certificate
// (E1012), the right to act for the company (E1013), or an identity header's
// value (E4021–E4023) — which only the company or the operator can set right
// in UJP's portal or here. Such a refusal never fails a document: the
// document waits (queued, retried with backoff) or the read is left for
// later, and the company carries the problem (Company.problems) until a call
// of the same kind succeeds. The pipeline room, through which every room
// calls UJP, sets and clears them (pipeline/access.go).

import (
	"encoding/json"
	"time"
)

// CompanyProblem is one of a company's problems with UJP.
type CompanyProblem struct {
	Code       string    `json:"code" enum:"ujp_access_missing,ujp_privilege_missing" example:"ujp_privilege_missing" doc:"ujp_access_missing: UJP refuses the company's signer access (its user is not registered or not authorized for the company); ujp_privilege_missing: a portal privilege is missing (see privilege)."`
	Privilege  string    `json:"privilege,omitempty" enum:"DP,RD,DA" doc:"The portal privilege missing (ujp_privilege_missing): DP for UJP's PDFs, RD for document JSON (incoming documents, looking up a send whose answer was lost), DA for archives."`
	UJPCode    string    `json:"ujpCode" doc:"UJP's error code, as UJP wrote it (E1010, E1011, E1012, E1013, E4021, E4022, E4023)."`
	Message    string    `json:"message" example:"Корисникот нема привилегија за преземање PDF документи" doc:"UJP's refusal, in its words."`
	Since      time.Time `json:"since" doc:"When UJP first refused."`
	LastSeenAt time.Time `json:"lastSeenAt" doc:"When UJP last refused."`
}

// CompanyProblems decodes a company's stored problems (none if raw is
// empty or not a list).
func CompanyProblems(raw string) []CompanyProblem {
	out := []CompanyProblem{}
	if raw != "" {
		_ = json.Unmarshal([]byte(raw), &out)
	}
	return out
}
