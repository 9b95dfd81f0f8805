package einvoiceapi

import (
	"encoding/base64"
	"encoding/json"
	"reflect"
	"time"

	"github.com/denar-mk/denar/einvoice"
	"github.com/denar-mk/denar/einvoice/ujpdoc"
	"github.com/denar-mk/denar/internal/einvoicing"
	"github.com/denar-mk/denar/internal/einvoicing/archive"
	"github.com/denar-mk/denar/internal/einvoicing/codelists"
	"github.com/denar-mk/denar/internal/einvoicing/companies"
	"github.com/denar-mk/denar/internal/einvoicing/inbox"
	"github.com/denar-mk/denar/internal/einvoicing/pipeline"
	"github.com/denar-mk/denar/internal/einvoicing/reconcile"
	"github.com/denar-mk/denar/internal/einvoicing/signing"
	"github.com/denar-mk/denar/internal/einvoicing/usage"
	"github.com/denar-mk/denar/internal/einvoicing/webhooks"
	"github.com/denar-mk/denar/internal/httpx"
)

// The values the examples of the reference share: the sandbox's seller
// and buyer (docs/sandbox.md) and one e-invoice from the first to the
// second, followed from issue to delivery.
const (
	exCompany  = "cmp_01jv8k2n3p4q5r6s7t8v9w0xyz"
	exEInvoice = "einv_01jv8k2n3p4q5r6s7t8v9w0xyz"
	exStorno   = "einv_01jv8m4q6s8v0x2z4b6d8f0h2k"
	exInbox    = "inbd_01jv8k2n3p4q5r6s7t8v9w0xyz"
	exAgent    = "agt_01jv8k2n3p4q5r6s7t8v9w0xyz"
	exSigning  = "sgr_01jv8k2n3p4q5r6s7t8v9w0xyz"
	exSigning2 = "sgr_01jv8k2n7w1x2y3z4a5b6c7d8e"
	exEvent    = "evt_01jv8k2n3p4q5r6s7t8v9w0xyz"
	exEndpoint = "whe_01jv8k2n3p4q5r6s7t8v9w0xyz"
	exDelivery = "whd_01jv8k2n3p4q5r6s7t8v9w0xyz"
	exArchive  = "arx_01jv8k2n3p4q5r6s7t8v9w0xyz"
	exCert     = "crt_01jv8k2n3p4q5r6s7t8v9w0xyz"
	exEUID     = "019b8d43-7840-7433-b358-08891b53605c"
	exCursor   = "eyJ2IjoxLCJhIjoiZWludl8wMWp2OGsybjNwNHE1cjZzN3Q4djl3MHh5eiJ9"
)

func exTime(hhmmss string) time.Time {
	t, err := time.Parse(time.RFC3339, "2026-05-04T"+hhmmss+"Z")
	if err != nil {
		panic(err)
	}
	return t
}

func exPtr[T any](v T) *T { return &v }

// IssueExample is the example body of POST /v1/einvoices: an invoice of
// the sandbox seller 4030000000001 to the sandbox buyer 4030000000010, one
// line at 18% and one at 5%. TestDocumentedIssueBody issues it.
func IssueExample() einvoice.Request {
	return einvoice.Request{
		Number: "F-2026-0042", IssueDate: "2026-05-04", ClientReference: exPtr("order-1001"),
		Notes: exPtr("Рок за плаќање 15 дена од денот на издавање."),
		Buyer: einvoice.Party{TaxNumber: "4030000000010", Name: "Тест Купувач ДОО Скопје",
			Address: einvoice.PartyAddress{Street: exPtr("ул. Македонија"), Number: exPtr("2"), PostalCode: exPtr("1000"), City: exPtr("Скопје")}},
		References: []einvoice.Reference{{Type: "NAR", Number: "НР-2026-117", Date: exPtr("2026-04-28")}},
		Payment:    einvoice.Payment{TypeCode: "P12", Currency: "MKD", DueDays: exPtr(15)},
		Lines: []einvoice.Line{
			{Description: "Консултантски услуги", Unit: exPtr("час"), Quantity: "3", UnitPrice: "1000", UnitDiscount: "100", VatPercent: "18", TaxIndicator: "DDV-A"},
			{Description: "Стручна книга", Unit: exPtr("парче"), Quantity: "2", UnitPrice: "950", VatPercent: "5", TaxIndicator: "DDV-B"},
		},
	}
}

