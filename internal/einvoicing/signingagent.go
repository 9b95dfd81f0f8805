package einvoicing

import "time"

// SigningAgent is the public form of a signing agent: the API's answer
// and the object of the signing_agent.* events (EventResources). The
// signing room (internal/einvoicing/signing) pairs, revokes and follows
// agents.
type SigningAgent struct {
	ID          string     `json:"id" example:"agt_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"Prefix agt_."`
	Object      string     `json:"object" enum:"signing_agent" example:"signing_agent" doc:"Always signing_agent."`
	Name        string     `json:"name" example:"Сметководство — лаптоп" doc:"The name given at pairing (denar-agent pair --name), to tell agents apart."`
	Environment string     `json:"environment" enum:"sandbox,production" example:"sandbox" doc:"The environment the agent signs in."`
	CompanyIDs  []string   `json:"companyIds" doc:"The companies the agent may act for, fixed at pairing (the allow-list of the credential that created its pairing code); empty: every company of the account in the environment."`
	Online      bool       `json:"online" doc:"Reachable within the last 90 seconds."`
	LastSeenAt  *time.Time `json:"lastSeenAt" example:"2026-05-04T09:12:31Z" doc:"When the agent last reached the service (to within 15 seconds); null if it never has since pairing."`
	CreatedAt   time.Time  `json:"createdAt" example:"2026-05-04T09:03:12Z" doc:"When the agent was paired."`
	RevokedAt   *time.Time `json:"revokedAt,omitempty" doc:"When the agent was revoked; absent while it is not."`
}
