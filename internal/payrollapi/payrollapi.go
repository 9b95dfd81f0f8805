// Package payrollapi is the HTTP API of the payroll and filing service:
// calculations (single, batch, convert), the statutory rate tables, and the
// filing files (МПИН, ПДД-ГИ, е-ППД). Handlers translate between HTTP and
// the payroll and filing domain packages and never compute anything
// themselves.
package payrollapi

import (
	"context"
	"log/slog"
	"runtime"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar/internal/auth"
	"github.com/denar-mk/denar/internal/httpx"
	"github.com/denar-mk/denar/internal/idempotency"
)

// Deps are what the payroll API needs from the rest of the program.
type Deps struct {
	Auth *auth.Store
	// Companies are the account's employer companies (X-Company-Id).
	Companies httpx.Companies
	// Idempotency keeps Idempotency-Key responses (the header is optional
	// here: calculations change nothing).
	Idempotency *idempotency.Keeper
	// Ready reports whether the store answers (/readyz).
	Ready     func(context.Context) error
	DocsURL   string
	Log       *slog.Logger
	RateLimit httpx.RateLimit
	// Now is the clock for "today" (the default effectiveDate); default time.Now.
	Now func() time.Time
	// HeavyConcurrency is how many file and batch requests run at once
	// (httpx.Options.HeavyConcurrency).
	HeavyConcurrency int
	// ServiceURLs are where each service listens (httpx.Options.ServiceURLs).
	ServiceURLs map[string]string
}

// MaxStringLength bounds every string of a request body that no schema
// bounds otherwise (httpx.Options.MaxStringLength).
const MaxStringLength = 1000

// New builds the payroll service with all its operations.
func New(d Deps) *httpx.Service {
	s := httpx.NewService(httpx.Options{
		Name:    auth.ServicePayroll,
		Title:   "denar payroll and filing API",
		Version: "1.0.0",
		Description: "Monthly payroll under North Macedonian law (gross to net and net to gross, date-effective " +
			"statutory rates) and the files employers upload to the tax authority (МПИН, ПДД-ГИ, е-ППД). " +
			"Money is always a string of denars.",
		Auth: d.Auth, Companies: d.Companies, Idempotency: d.Idempotency, Ready: d.Ready, DocsURL: d.DocsURL, Log: d.Log,
		RateLimit: d.RateLimit, HeavyConcurrency: d.HeavyConcurrency, ServiceURLs: d.ServiceURLs,
		Servers: []*huma.Server{{URL: "http://127.0.0.1:8080", Description: "A local denar serve (DENAR_PAYROLL_ADDR's default)."}},
		Tags: []*huma.Tag{
			{Name: "Calculations", Description: "Gross to net and net to gross for one employee, a batch, or a conversion."},
			{Name: "Files", Description: "The files employers upload to UJP: МПИН (XML and TXT), ПДД-ГИ and е-ППД, and МПИН validation."},
			{Name: "Rates", Description: "The statutory rates in force on a date, and their history."},
		},
		MaxStringLength: MaxStringLength,
	})
	h := &handlers{now: d.Now, buffers: make(chan *buffer, 2*runtime.GOMAXPROCS(0))}
	if h.now == nil {
		h.now = time.Now
	}
	h.registerCalculations(s)
	h.registerFiles(s)
	registerExamples(s)
	return s
}

type handlers struct {
	now     func() time.Time
	buffers chan *buffer // free list of response bodies of calculations
}