// exSeller is the sandbox seller as its e-invoices carry it.
func exSeller() ujpdoc.Seller {
	return ujpdoc.Seller{SellerCCode: "MK", SellerCName: "Северна Македонија", SellerTin: "4030000000001",
		SellerVatNumber: exPtr("МК4030000000001"), SellerName: "Тест Продавач ДООЕЛ Скопје",
		SellerAddress: ujpdoc.Address{StreetAddress: "бул. Партизански одреди", StreetNumber: "1", PostalCode: "1000", City: "Скопје"}}
}

// exEInvoiceOf is the e-invoice the issue example becomes, delivered: its
// document and totals built by the same code as a real issue.
func exEInvoiceOf() einvoicing.EInvoice {
	req := IssueExample()
	doc, err := req.Build(exSeller(), exEInvoice, ujpdoc.Snapshot())
	if err != nil {
		panic("einvoiceapi: the issue example does not build: " + err.Error())
	}
	vat := "МК4030000000010"
	doc.Buyer.BuyerVatNumber = &vat // from UJP's registry
	docJSON, err := json.Marshal(ujpdoc.Request{RequestTimestamp: ujpdoc.FormatTimestamp(exTime("09:15:00")), Document: *doc})
	if err != nil {
		panic(err)
	}
	return einvoicing.EInvoice{ID: exEInvoice, Object: "einvoice", CompanyID: exCompany, Environment: "sandbox", Kind: "invoice",
		Status: "delivered", DocumentType: "100", Number: req.Number, IssueDate: req.IssueDate, ClientReference: req.ClientReference,
		UJPDocID: exEInvoice, EUID: exPtr(exEUID), QRLink: exPtr("https://efakturatest.ujp.gov.mk/euid/" + exEUID),
		Totals: einvoice.DocTotals(doc), Problems: json.RawMessage(`[]`), Document: docJSON, SubmitAttempts: 1,
		DeliveredAt: exPtr(exTime("09:15:03")), CreatedAt: exTime("09:15:00"), UpdatedAt: exTime("09:15:03")}
}

func exCompanyObject() companies.Company {
	return companies.Company{ID: exCompany, Object: "company", Name: "Тест Продавач ДООЕЛ Скопје", TaxNumber: "4030000000001",
		VATNumber: exPtr("МК4030000000001"), Address: einvoicing.Address{Street: "бул. Партизански одреди", Number: "1", City: "Скопје", Zip: "1000"},
		ExternalRef: exPtr("crm-1042"), Status: "active", SigningMode: "bridge",
		Environments: companies.Environments{Sandbox: companies.EnvironmentState{Enabled: true, SignerReady: true}},
		Problems:     []einvoicing.CompanyProblem{}, CreatedAt: exTime("09:00:00")}
}

func exInboxDocument() einvoicing.InboxDocument {
	return einvoicing.InboxDocument{ID: exInbox, Object: "inbox_document", CompanyID: exCompany, EUID: "019b8e10-2c4d-7a11-9e3f-5b7c9d1e2f30",
		Kind: "invoice", DocumentType: "100", Number: "ТД-2026-0318", IssueDate: "2026-05-04", TransactionDate: "2026-05-04",
		Seller: einvoicing.InboxSeller{Country: "MK", TaxNumber: "4030000000044", VatNumber: exPtr("МК4030000000044"), Name: "Тест Добавувач ДООЕЛ Тетово",
			Address: einvoicing.InboxAddress{Street: "ул. Илинденска", Number: "5", PostalCode: "1200", City: "Тетово"}},
		Totals:    einvoice.Totals{Net: "10000.00", Vat: "1800.00", Gross: "11800.00", Currency: "MKD"},
		UJPStatus: einvoicing.UJPStatus{Code: "01", Name: "Испратена (Нова)", At: exTime("09:20:00")},
		Decision:  einvoicing.InboxDecision{State: "pending"},
		DecideBy:  "2026-06-10", DaysLeft: 37, Problems: json.RawMessage(`[]`), ReceivedAt: exTime("09:20:00"), UpdatedAt: exTime("09:20:00"),
		Links: einvoicing.InboxLinks{Payload: "/v1/inbox/" + exInbox + "/payload", PDF: "/v1/inbox/" + exInbox + "/pdf"}}
}

