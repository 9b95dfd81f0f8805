package dashboard

// The words of the API's enum values and codes as the pages show them:
// e-invoice statuses and kinds, history causes, event types, webhook
// delivery states, refusal reasons, signing purposes and the problems of a
// document. A page never shows the raw value in Macedonian
// (TestPagesShowNoRawEnums); a value the catalogue does not know yet (a
// cause added to the pipeline) is shown as it is, set apart as code.

import "html/template"

// enumWords are, by catalogue key (group.value), the Macedonian and the
// English word.
var enumWords = map[string][2]string{
	// E-invoice statuses (EInvoice.status).
	"einv.validating":          {"се проверува", "validating"},
	"einv.invalid":             {"неисправна", "invalid"},
	"einv.awaiting_signature":  {"чека потпис", "awaiting signature"},
	"einv.queued":              {"во ред за испраќање", "queued"},
	"einv.submitting":          {"се испраќа", "submitting"},
	"einv.held":                {"задржана (УЈП недостапен)", "held (UJP unavailable)"},
	"einv.draft_at_ujp":        {"нацрт кај УЈП", "draft at UJP"},
	"einv.registered":          {"регистрирана кај УЈП", "registered at UJP"},
	"einv.delivered":           {"доставена", "delivered"},
	"einv.accepted":            {"прифатена", "accepted"},
	"einv.auto_accepted":       {"автоматски прифатена", "auto-accepted"},
	"einv.rejected":            {"одбиена", "rejected"},
	"einv.cancelled_by_storno": {"сторнирана", "cancelled by a storno"},
	"einv.corrected":           {"коригирана", "corrected"},
	"einv.failed":              {"неуспешна", "failed"},
	// Kinds of a document (EInvoice.kind, InboxDocument.kind).
	"kind.invoice":    {"фактура", "invoice"},
	"kind.storno":     {"сторно", "storno"},
	"kind.correction": {"корекција", "correction"},
	"kind.external":   {"издадена надвор од сервисот", "issued elsewhere"},
	// Causes of a status history row.
	"cause.issued":               {"издадена", "issued"},
	"cause.received":             {"примена", "received"},
	"cause.decision":             {"одлука", "decision"},
	"cause.validated":            {"проверена", "validated"},
	"cause.validation_failed":    {"проверката не помина", "validation failed"},
	"cause.signed":               {"потпишана", "signed"},
	"cause.signature_refresh":    {"нов потпис", "signed again"},
	"cause.signature_refused":    {"потпишувачот одби", "the signer refused"},
	"cause.submission":           {"испраќање", "submission"},
	"cause.retry":                {"повторно испраќање", "retry"},
	"cause.submitted":            {"доставена до УЈП", "submitted"},
	"cause.submitted_earlier":    {"веќе доставена до УЈП", "submitted earlier"},
	"cause.ujp_rate_limited":     {"УЈП ограничи барања", "UJP rate limit"},
	"cause.ujp_outage":           {"УЈП недостапен", "UJP unavailable"},
	"cause.ujp_not_configured":   {"УЈП не е поставен", "UJP not configured"},
	"cause.ujp_rejected":         {"УЈП ја одби", "UJP rejected it"},
	"cause.hold_window_exceeded": {"помина рокот на задржување", "hold window exceeded"},
	"cause.buyer_accepted":       {"купувачот прифати", "the buyer accepted"},
	"cause.buyer_rejected":       {"купувачот одби", "the buyer rejected"},
	"cause.deadline_passed":      {"рокот помина", "the deadline passed"},
	"cause.storno_delivered":     {"сторното е доставено", "storno delivered"},
	"cause.correction_delivered": {"корекцијата е доставена", "correction delivered"},
	"cause.ujp_status":           {"статус од УЈП", "status from UJP"},
	"cause.reconciled":           {"усогласена со УЈП", "reconciled with UJP"},
	"cause.discovered":           {"пронајдена кај УЈП", "found at UJP"},
	// Event types (Event.type, webhook subscriptions).
	"event.*":                            {"сите настани", "all events"},
	"event.einvoice.signature_required":  {"е-фактура чека потпис", "e-invoice awaits a signature"},
	"event.einvoice.validated_failed":    {"е-фактура не ја помина проверката", "e-invoice failed validation"},
	"event.einvoice.submitted":           {"е-фактура испратена", "e-invoice submitted"},
	"event.einvoice.held":                {"е-фактура задржана", "e-invoice held"},
	"event.einvoice.failed":              {"е-фактура неуспешна", "e-invoice failed"},
	"event.einvoice.accepted":            {"е-фактура прифатена", "e-invoice accepted"},
	"event.einvoice.auto_accepted":       {"е-фактура автоматски прифатена", "e-invoice auto-accepted"},
	"event.einvoice.rejected":            {"е-фактура одбиена", "e-invoice rejected"},
	"event.einvoice.cancelled_by_storno": {"е-фактура сторнирана", "e-invoice cancelled by a storno"},
	"event.einvoice.corrected":           {"е-фактура коригирана", "e-invoice corrected"},
	"event.einvoice.discovered":          {"е-фактура пронајдена кај УЈП", "e-invoice found at UJP"},
	"event.einvoice.missing_at_ujp":      {"е-фактура ја нема кај УЈП", "e-invoice missing at UJP"},
	"event.reconciliation.completed":     {"усогласувањето со УЈП заврши", "reconciliation completed"},
	"event.reconciliation.mismatch":      {"усогласувањето најде разлики", "reconciliation found differences"},
	"event.inbox.received":               {"примена влезна фактура", "incoming invoice received"},
	"event.codelists.changed":            {"УЈП ги смени шифрарниците", "UJP changed its code lists"},
	"event.inbox.deadline_approaching":   {"рокот за одлука се приближува", "decision deadline approaching"},
	"event.inbox.signature_required":     {"одлука чека потпис", "decision awaits a signature"},
	"event.inbox.accepted":               {"влезна фактура прифатена", "incoming invoice accepted"},
	"event.inbox.auto_accepted":          {"влезна фактура автоматски прифатена", "incoming invoice auto-accepted"},
	"event.inbox.rejected":               {"влезна фактура одбиена", "incoming invoice rejected"},
	"event.inbox.decision_failed":        {"одлуката не успеа", "decision failed"},
	"event.inbox.cancelled_by_storno":    {"влезна фактура сторнирана", "incoming invoice cancelled by a storno"},
	"event.inbox.corrected":              {"влезна фактура коригирана", "incoming invoice corrected"},
	"event.signing_agent.online":         {"потпишувач поврзан", "signer online"},
	"event.signing_agent.offline":        {"потпишувач исклучен", "signer offline"},
	"event.archive.export_ready":         {"архивата е подготвена", "archive export ready"},
	"event.archive.export_failed":        {"архивата не успеа", "archive export failed"},
	"event.webhook_endpoint.test":        {"тест на webhook", "webhook test"},
	// Webhook deliveries and attempts.
	"delivery.pending":             {"чека", "pending"},
	"delivery.failed":              {"неуспешна (ќе се обиде пак)", "failed (will retry)"},
	"delivery.succeeded":           {"успешна", "succeeded"},
	"delivery.abandoned":           {"напуштена", "abandoned"},
	"abandoned.endpoint_disabled":  {"крајната точка е исклучена", "endpoint disabled"},
	"abandoned.retries_exhausted":  {"обидите се исцрпени", "retries exhausted"},
	"trigger.scheduled":            {"автоматски", "scheduled"},
	"trigger.manual":               {"рачно", "manual"},
	"disabled.failing_72h":         {"не успеваше 72 часа", "failing for 72 hours"},
	"disabled.disabled_by_api":     {"исклучена преку API", "disabled through the API"},
	"refusal.user_declined":        {"одбиено од потпишувачот", "declined by the signer"},
	"refusal.policy":               {"одбиено по правило", "refused by policy"},
	"refusal.token_missing":        {"нема токен/картичка", "token missing"},
	"refusal.pin_locked":           {"PIN-от е заклучен", "PIN locked"},
	"refusal.payload_invalid":      {"неисправна содржина", "payload invalid"},
	"refusal.unattended":           {"немаше кој да потврди", "nobody to ask"},
	"purpose.document":             {"документ", "document"},
	"purpose.decision":             {"одлука", "decision"},
	"purpose.query":                {"читање од УЈП", "read from UJP"},
	"problem.signature_refused":    {"Потпишувачот одби да потпише", "The signer refused to sign"},
	"problem.ujp_rejected":         {"УЈП го одби документот", "UJP rejected the document"},
	"problem.hold_window_exceeded": {"Документот не стигна до УЈП во рокот на задржување", "The document did not reach UJP within the hold window"},
	"problem.validation_failed":    {"Документот не ја помина проверката", "The document failed validation"},
	"problem.decision_failed":      {"Одлуката не стигна до УЈП", "The decision did not reach UJP"},
	"problem.ujp_missing":          {"УЈП не го знае документот", "UJP does not know the document"},
	// Problems an act of the dashboard can meet (the error page).
	"code.validation_failed":        {"Барањето има неисправни полиња.", "The request has invalid fields."},
	"code.inbox_state_conflict":     {"Оваа влезна фактура сега не може да се прифати или одбие.", "This incoming invoice cannot be accepted or rejected now."},
	"code.decision_deadline_passed": {"Рокот за одлука помина.", "The decision deadline has passed."},
	"code.period_closed":            {"Годишната сметка за таа година е поднесена: документите од неа не се менуваат.", "The annual account of that year is filed: its documents do not change."},
	"code.signer_not_ready":         {"Компанијата нема подготвен потпишувач.", "The company has no ready signer."},
	"code.pdf_not_ready":            {"PDF-от од УЈП сè уште не е преземен.", "UJP's PDF is not fetched yet."},
	"code.ujp_unavailable":          {"УЈП не одговара; обидете се подоцна.", "UJP does not answer; try again later."},
	"code.rate_limited":             {"Премногу барања; обидете се по малку.", "Too many requests; try again in a moment."},
}

