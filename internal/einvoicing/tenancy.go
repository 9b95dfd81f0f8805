package einvoicing

import "github.com/denar-mk/denar/internal/auth"

// reach is auth.Principal.Reach, the one rule of what a credential reaches
// of its account (the webhooks package applies it too).
func reach(p *auth.Principal, what, environment string, companies ...string) error {
	return p.Reach(what, environment, companies...)
}