func exSigningRequest() einvoicing.SigningRequest {
	gross := exEInvoiceOf().Totals.Gross
	header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"RS256","x5c":["MIIC…"]}`))
	payload := base64.RawURLEncoding.EncodeToString([]byte(`{"requestTimestamp":"2026-05-04T09:15:00.000+02:00","document":{…}}`))
	return einvoicing.SigningRequest{ID: exSigning, Object: "signing_request", CompanyID: exCompany, Purpose: "document", State: "pending",
		ProtectedHeader: header, Payload: payload, SigningInput: header + "." + payload, ExpiresAt: exTime("09:25:00"),
		Links: map[string]string{"einvoice": exEInvoice},
		Summary: &einvoicing.SigningSummary{CompanyName: "Тест Продавач ДООЕЛ Скопје", Purpose: "issue e-invoice F-2026-0042",
			DocumentNumber: exPtr("F-2026-0042"), BuyerName: exPtr("Тест Купувач ДОО Скопје"), GrossTotal: exPtr(gross), Currency: exPtr("MKD")},
		CreatedAt: exTime("09:15:00"), UpdatedAt: exTime("09:15:00")}
}

func exAgentObject() einvoicing.SigningAgent {
	return einvoicing.SigningAgent{ID: exAgent, Object: "signing_agent", Name: "Сметководство — лаптоп", Environment: "sandbox",
		CompanyIDs: []string{}, Online: true, LastSeenAt: exPtr(exTime("09:12:31")), CreatedAt: exTime("09:03:12")}
}

func exEndpointObject() webhooks.WebhookEndpoint {
	return webhooks.WebhookEndpoint{ID: exEndpoint, Object: "webhook_endpoint", URL: "https://erp.example.mk/hooks/denar",
		Description: "ERP — продажба", Events: []string{webhooks.EventSubmitted, webhooks.EventRejected, webhooks.EventInboxReceived},
		CompanyIDs: []string{}, Environment: "sandbox", Enabled: true, LastSuccessAt: exPtr(exTime("09:15:04")),
		CreatedAt: exTime("09:00:00"), UpdatedAt: exTime("09:00:00")}
}

func exDeliveryObject() webhooks.WebhookDelivery {
	return webhooks.WebhookDelivery{ID: exDelivery, Object: "webhook_delivery", EndpointID: exEndpoint, EventID: exEvent,
		EventType: webhooks.EventSubmitted, CompanyID: exPtr(exCompany), State: "succeeded",
		Attempts: []webhooks.WebhookAttempt{{Number: 1, Trigger: "scheduled", At: exTime("09:15:04"), DurationMs: 84,
			StatusCode: exPtr(200), StatusClass: "2xx", ResponseBody: `{"ok":true}`, Succeeded: true}},
		CreatedAt: exTime("09:15:03"), UpdatedAt: exTime("09:15:04")}
}

func exArchiveObject() archive.ArchiveExport {
	return archive.ArchiveExport{ID: exArchive, Object: "archive_export", CompanyID: exCompany, Environment: "sandbox",
		From: "2026-04-01", To: "2026-04-30", State: "ready", Counts: archive.ArchiveCounts{Sent: 42, Received: 17, Files: 178},
		Size: exPtr(int64(3481920)), SHA256: exPtr("9f2c1e7a4b6d8f0e2a4c6e8b0d2f4a6c8e0b2d4f6a8c0e2b4d6f8a0c2e4b6d8f"),
		AsOf: exTime("09:00:00"), CreatedAt: exTime("09:00:00"), CompletedAt: exPtr(exTime("09:00:41")),
		ExpiresAt: time.Date(2026, 5, 11, 9, 0, 41, 0, time.UTC),
		Links:     archive.ArchiveLinks{Download: "/v1/archive-exports/" + exArchive + "/download"}}
}

func exReconciliationObject() reconcile.Reconciliation {
	return reconcile.Reconciliation{ID: "rcn_01jv8k2n3p4q5r6s7t8v9w0xyz", Object: "reconciliation", Date: "2026-05-04", Environment: "sandbox",
		CompanyID: exCompany, State: reconcile.ReconciliationCompleted, Runs: 1,
		Sales:    reconcile.ReconciliationSales{AtUJP: 42, AtDenar: 41, Matched: 40, Repaired: 1, Discovered: 1},
		Purchase: reconcile.ReconciliationPurchase{AtUJP: 7, InInbox: 6, Added: 1}, Problems: []reconcile.ReconciliationProblem{},
		StartedAt: exTime("01:00:00"), CompletedAt: exPtr(exTime("01:00:09")), CreatedAt: exTime("01:00:00"), UpdatedAt: exTime("01:00:09")}
}

func exEventOf(typ string, object any) webhooks.Event {
	data, err := json.Marshal(map[string]any{"object": object})
	if err != nil {
		panic(err)
	}
	return webhooks.Event{ID: exEvent, Object: "event", Type: typ, CreatedAt: exTime("09:15:03"), Environment: "sandbox",
		CompanyID: exCompany, Data: data}
}

// registerExamples gives every request and response body of the service
// its example (the webhooks' bodies get theirs in documentWebhooks).
func registerExamples(s *httpx.Service) {
	inv := exEInvoiceOf()
	cb := ujpdoc.Snapshot()

	// Companies.
	s.Example(createCompanyBody{TaxNumber: "4030000000001", ExternalRef: exPtr("crm-1042"), SigningMode: "bridge",
		Representative: representative{Name: "Марија Николовска", Email: "marija@example.mk"}})
	s.ExampleJSON(reflect.TypeFor[patchCompanyBody](), `{"externalRef":"crm-1042","signingMode":"sdk"}`)
	s.Example(exCompanyObject())
	s.Example(httpx.Page[companies.Company]{Data: []companies.Company{exCompanyObject()}, NextCursor: nil})
	s.Example(companies.SandboxMandateLink{Object: "sandbox_mandate_link", CompanyID: exCompany,
		URL: "http://127.0.0.1:8081/mandates/mdt_3Fq8Zr1Kx7LmN2pW9sVb4Tc6Hd0Ye5Uj1Gf7Io3We8Ra", ExpiresAt: time.Date(2026, 5, 11, 9, 0, 0, 0, time.UTC)})

	// Signing.
	s.Example(signing.PairingCode{Object: "agent_pairing_code", Code: "K7QM4TXPR2", CompanyIDs: []string{}, ExpiresAt: exTime("09:10:00")})
	s.ExampleJSON(reflect.TypeFor[pairInput]().Field(0).Type, `{"code":"K7QM4TXPR2","name":"Сметководство — лаптоп"}`)
	s.Example(signing.AgentCredentials{Object: "signing_agent", AgentID: exAgent, AgentSecret: "R8vQ2mX7kLp4Wz9sTb3Nc6Hd0aYe5uJ1gF7iO3wE",
		Environment: "sandbox", CompanyIDs: []string{}})
	s.ExampleJSON(reflect.TypeFor[certificateInput]().Field(1).Type,
		`{"certificateDer":"MIIDdzCCAl+gAwIBAgIUW1x…","companyId":"`+exCompany+`","eujpId":"MK-EUJP-0012345"}`)
	s.Example(signing.SigningCertificate{ID: exCert, Object: "signing_certificate", AgentID: exAgent, CompanyID: exCompany,
		SerialNumber: "520978203817622936472910448203710", EUJPID: "MK-EUJP-0012345",
		Subject: "CN=Марија Николовска,O=Тест Продавач ДООЕЛ Скопје,C=MK", NotBefore: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC),
		NotAfter: time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC), CreatedAt: exTime("09:04:00")})
	s.Example(exAgentObject())
	var agentRequests signingRequestList
	agentRequests.Body.Data = []einvoicing.SigningRequest{exSigningRequest()}
	s.Example(agentRequests.Body)
	s.Example(exSigningRequest())
	s.Example(httpx.Page[einvoicing.SigningRequest]{Data: []einvoicing.SigningRequest{exSigningRequest()}})
	s.ExampleJSON(reflect.TypeFor[signatureInput]().Field(1).Type,
		`{"jws":"eyJhbGciOiJSUzI1NiIsIng1YyI6WyJNSUlD4oCmIl19.eyJyZXF1ZXN0VGltZXN0YW1wIjoi4oCmIn0.c2lnbmF0dXJl"}`)
	s.ExampleJSON(reflect.TypeFor[refuseInput]().Field(1).Type, `{"reason":"user_declined","message":"Износот не одговара на нарачката"}`)
	s.ExampleJSON(reflect.TypeFor[ClaimBatchBody](), `{"ids":["`+exSigning+`","`+exSigning2+`"]}`)
	s.ExampleJSON(reflect.TypeFor[SignatureBatchBody](), `{"items":[{"id":"`+exSigning+`","jws":"eyJhbGciOiJSUzI1NiIsIng1YyI6WyJNSUlD4oCmIl19.eyJyZXF1ZXN0VGltZXN0YW1wIjoi4oCmIn0.c2lnbmF0dXJl"},`+
		`{"id":"`+exSigning2+`","jws":"eyJhbGciOiJSUzI1NiIsIng1YyI6WyJNSUlD4oCmIl19.eyJyZXF1ZXN0VGltZXN0YW1wIjoi4oCmIn1.c2lnbmF0dXJm"}]}`)
	s.ExampleJSON(reflect.TypeFor[RefusalBatchBody](), `{"items":[{"id":"`+exSigning+`","reason":"pin_locked","message":"PIN locked after three attempts"},`+
		`{"id":"`+exSigning2+`","reason":"pin_locked","message":"PIN locked after three attempts"}]}`)
	claimed := exSigningRequest()
	claimed.State, claimed.ClaimedBy, claimed.UpdatedAt = "claimed", exPtr(exAgent), exTime("09:15:02")
	taken := httpx.NewProblem("already_claimed", "Another signer claimed this request.")
	taken.Type, taken.Instance = httpx.DefaultDocsURL+"#already_claimed", "req_01jv8k2p9x4q5r6s7t8v9w0xyz"
	s.Example(SigningBatch{Object: "list", Data: []SigningBatchItem{
		{Object: "signing_request_result", ID: exSigning, Status: 200, Request: &claimed},
		{Object: "signing_request_result", ID: exSigning2, Status: 409, Error: &BatchItemProblem{Problem: *taken}},
	}})

	// E-invoices.
	s.Example(IssueExample())
	corr := einvoice.CorrectionRequest{Request: IssueExample(), DocStorno: 2, Reason: "C01", Comment: exPtr("Погрешна цена во ставка 1")}
	corr.Number, corr.ClientReference = "F-2026-0042-K", exPtr("order-1001-k")
	corr.Lines[0].UnitPrice = "900"
	s.Example(corr)
	s.Example(StornoBody{Reason: "S-1", Comment: exPtr("Погрешен купувач")})
	s.Example(inv)
	s.Example(httpx.Page[einvoicing.EInvoice]{Data: []einvoicing.EInvoice{inv}, NextCursor: exPtr(exCursor)})
	var history statusHistoryOutput
	history.Body.Data = []einvoicing.StatusChange{
		{To: "awaiting_signature", Cause: "issued", At: exTime("09:15:00")},
		{From: exPtr("awaiting_signature"), To: "queued", Cause: "signed", At: exTime("09:15:01")},
		{From: exPtr("queued"), To: "submitting", Cause: "submission", At: exTime("09:15:02")},
		{From: exPtr("submitting"), To: "delivered", Cause: "submitted", UJPCode: exPtr("01"), At: exTime("09:15:03")},
	}
	s.Example(history.Body)
	s.ExampleJSON(reflect.TypeFor[simulateInput]().Field(1).Type, `{"action":"buyer_rejects","rejectReasonCode":"O-2","comment":"Погрешна цена"}`)
	s.Example(pipeline.Simulation{Object: "sandbox_simulation", Action: "buyer_rejects", EInvoice: inv})

	// Inbox.
	s.Example(exInboxDocument())
	s.Example(httpx.Page[einvoicing.InboxDocument]{Data: []einvoicing.InboxDocument{exInboxDocument()}})
	s.Example(AcceptBody{Comment: exPtr("Примено, во ред.")})
	s.Example(RejectBody{ReasonCode: "O-2", Comment: exPtr("Погрешна цена во ставка 1")})
	s.ExampleJSON(reflect.TypeFor[sandboxIncomingInput]().Field(0).Type, `{"transactionDate":"2026-05-04","issueDate":"2026-05-04"}`)
	s.Example(inbox.SandboxIncoming{Object: "sandbox_incoming", CompanyID: exCompany, EUID: exInboxDocument().EUID,
		SellerTaxNumber: "4030000000044", TransactionDate: "2026-05-04", IssueDate: "2026-05-04", DecideBy: "2026-06-10"})
	s.ExampleJSON(reflect.TypeFor[simulateInboxInput]().Field(1).Type, `{"action":"seller_stornos","voidReason":"S-1"}`)
	cancelled := exInboxDocument()
	cancelled.UJPStatus = einvoicing.UJPStatus{Code: "07", Name: "Сторнирана", At: exTime("09:30:00")}
	s.Example(inbox.InboxSimulation{Object: "sandbox_simulation", Action: "seller_stornos", Document: cancelled,
		StornoEUID: exPtr("019b8e22-61a0-7c3e-8d2b-4f6a8c0e1d3b")})

	// Events and webhooks.
	s.Example(exEventOf(webhooks.EventSubmitted, inv))
	s.Example(EventPage{Data: []webhooks.Event{exEventOf(webhooks.EventSubmitted, inv)}, NextCursor: exPtr(exCursor), HasMore: false})
	kinds := webhooks.EventKinds()
	s.Example(httpx.Page[webhooks.EventKind]{Data: kinds[:3]})
	s.Example(httpx.Page[webhooks.WebhookDelivery]{Data: []webhooks.WebhookDelivery{exDeliveryObject()}})
	s.ExampleJSON(reflect.TypeFor[replayInput]().Field(1).Type, `{"endpointId":"`+exEndpoint+`"}`)
	replayed := exDeliveryObject()
	replayed.State, replayed.Attempts, replayed.NextAttemptAt = "pending", []webhooks.WebhookAttempt{}, exPtr(exTime("09:40:00"))
	s.Example(webhooks.ReplayResult{Data: []webhooks.WebhookDelivery{replayed}})
	s.Example(CreateWebhookEndpointBody{URL: "https://erp.example.mk/hooks/denar", Description: "ERP — продажба",
		Events: []string{webhooks.EventSubmitted, webhooks.EventRejected, webhooks.EventInboxReceived}})
	s.ExampleJSON(reflect.TypeFor[PatchWebhookEndpointBody](), `{"events":["*"],"enabled":true}`)
	created := exEndpointObject()
	created.Secret = exPtr("whsec_4cQx9LmT2vB7nR0sW5yZ8kD1fH3jP6")
	s.Example(created)
	s.Example(httpx.Page[webhooks.WebhookEndpoint]{Data: []webhooks.WebhookEndpoint{exEndpointObject()}})
	s.Example(RecoverBody{Since: time.Date(2026, 5, 3, 0, 0, 0, 0, time.UTC)})
	s.Example(webhooks.Recovery{Object: "webhook_recovery", EndpointID: exEndpoint, Since: time.Date(2026, 5, 3, 0, 0, 0, 0, time.UTC), Requeued: 12})
	test := exDeliveryObject()
	test.EventType, test.CompanyID, test.Test = webhooks.EventWebhookTest, nil, true
	test.State, test.Attempts = "pending", []webhooks.WebhookAttempt{}
	s.Example(test)

	// Usage and archives.
	s.Example(usage.Usage{Object: "usage", Period: "2026-04", Environment: "production",
		Plan:      usage.UsagePlan{Code: "business", IncludedDocuments: 1000, ExtraDocumentPrice: "8.00", Currency: "MKD"},
		Totals:    usage.UsageTotals{Sent: 42, Received: 17, Billable: 0},
		ByCompany: []usage.CompanyUsage{{CompanyID: exCompany, Sent: 42, Received: 17}}})
	s.Example(ArchiveExportBody{CompanyID: exCompany, From: "2026-04-01", To: "2026-04-30"})
	s.Example(exArchiveObject())
	s.Example(ReconciliationBody{CompanyID: exCompany, Date: "2026-05-04"})
	s.Example(exReconciliationObject())
	s.Example(httpx.Page[reconcile.Reconciliation]{Data: []reconcile.Reconciliation{exReconciliationObject()}})

	// Codebooks.
	fresh := codelists.CodebookFreshness{Live: true, UnchangedSince: exPtr(time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC))}
	list := codelists.CodebookList{Object: "list", Environment: "sandbox", Source: codelists.CodebookSourceUJP,
		FetchedAt: exPtr(exTime("06:00:00"))}
	for _, info := range einvoice.Codebooks(cb) {
		list.Data = append(list.Data, codelists.CodebookSummary{CodebookInfo: info, CodebookFreshness: fresh})
	}
	s.Example(list)
	info, values, _ := einvoice.Codebook(cb, ujpdoc.CBTaxIndicators)
	s.Example(codelists.Codebook{Object: "codebook", CodebookInfo: info, Environment: "sandbox", Source: codelists.CodebookSourceUJP,
		FetchedAt: exPtr(exTime("06:00:00")), CodebookFreshness: fresh, Values: values[:4]})
	s.Example(exCodeListChange())
}

// exCodeListChange is the example change of UJP's code lists: the one the
// sandbox simulator's code-list fault makes.
func exCodeListChange() codelists.CodeListChange {
	lists := []ujpdoc.ListChange{
		{List: ujpdoc.CBDocumentTypes, Added: []ujpdoc.CodeEntry{}, Removed: []ujpdoc.CodeEntry{},
			Changed: []ujpdoc.CodeChange{{Code: "100", Name: "Општа Фактура", Changes: []ujpdoc.FieldChange{{Field: "name", Before: "Фактура", After: "Општа Фактура"}}}}},
		{List: ujpdoc.CBPaymentTypes, Added: []ujpdoc.CodeEntry{}, Removed: []ujpdoc.CodeEntry{{Code: "P13", Name: "Плаќање на рати"}}, Changed: []ujpdoc.CodeChange{}},
		{List: ujpdoc.CBTaxIndicators, Added: []ujpdoc.CodeEntry{{Code: "DDV-14-3-10",
			Name: "Промет на услуги кон лице што не е даночен обврзник согласно член 14 став 3 од ЗДДВ по повластена даночна стапка од 10%"}},
			Removed: []ujpdoc.CodeEntry{}, Changed: []ujpdoc.CodeChange{}},
		{List: ujpdoc.CBDocTypeTaxIndicators, Added: []ujpdoc.CodeEntry{{Code: "100/DDV-14-3-10",
			Name: "Промет на услуги кон лице што не е даночен обврзник согласно член 14 став 3 од ЗДДВ по повластена даночна стапка од 10%"}},
			Removed: []ujpdoc.CodeEntry{}, Changed: []ujpdoc.CodeChange{}},
	}
	return codelists.CodeListChange{ID: "clc_01jv8k2n3p4q5r6s7t8v9w0xyz", Object: "codelist_change", Environment: "sandbox",
		DetectedAt: exTime("06:00:00"), Summary: ujpdoc.Summary(lists, 10), Lists: lists}
}

// eventExample is the example body of a webhook (and event) of kind k:
// the resource's example as its data.object.
func eventExample(k webhooks.EventKind) any {
	var object any
	switch k.Resource {
	case webhooks.ResourceEInvoice:
		object = exEInvoiceOf()
	case webhooks.ResourceInboxDocument:
		object = exInboxDocument()
	case webhooks.ResourceSigningAgent:
		object = exAgentObject()
	case webhooks.ResourceArchiveExport:
		object = exArchiveObject()
	case webhooks.ResourceWebhookEndpoint:
		object = exEndpointObject()
	case webhooks.ResourceCodeListChange:
		object = exCodeListChange()
	case webhooks.ResourceReconciliation:
		object = exReconciliationObject()
	default:
		panic("einvoiceapi: no example object for the resource " + k.Resource)
	}
	e := exEventOf(k.Type, object)
	if k.Type == webhooks.EventWebhookTest {
		e.CompanyID = ""
	}
	return e
}
