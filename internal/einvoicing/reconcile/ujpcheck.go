package reconcile

// The go-live check (`denar ujp check`): before the first real invoice, an
// operator proves the connection to UJP line by line: UJP's clock, the
// identities it accepts, its code lists against this build's, the
// company's registry entry, and (with a signature of the company's agent)
// its certificate and portal privileges; then the rate budget and queue of
// each UJP user. Each line that does not hold says what to do. A run is
// stored, per company when one is checked, and the dashboard shows the
// last.

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/denar-mk/denar"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/store"
	"github.com/denar-mk/denar/internal/store/dbq"
	"github.com/denar-mk/denar/internal/ujp"
)

// States of a check line. Only ok and skipped hold: a warning fails the
// check too (its exit status), as something the operator must look at.
const (
	CheckOK      = "ok"
	CheckWarn    = "warn"
	CheckFail    = "fail"
	CheckSkipped = "skipped"
)

// Names of the check lines, in the order they run.
const (
	LineServerTime  = "server_time"
	LineIdentity    = "identity"
	LineCodeLists   = "code_lists"
	LineRegistry    = "registry"
	LineCertificate = "certificate"
	LinePrivileges  = "privileges"
	LineRateBudget  = "rate_budget"
)

// skewWarning is the clock skew above which the check warns: UJP refuses a
// signature whose requestTimestamp is more than 5 minutes off its clock
// (api-specification.txt:112-120, E40122).
const skewWarning = 30 * time.Second

// probeEUID names a document no one issued: a privileged read of it is
// judged on the privilege first (E1011 without it), then answers "not
// found" (E4008), so it probes a privilege without reading anything.
const probeEUID = "00000000-0000-7000-8000-000000000000"

// UJPCheck is what `denar ujp check` checks.
type UJPCheck struct {
	Environment string
	// CompanyID is the company whose registry entry, signer identity and
	// (with Sign) certificate and privileges are checked; "" checks the
	// operator's connection only.
	CompanyID string
	// Sign asks the company's agent for signatures (read-only requests an
	// agent signs unattended) and waits up to SignWait for them.
	Sign     bool
	SignWait time.Duration
	// Poll is how often the store is looked at for the signatures.
	Poll time.Duration
}

// CheckLine is one line of a check.
type CheckLine struct {
	Name   string `json:"name"`
	State  string `json:"state"`
	Detail string `json:"detail"`
	// Action says what to do when the line does not hold.
	Action string `json:"action,omitempty"`
}

// UJPCheckReport is one run of the check.
type UJPCheckReport struct {
	ID          string      `json:"id"`
	Environment string      `json:"environment"`
	CompanyID   string      `json:"companyId,omitempty"`
	OK          bool        `json:"ok"`
	Lines       []CheckLine `json:"lines"`
	CheckedAt   time.Time   `json:"checkedAt"`
}

// Line returns the line named name (zero when absent).
func (r UJPCheckReport) Line(name string) CheckLine {
	for _, l := range r.Lines {
		if l.Name == name {
			return l
		}
	}
	return CheckLine{}
}