// addEnumWords puts enumWords into the catalogue.
func addEnumWords(c catalogue) {
	for k, w := range enumWords {
		c["mk"][k], c["en"][k] = w[0], w[1]
	}
}

// Enum is the word of an API value of group (einv, kind, cause, event,
// delivery, abandoned, trigger, refusal, purpose, env, role, decision, sr,
// status), or the value itself, set apart as code, when the catalogue does
// not know it.
func (b base) Enum(group, value string) template.HTML {
	if s, ok := b.cat[b.Lang][group+"."+value]; ok {
		return template.HTML(template.HTMLEscapeString(s))
	}
	if s, ok := b.cat["mk"][group+"."+value]; ok {
		return template.HTML(template.HTMLEscapeString(s))
	}
	return template.HTML("<code>" + template.HTMLEscapeString(value) + "</code>")
}

// EnumText is Enum as plain text (a page's title).
func (b base) EnumText(group, value string) string {
	if s, ok := b.cat[b.Lang][group+"."+value]; ok {
		return s
	}
	return value
}

// EnumP is Enum of a value that may be absent ("" when it is).
func (b base) EnumP(group string, value *string) template.HTML {
	if value == nil || *value == "" {
		return ""
	}
	return b.Enum(group, *value)
}

// Problem words one problem of a document: its code's sentence, the
// refusal's reason and the message it carries (a signer's, UJP's); a code
// the catalogue does not know keeps its message.
func (b base) Problem(p map[string]any) template.HTML {
	str := func(k string) string { s, _ := p[k].(string); return s }
	code, msg := str("code"), str("message")
	var out string
	if s, ok := b.cat[b.Lang]["problem."+code]; ok {
		out = template.HTMLEscapeString(s)
		if r := str("reason"); r != "" {
			out += " (" + string(b.Enum("refusal", r)) + ")"
		}
		if code == "signature_refused" {
			msg = "" // the refusal's own words are in its reason and the signing request
		}
	} else if code != "" {
		out = "<code>" + template.HTMLEscapeString(code) + "</code>"
	}
	if path := str("path"); path != "" {
		out += " <code>" + template.HTMLEscapeString(path) + "</code>"
	}
	if msg != "" {
		out += ": " + template.HTMLEscapeString(msg)
	}
	return template.HTML(out)
}
