package dashboard

// The dashboard's strings: Macedonian first (the default), English second.
// A key missing in English falls back to Macedonian; a key missing in both
// shows itself, so that a forgotten string is visible (and the catalogue
// test fails).

// Languages the dashboard speaks; the first is the default.
var languages = []string{"mk", "en"}

type catalogue map[string]map[string]string

func (c catalogue) text(lang, key string) string {
	if s, ok := c[lang][key]; ok {
		return s
	}
	if s, ok := c["mk"][key]; ok {
		return s
	}
	return key
}

func newCatalogue() catalogue {
	return catalogue{
		"mk": {
			"title":             "denar — конзола за е-фактури",
			"sandbox.banner":    "ТЕСТ (sandbox): документите не одат до УЈП како вистински.",
			"production.banner": "ПРОДУКЦИЈА: секое дејство важи пред УЈП.",
			"nav.companies":     "Компании", "nav.einvoices": "Е-фактури", "nav.inbox": "Влезни",
			"nav.events": "Настани", "nav.keys": "API клучеви", "nav.usage": "Потрошувачка",
			"nav.security": "Безбедност", "nav.audit": "Дневник", "nav.users": "Корисници",
			"signout": "Одјава", "env.switch": "Средина", "env.sandbox": "тест (sandbox)", "env.production": "продукција",
			"env.go":      "Промени",
			"login.title": "Најава", "login.email": "Е-пошта", "login.password": "Лозинка", "login.submit": "Најави се",
			"login.failed": "Погрешна е-пошта или лозинка.", "login.throttled": "Премногу неуспешни обиди. Обидете се подоцна.",
			"totp.title": "Втор фактор", "totp.code": "Код од апликацијата (6 цифри)", "totp.submit": "Потврди",
			"totp.failed": "Погрешен или веќе искористен код.",
			"csrf.failed": "Формуларот истече или не е од оваа страница. Обидете се повторно.",
			"forbidden":   "Вашата улога не го дозволува ова.", "notfound": "Не е пронајдено.", "error": "Грешка",
			"companies.title": "Компании", "company.name": "Назив", "company.tax": "ЕДБ", "company.status": "Статус",
			"company.mandate": "Овластување", "company.signer": "Потпишувач", "company.envs": "Средини",
			"status.active": "активна", "status.pending_mandate": "чека овластување",
			"mandate.yes": "прифатено", "mandate.no": "чека", "signer.ready": "подготвен", "signer.notready": "не е подготвен",
			"einvoices.title": "Е-фактури", "filter": "Филтрирај", "filter.company": "Компанија", "filter.status": "Статус",
			"filter.from": "Издадена од", "filter.to": "Издадена до", "filter.buyer": "ЕДБ на купувач", "filter.number": "Број",
			"filter.any": "сите", "filter.before": "Одлука пред", "next": "Следна страна",
			"inv.number": "Број", "inv.date": "Датум", "inv.buyer": "Купувач", "inv.gross": "Вкупно", "inv.status": "Статус",
			"inv.kind": "Вид", "inv.euid": "ЕУИД", "inv.net": "Основица", "inv.vat": "ДДВ", "inv.lines": "Ставки",
			"inv.desc": "Опис", "inv.qty": "Количина", "inv.price": "Цена без ДДВ", "inv.linevat": "ДДВ", "inv.total": "Вкупно со ДДВ",
			"inv.history": "Историја на статусот", "inv.from": "Од", "inv.to": "До", "inv.cause": "Причина", "inv.at": "Време",
			"inv.problems": "Проблеми", "inv.pdf": "PDF", "inv.original": "Оригинал",
			"inv.storno": "Сторнирај", "inv.storno.reason": "Причина за сторно", "inv.storno.comment": "Коментар",
			"inv.correction": "Корекција: преку API (POST /v1/einvoices/{id}/correction) со новите ставки.",
			"inv.signing":    "Барање за потпис",
			"inbox.title":    "Влезни е-фактури", "inbox.seller": "Продавач", "inbox.decideby": "Одлука до", "inbox.daysleft": "Преостануваат денови",
			"inbox.decision": "Одлука", "inbox.accept": "Прифати", "inbox.reject": "Одбиј", "inbox.reason": "Причина за одбивање (листа на УЈП)",
			"inbox.comment": "Коментар (задолжителен за О-7)", "inbox.days": "дена", "inbox.overdue": "рокот помина", "inbox.today": "денес",
			"inbox.requested": "Побарана одлука", "inbox.signing": "Барање за потпис", "inbox.signing.state": "Состојба на потписот",
			"inbox.ujp": "Статус кај УЈП", "inbox.refresh": "Освежи",
			"decision.pending": "чека одлука", "decision.accepted": "прифатена", "decision.auto_accepted": "автоматски прифатена",
			"decision.rejected": "одбиена", "decision.accept": "прифаќање", "decision.reject": "одбивање",
			"sr.pending": "чека потпис", "sr.claimed": "се потпишува", "sr.signed": "потпишано", "sr.refused": "одбиено од потпишувачот", "sr.expired": "истечено",
			"events.title": "Настани", "event.type": "Вид", "event.at": "Време", "event.object": "Објект", "event.company": "Компанија",
			"event.deliveries": "Испораки на webhook", "delivery.endpoint": "Крајна точка", "delivery.state": "Состојба",
			"delivery.attempts": "Обиди", "delivery.code": "Одговор", "delivery.replay": "Испрати повторно",
			"delivery.none": "Нема испораки за овој настан.", "replay.all": "Испрати повторно до сите претплатени",
			"keys.title": "API клучеви", "key.id": "ID", "key.display": "Почеток", "key.env": "Средина", "key.scopes": "Дозволи",
			"key.created": "Создаден", "key.revoked": "Повлечен", "key.create": "Создади клуч", "key.revoke": "Повлечи",
			"key.shown": "Новиот клуч — се прикажува само сега, зачувајте го:", "key.active": "активен",
			"usage.title": "Потрошувачка по месец", "usage.sent": "испратени", "usage.received": "примени", "usage.plan": "вклучени во планот",
			"usage.billable": "за наплата", "usage.month": "Месец", "usage.chart": "Испратени и примени документи по месец наспроти планот",
			"usage.prodonly": "се однесува само на продукција",
			"security.title": "Безбедност", "security.totp.on": "Вториот фактор (TOTP) е вклучен.",
			"security.totp.off": "Вториот фактор (TOTP) не е вклучен.", "security.totp.start": "Вклучи втор фактор",
			"security.totp.uri": "Внесете го во апликацијата за автентикација (otpauth URI):", "security.totp.secret": "Тајна",
			"security.totp.confirm": "Потврди со код", "security.totp.done": "Вториот фактор е вклучен.",
			"audit.title": "Дневник на дејства", "audit.who": "Кој", "audit.action": "Дејство", "audit.target": "Објект", "audit.at": "Време",
			"audit.addr":  "Адреса",
			"users.title": "Корисници", "user.email": "Е-пошта", "user.role": "Улога", "user.totp": "TOTP",
			"confirm.title": "Потврдете дејство во продукција", "confirm.text": "Ова дејство ќе важи пред УЈП. Дали сте сигурни?",
			"confirm.yes": "Да, продолжи", "confirm.no": "Откажи",
			"done": "Готово.", "yes": "да", "no": "не", "empty": "Нема записи.",
		},
		"en": {
			"title":             "denar — e-invoicing console",
			"sandbox.banner":    "SANDBOX: documents do not reach UJP for real.",
			"production.banner": "PRODUCTION: every action counts at UJP.",
			"nav.companies":     "Companies", "nav.einvoices": "E-invoices", "nav.inbox": "Inbox",
			"nav.events": "Events", "nav.keys": "API keys", "nav.usage": "Usage",
			"nav.security": "Security", "nav.audit": "Audit log", "nav.users": "Users",
			"signout": "Sign out", "env.switch": "Environment", "env.sandbox": "sandbox", "env.production": "production",
			"env.go":      "Switch",
			"login.title": "Sign in", "login.email": "E-mail", "login.password": "Password", "login.submit": "Sign in",
			"login.failed": "Wrong e-mail or password.", "login.throttled": "Too many failed attempts. Try again later.",
			"totp.title": "Second factor", "totp.code": "Code from your app (6 digits)", "totp.submit": "Confirm",
			"totp.failed": "Wrong or already used code.",
			"csrf.failed": "The form expired or did not come from this page. Try again.",
			"forbidden":   "Your role does not allow this.", "notfound": "Not found.", "error": "Error",
			"companies.title": "Companies", "company.name": "Name", "company.tax": "Tax number", "company.status": "Status",
			"company.mandate": "Mandate", "company.signer": "Signer", "company.envs": "Environments",
			"status.active": "active", "status.pending_mandate": "awaiting mandate",
			"mandate.yes": "accepted", "mandate.no": "pending", "signer.ready": "ready", "signer.notready": "not ready",
			"einvoices.title": "E-invoices", "filter": "Filter", "filter.company": "Company", "filter.status": "Status",
			"filter.from": "Issued from", "filter.to": "Issued to", "filter.buyer": "Buyer tax number", "filter.number": "Number",
			"filter.any": "any", "filter.before": "Decide before", "next": "Next page",
			"inv.number": "Number", "inv.date": "Date", "inv.buyer": "Buyer", "inv.gross": "Total", "inv.status": "Status",
			"inv.kind": "Kind", "inv.euid": "EUID", "inv.net": "Net", "inv.vat": "VAT", "inv.lines": "Lines",
			"inv.desc": "Description", "inv.qty": "Quantity", "inv.price": "Unit price excl. VAT", "inv.linevat": "VAT", "inv.total": "Total incl. VAT",
			"inv.history": "Status history", "inv.from": "From", "inv.to": "To", "inv.cause": "Cause", "inv.at": "At",
			"inv.problems": "Problems", "inv.pdf": "PDF", "inv.original": "Original",
			"inv.storno": "Storno", "inv.storno.reason": "Storno reason", "inv.storno.comment": "Comment",
			"inv.correction": "Correction: through the API (POST /v1/einvoices/{id}/correction) with the new lines.",
			"inv.signing":    "Signing request",
			"inbox.title":    "Incoming e-invoices", "inbox.seller": "Seller", "inbox.decideby": "Decide by", "inbox.daysleft": "Days left",
			"inbox.decision": "Decision", "inbox.accept": "Accept", "inbox.reject": "Reject", "inbox.reason": "Reject reason (UJP's list)",
			"inbox.comment": "Comment (required with О-7)", "inbox.days": "days", "inbox.overdue": "deadline passed", "inbox.today": "today",
			"inbox.requested": "Decision requested", "inbox.signing": "Signing request", "inbox.signing.state": "Signature state",
			"inbox.ujp": "Status at UJP", "inbox.refresh": "Refresh",
			"decision.pending": "pending", "decision.accepted": "accepted", "decision.auto_accepted": "auto-accepted",
			"decision.rejected": "rejected", "decision.accept": "accept", "decision.reject": "reject",
			"sr.pending": "awaiting signature", "sr.claimed": "being signed", "sr.signed": "signed", "sr.refused": "refused by the signer", "sr.expired": "expired",
			"events.title": "Events", "event.type": "Type", "event.at": "At", "event.object": "Object", "event.company": "Company",
			"event.deliveries": "Webhook deliveries", "delivery.endpoint": "Endpoint", "delivery.state": "State",
			"delivery.attempts": "Attempts", "delivery.code": "Response", "delivery.replay": "Replay",
			"delivery.none": "No deliveries for this event.", "replay.all": "Replay to every subscribed endpoint",
			"keys.title": "API keys", "key.id": "ID", "key.display": "Begins with", "key.env": "Environment", "key.scopes": "Scopes",
			"key.created": "Created", "key.revoked": "Revoked", "key.create": "Create key", "key.revoke": "Revoke",
			"key.shown": "The new key — shown only now, store it:", "key.active": "active",
			"usage.title": "Usage per month", "usage.sent": "sent", "usage.received": "received", "usage.plan": "included in the plan",
			"usage.billable": "billable", "usage.month": "Month", "usage.chart": "Documents sent and received per month against the plan",
			"usage.prodonly": "counts production only",
			"security.title": "Security", "security.totp.on": "The second factor (TOTP) is on.",
			"security.totp.off": "The second factor (TOTP) is off.", "security.totp.start": "Turn on a second factor",
			"security.totp.uri": "Add it to your authenticator app (otpauth URI):", "security.totp.secret": "Secret",
			"security.totp.confirm": "Confirm with a code", "security.totp.done": "The second factor is on.",
			"audit.title": "Audit log", "audit.who": "Who", "audit.action": "Action", "audit.target": "Object", "audit.at": "At",
			"audit.addr":  "Address",
			"users.title": "Users", "user.email": "E-mail", "user.role": "Role", "user.totp": "TOTP",
			"confirm.title": "Confirm a production action", "confirm.text": "This action counts at UJP. Are you sure?",
			"confirm.yes": "Yes, go on", "confirm.no": "Cancel",
			"done": "Done.", "yes": "yes", "no": "no", "empty": "Nothing here.",
		},
	}
}