// CheckUJP runs the go-live check and stores its report. Failures of UJP
// are lines, not errors; an error is the store failing, or a command that
// names no known environment or company.
func (s *Service) CheckUJP(ctx context.Context, cmd UJPCheck) (UJPCheckReport, error) {
	rep := UJPCheckReport{ID: denar.NewID("uck"), Environment: cmd.Environment, CompanyID: cmd.CompanyID}
	gw, ok := s.gateways[cmd.Environment]
	if !ok {
		return rep, fmt.Errorf("no UJP endpoint is configured for %s (DENAR_UJP_PRODUCTION_URL, DENAR_UJP_SANDBOX_BACKEND)", cmd.Environment)
	}
	op := s.operators[cmd.Environment]
	var co *dbq.Company
	if cmd.CompanyID != "" {
		c, err := s.db.Reader().GetCompany(ctx, cmd.CompanyID)
		if errors.Is(err, sql.ErrNoRows) {
			return rep, fmt.Errorf("no company %s", cmd.CompanyID)
		}
		if err != nil {
			return rep, err
		}
		if c.Environment != cmd.Environment {
			return rep, fmt.Errorf("company %s is in %s, not %s", c.ID, c.Environment, cmd.Environment)
		}
		co = &c
	}
	// Calls as no signer go as the operator's user; for a company, with
	// X-EDB the company's (as the registry look-ups do).
	as := op
	if co != nil {
		as.EDB = co.TaxNumber
	}
	add := func(l CheckLine) { rep.Lines = append(rep.Lines, l) }

	add(s.checkServerTime(ctx, gw, as))
	add(s.checkIdentity(ctx, gw, as, co))
	add(s.checkCodeLists(ctx, gw, as))
	add(s.checkRegistry(ctx, co))
	cert, priv := s.checkSigned(ctx, gw, cmd, co)
	add(cert)
	add(priv)
	add(s.checkRate(ctx, cmd.Environment))

	rep.OK = true
	for _, l := range rep.Lines {
		if l.State != CheckOK && l.State != CheckSkipped {
			rep.OK = false
		}
	}
	rep.CheckedAt = s.db.Now().UTC()
	lines, err := json.Marshal(rep.Lines)
	if err != nil {
		return rep, err
	}
	err = s.db.Writer().InsertUJPCheck(ctx, dbq.InsertUJPCheckParams{ID: rep.ID, Environment: rep.Environment,
		CompanyID: rep.CompanyID, Ok: rep.OK, Lines: string(lines), CreatedAt: rep.CheckedAt})
	if err != nil {
		return rep, fmt.Errorf("store the check: %w", err)
	}
	return rep, nil
}

// againWhenBusy makes call again, up to five times, while UJP answers
// that the user's rate was exceeded (E4007: another process's call of the
// same user came first) or the user had no turn soon: the check reports
// the connection, not the load of the moment. A signed read may be sent
// again: its requestTimestamp stays valid for 5 minutes.
func againWhenBusy(ctx context.Context, call func() error) error {
	var err error
	for range 5 {
		if err = call(); err == nil {
			return nil
		}
		var rl *ujp.RateLimitedError
		var b *ujp.BusyError
		var wait time.Duration
		switch {
		case errors.As(err, &rl):
			wait = rl.RetryAfter
		case errors.As(err, &b):
			wait = b.RetryIn
		default:
			return err
		}
		t := time.NewTimer(min(max(wait, 100*time.Millisecond), 5*time.Second))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
	return err
}

// refusal describes err for a line: UJP's code and message, or why no
// answer came.
func refusal(err error) string {
	var r *ujp.RejectedError
	if errors.As(err, &r) {
		return fmt.Sprintf("UJP refused: %s %s", r.Code, r.Message)
	}
	return err.Error()
}

func (s *Service) checkServerTime(ctx context.Context, gw ujp.Gateway, as ujp.Identity) CheckLine {
	l := CheckLine{Name: LineServerTime}
	before := time.Now()
	var t time.Time
	err := againWhenBusy(ctx, func() (err error) {
		before = time.Now()
		t, err = gw.ServerTime(ujp.WithPriority(ctx, ujp.PriorityRead), as)
		return err
	})
	after := time.Now()
	if err != nil {
		l.State, l.Detail = CheckFail, "UJP's server time could not be read: "+refusal(err)
		l.Action = "Check that UJP's address is right (DENAR_UJP_PRODUCTION_URL or DENAR_UJP_SANDBOX_URL) and reachable from this host."
		var r *ujp.RejectedError
		if errors.As(err, &r) {
			l.Action = "UJP answered but refused the call; see the identity line."
		}
		return l
	}
	// UJP's timestamps have whole seconds (truncated): its clock was half
	// a second past t on average, against the middle of the call here.
	local := before.Add(after.Sub(before) / 2)
	skew := t.Add(500 * time.Millisecond).Sub(local).Round(time.Second)
	abs := skew
	if abs < 0 {
		abs = -abs
	}
	l.Detail = fmt.Sprintf("UJP's clock reads %s; this host's clock is %s (a call took %s)",
		t.UTC().Format(time.RFC3339), skewText(-skew), after.Sub(before).Round(time.Millisecond))
	switch {
	case abs > skewWarning:
		l.State = CheckWarn
		if abs > 5*time.Minute {
			l.State = CheckFail
		}
		l.Action = "Synchronise this host's clock (NTP, e.g. timedatectl set-ntp true): UJP refuses a signature whose requestTimestamp is more than 5 minutes off its clock (E40122)."
	default:
		l.State = CheckOK
	}
	return l
}

func skewText(d time.Duration) string {
	switch {
	case d > 0:
		return d.String() + " ahead of it"
	case d < 0:
		return (-d).String() + " behind it"
	}
	return "in step with it"
}

func (s *Service) checkIdentity(ctx context.Context, gw ujp.Gateway, op ujp.Identity, co *dbq.Company) CheckLine {
	l := CheckLine{Name: LineIdentity, State: CheckOK}
	who := []struct {
		role string
		id   ujp.Identity
		fix  string
	}{{"the operator", op, "Set DENAR_UJP_USER to the operator's EUJP id registered in UJP's portal (and DENAR_UJP_EDB to its tax number)."}}
	var ok, bad, acts []string
	if co != nil {
		cert, err := s.db.Reader().CurrentSigningCertificate(ctx, dbq.CurrentSigningCertificateParams{CompanyID: co.ID, Now: s.db.Now()})
		switch {
		case errors.Is(err, sql.ErrNoRows):
			bad = append(bad, "the company's signer: the company has no valid signing certificate")
			acts = append(acts, "Pair the company's signing agent and register its certificate (denar-agent), then check again.")
		case err != nil:
			bad = append(bad, "the company's signer: "+err.Error())
		case cert.EujpID == "":
			bad = append(bad, "the company's signer: its certificate names no EUJP user")
			acts = append(acts, "Register the certificate again with the EUJP id of the person it belongs to (the agent asks for it).")
		default:
			who = append(who, struct {
				role string
				id   ujp.Identity
				fix  string
			}{"the company's signer", ujp.Identity{EUJPID: cert.EujpID, EDB: co.TaxNumber},
				"Register the signer's user " + cert.EujpID + " in UJP's portal for company " + co.TaxNumber + ", or register the agent's certificate with the EUJP id UJP knows."})
		}
	}
	for _, w := range who {
		err := againWhenBusy(ctx, func() error {
			_, err := gw.ServerTime(ujp.WithPriority(ctx, ujp.PriorityRead), w.id)
			return err
		})
		desc := fmt.Sprintf("%s (X-EUJP-ID %s, X-EDB %s)", w.role, w.id.EUJPID, w.id.EDB)
		switch {
		case err == nil:
			ok = append(ok, desc)
		case ujp.AccessProblem(err) != nil || isHeaderRefusal(err):
			bad = append(bad, desc+": "+refusal(err))
			acts = append(acts, w.fix)
		default:
			bad = append(bad, desc+": not checked, "+refusal(err))
			acts = append(acts, "UJP did not answer; see the server_time line and check again.")
		}
	}
	if len(bad) > 0 {
		l.State, l.Action = CheckFail, strings.Join(acts, " ")
		l.Detail = "not accepted: " + strings.Join(bad, "; ")
		if len(ok) > 0 {
			l.Detail += "; accepted: " + strings.Join(ok, "; ")
		}
		return l
	}
	l.Detail = "accepted: " + strings.Join(ok, "; ")
	return l
}

// isHeaderRefusal is UJP refusing an identity header as missing or
// malformed (E4016, E4022, E4023).
func isHeaderRefusal(err error) bool {
	var r *ujp.RejectedError
	return errors.As(err, &r) && (r.Code == "E4016" || r.Code == "E4022" || r.Code == "E4023")
}

func (s *Service) checkCodeLists(ctx context.Context, gw ujp.Gateway, as ujp.Identity) CheckLine {
	l := CheckLine{Name: LineCodeLists}
	var fetched *ujpdoc.Codebooks
	err := againWhenBusy(ctx, func() (err error) {
		fetched, err = gw.Codebooks(ujp.WithPriority(ctx, ujp.PriorityCodeList), as)
		return err
	})
	if err != nil {
		l.State, l.Detail = CheckFail, "UJP's code lists could not be read: "+refusal(err)
		l.Action = "See the server_time and identity lines, then check again."
		return l
	}
	snap := ujpdoc.Snapshot()
	merged, _ := ujp.MergeCodebooks(snap, fetched)
	diff := ujpdoc.Diff(snap, merged)
	if len(diff) == 0 {
		l.State, l.Detail = CheckOK, fmt.Sprintf("fetched; the %d lists equal this build's snapshot", len(ujpdoc.DiffLists))
		return l
	}
	l.State = CheckFail
	l.Detail = "fetched; UJP's lists differ from this build's snapshot: " + diffSummary(diff)
	l.Action = "Validation follows UJP's lists (the code-list job records them and sends codelists.changed). Review the difference (GET /v1/codebooks), update the codes your ERP maps to (removed or renamed ones), and upgrade denar when a release carries the new snapshot."
	return l
}

// diffSummary is a one-line account of a code-list difference: per list,
// +added, −removed and ~changed codes.
func diffSummary(diff []ujpdoc.ListChange) string {
	var parts []string
	for _, c := range diff {
		var codes []string
		for _, e := range c.Added {
			codes = append(codes, "+"+e.Code)
		}
		for _, e := range c.Removed {
			codes = append(codes, "-"+e.Code)
		}
		for _, e := range c.Changed {
			codes = append(codes, "~"+e.Code)
		}
		parts = append(parts, c.List+" "+strings.Join(codes, " "))
	}
	return strings.Join(parts, "; ")
}

func (s *Service) checkRegistry(ctx context.Context, co *dbq.Company) CheckLine {
	l := CheckLine{Name: LineRegistry}
	if co == nil {
		l.State, l.Detail = CheckSkipped, "no company given (--company)"
		return l
	}
	if s.registry == nil {
		l.State, l.Detail = CheckFail, "no registry is configured"
		return l
	}
	rc, err := s.registry.LookupCompany(ctx, co.Environment, co.TaxNumber, co.TaxNumber)
	if errors.Is(err, einvoicing.ErrRegistryNotFound) {
		l.State = CheckFail
		l.Detail = "UJP's registry has no company with tax number " + co.TaxNumber
		l.Action = "Check the company's tax number (EDB); UJP's registry lists a company once it is registered for VAT or e-invoicing."
		return l
	}
	if err != nil {
		l.State, l.Detail = CheckFail, "the registry could not be read: "+refusal(err)
		l.Action = "See the server_time and identity lines, then check again."
		return l
	}
	a := rc.Address
	l.State = CheckOK
	l.Detail = fmt.Sprintf("%s, %s %s, %s %s", rc.Name, a.Street, a.Number, a.Zip, a.City)
	if rc.Name != co.Name {
		l.State = CheckWarn
		l.Detail += fmt.Sprintf(" (denar has the name %q)", co.Name)
		l.Action = "Documents must carry the seller's name exactly as UJP's registry has it: refresh the company's registry data in denar."
	}
	return l
}

// checkSigned is the certificate and privileges lines: three signed reads
// of a document no one issued, one per portal privilege (PDF: DP, payload:
// RD, ASiC archive: DA), signed by the company's agent.
func (s *Service) checkSigned(ctx context.Context, gw ujp.Gateway, cmd UJPCheck, co *dbq.Company) (cert, privs CheckLine) {
	cert, privs = CheckLine{Name: LineCertificate, State: CheckSkipped}, CheckLine{Name: LinePrivileges, State: CheckSkipped}
	switch {
	case co == nil:
		cert.Detail, privs.Detail = "no company given (--company)", "no company given (--company)"
		return
	case !cmd.Sign:
		cert.Detail, privs.Detail = "not asked (--sign)", "not asked (--sign)"
		return
	}
	privs.Detail = "not known: no signed read was answered (see the certificate line)"
	probes := []struct {
		priv string
		read func(ctx context.Context, id ujp.Identity, jws string) error
	}{
		{ujp.PrivilegePDF, func(ctx context.Context, id ujp.Identity, jws string) error {
			_, err := gw.SalesPDF(ctx, id, jws)
			return err
		}},
		{ujp.PrivilegePayloads, func(ctx context.Context, id ujp.Identity, jws string) error {
			_, err := gw.PurchasePayload(ctx, id, jws)
			return err
		}},
		{ujp.PrivilegeArchive, func(ctx context.Context, id ujp.Identity, jws string) error {
			_, err := gw.Archive(ctx, id, jws)
			return err
		}},
	}
	// Ask for the three signatures at once: the agent signs them together.
	ids := make([]string, len(probes))
	err := s.db.InTx(ctx, func(tx *store.Tx) error {
		for i, p := range probes {
			payload, err := json.Marshal(ujp.EUIDRequest{RequestTimestamp: ujpdoc.FormatTimestamp(tx.Now), EUID: probeEUID})
			if err != nil {
				return err
			}
			sr, err := einvoicing.RequestSignature(ctx, tx, co.ID, einvoicing.PurposeQuery, payload, einvoicing.SigningLink{Type: einvoicing.LinkUJPCheck, ID: co.ID + "/" + p.priv})
			if err != nil {
				return err
			}
			ids[i] = sr.ID
		}
		return nil
	})
	if err != nil {
		cert.State, cert.Detail = CheckFail, "no signature could be asked for: "+err.Error()
		cert.Action = "Pair the company's signing agent and register its certificate, then check again."
		return
	}
	signed, why := s.awaitSignatures(ctx, ids, cmd)
	if why != "" {
		cert.State, cert.Detail = CheckFail, why
		cert.Action = "Start the company's signing agent (denar-agent) connected to this service, let it sign read requests unattended, and check again."
		return
	}
	var granted, missing []string
	for i, p := range probes {
		who, err := s.pipe.SignerOf(ctx, s.db.Reader(), signed[i], *co)
		if err != nil {
			cert.State, cert.Detail = CheckFail, err.Error()
			return
		}
		err = againWhenBusy(ctx, func() error { return p.read(ujp.WithPriority(ctx, ujp.PriorityRead), who.ID, signed[i].Jws) })
		var r *ujp.RejectedError
		switch {
		case err == nil || ujp.IsNotFound(err):
			granted = append(granted, p.priv)
		case errors.As(err, &r) && r.Code == ujp.CodePrivilegeNotFound:
			missing = append(missing, p.priv)
		case errors.As(err, &r) && (ujp.AccessProblem(err) != nil || strings.HasPrefix(r.Code, "E5") || r.Code == "E4015"):
			cert.State = CheckFail
			cert.Detail = fmt.Sprintf("UJP refused the signature of certificate %s (user %s, company %s): %s %s", who.Cert.Serial, who.ID.EUJPID, co.TaxNumber, r.Code, r.Message)
			cert.Action = fmt.Sprintf("Register the certificate (serial %s) in UJP's portal for user %s and company %s, or register with denar the certificate UJP knows.", who.Cert.Serial, who.ID.EUJPID, co.TaxNumber)
			privs.Detail = "not known: the certificate was refused"
			return
		default:
			cert.State, cert.Detail = CheckFail, "the signed read failed: "+refusal(err)
			cert.Action = "See the server_time line (a clock off by more than 5 minutes makes UJP refuse signatures) and check again."
			return
		}
		if i == 0 {
			cert.State = CheckOK
			cert.Detail = fmt.Sprintf("UJP accepted a signature of certificate %s for user %s and company %s", who.Cert.Serial, who.ID.EUJPID, co.TaxNumber)
		}
	}
	privs.State = CheckOK
	privs.Detail = "granted: " + listOrNone(granted)
	if len(missing) > 0 {
		privs.State = CheckFail
		privs.Detail += "; missing: " + strings.Join(missing, ", ")
		privs.Action = "In UJP's portal, grant the signer's user for this company the privileges " + strings.Join(missing, ", ") +
			" (DP: PDFs, RD: document JSON, incoming invoices and lost answers, DA: archives)."
	}
	return
}

func listOrNone(l []string) string {
	if len(l) == 0 {
		return "none"
	}
	return strings.Join(l, ", ")
}

// awaitSignatures waits until every request of ids is signed, or one is
// refused or expires, or the wait ends; why says what went wrong.
func (s *Service) awaitSignatures(ctx context.Context, ids []string, cmd UJPCheck) ([]dbq.SigningRequest, string) {
	wait, poll := cmd.SignWait, cmd.Poll
	if wait <= 0 {
		wait = 2 * time.Minute
	}
	if poll <= 0 {
		poll = 250 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	t := time.NewTicker(poll)
	defer t.Stop()
	out := make([]dbq.SigningRequest, len(ids))
	for {
		done := 0
		for i, id := range ids {
			r, err := s.db.Reader().GetSigningRequest(ctx, id)
			if err != nil && ctx.Err() == nil {
				return nil, err.Error()
			}
			switch r.State {
			case einvoicing.StateSigned:
				out[i] = r
				done++
			case einvoicing.StateRefused:
				return nil, fmt.Sprintf("the agent refused to sign (%s %s)", r.RefusalReason, r.RefusalMessage)
			case einvoicing.StateExpired:
				return nil, "the signing request expired unsigned"
			}
		}
		if done == len(ids) {
			return out, ""
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Sprintf("the company's agent did not sign within %s", wait)
		case <-t.C:
		}
	}
}

func (s *Service) checkRate(ctx context.Context, env string) CheckLine {
	l := CheckLine{Name: LineRateBudget, State: CheckOK}
	q := s.db.Reader()
	prefix := env + "/"
	slots, err := q.ListUJPSlots(ctx, prefix+"%")
	if err != nil {
		l.State, l.Detail = CheckFail, err.Error()
		return l
	}
	waiters, err := q.ListUJPWaitersLike(ctx, dbq.ListUJPWaitersLikeParams{Prefix: prefix + "%", FreshAfter: s.db.Now().Add(-time.Minute)})
	if err != nil {
		l.State, l.Detail = CheckFail, err.Error()
		return l
	}
	queue := map[string]map[ujp.Priority]int{}
	users := map[string]bool{}
	for _, sl := range slots {
		users[strings.TrimPrefix(sl.Key, prefix)] = true
	}
	for _, w := range waiters {
		u := strings.TrimPrefix(w.Key, prefix)
		users[u] = true
		if queue[u] == nil {
			queue[u] = map[ujp.Priority]int{}
		}
		queue[u][ujp.Priority(w.Priority)]++
	}
	names := make([]string, 0, len(users))
	for u := range users {
		names = append(names, u)
	}
	sort.Strings(names)
	every := s.cfg.SignerInterval
	if every <= 0 {
		every = time.Second
	}
	parts := []string{fmt.Sprintf("one call per %s per UJP user", every)}
	for _, u := range names {
		n, by := 0, []string{}
		for pri, c := range queue[u] {
			n += c
			by = append(by, fmt.Sprintf("%d %s", c, priorityNames[pri]))
		}
		sort.Strings(by)
		if n == 0 {
			parts = append(parts, u+": no call waiting")
		} else {
			parts = append(parts, fmt.Sprintf("%s: %d waiting (%s)", u, n, strings.Join(by, ", ")))
		}
	}
	l.Detail = strings.Join(parts, "; ")
	return l
}

// priorityNames name the priorities of calls waiting for a turn.
var priorityNames = map[ujp.Priority]string{ujp.PrioritySend: "send", ujp.PriorityDecision: "decision",
	ujp.PriorityRead: "read", ujp.PriorityPDF: "PDF", ujp.PriorityCodeList: "code list", ujp.PriorityBackground: "background"}

// LastUJPChecks returns the last go-live check of each of the caller's
// companies ids (in the caller's environment) that has one.
func (s *Service) LastUJPChecks(ctx context.Context, p *auth.Principal, ids []string) (map[string]UJPCheckReport, error) {
	out := map[string]UJPCheckReport{}
	q := s.db.Reader()
	for _, id := range ids {
		if _, err := einvoicing.CompanyRow(ctx, q, p, id); err != nil {
			return nil, err
		}
		r, err := q.LastUJPCheck(ctx, dbq.LastUJPCheckParams{CompanyID: id, Environment: p.Environment})
		if errors.Is(err, sql.ErrNoRows) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("last check of %s: %w", id, err)
		}
		rep := UJPCheckReport{ID: r.ID, Environment: r.Environment, CompanyID: r.CompanyID, OK: r.Ok, CheckedAt: r.CreatedAt.UTC()}
		if err := json.Unmarshal([]byte(r.Lines), &rep.Lines); err != nil {
			return nil, fmt.Errorf("last check of %s: %w", id, err)
		}
		out[id] = rep
	}
	return out, nil
}
