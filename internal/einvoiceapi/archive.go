package einvoiceapi

import (
	"context"
	"io"
	"net/http"
	"strconv"

	"github.com/danielgtaylor/huma/v2"

	"github.com/denar-mk/denar/internal/einvoicing/archive"
	"github.com/denar-mk/denar/internal/httpx"
)

// ArchiveExportBody is the body of POST /v1/archive-exports.
type ArchiveExportBody struct {
	CompanyID string `json:"companyId" minLength:"1" maxLength:"100" doc:"The company whose documents to export."`
	From      string `json:"from" format:"date" doc:"First day, YYYY-MM-DD (Europe/Skopje), inclusive."`
	To        string `json:"to" format:"date" doc:"Last day, inclusive; less than one year after from."`
}

type createArchiveInput struct {
	Body ArchiveExportBody
}

type archiveIDInput struct {
	ID string `path:"id" maxLength:"100" example:"arx_01jv8k2n3p4q5r6s7t8v9w0xyz" doc:"The archive export's id (arx_…), as POST /v1/archive-exports answered it."`
}

type archiveOutput struct {
	Location string `header:"Location"`
	Body     archive.ArchiveExport
}

// archiveScope reads every document of a company, so it takes the scope
// that reads them.
const archiveScope = "einvoices:read"

func (h *handlers) registerArchive(s *httpx.Service) {
	tags := []string{"Archive exports"}
	httpx.Register(s, huma.Operation{
		OperationID: "createArchiveExport", Method: http.MethodPost, Path: "/v1/archive-exports",
		Summary: "Export a company's documents as a zip", Tags: tags, DefaultStatus: http.StatusAccepted,
		Description: "202 with the export pending; a job builds the zip and moves it to ready (event archive.export_ready) or " +
			"failed (archive.export_failed). The zip holds, per document UJP assigned an EUID to (sent) or that arrived in the " +
			"inbox (received) on a day of [from, to] (Europe/Skopje): document.json exactly as sent to or received from UJP, " +
			"signature.jws (the JWS that signed it), ujp.pdf when UJP's PDF was fetched, status-history.json, and manifest.json " +
			"listing every other file with its size and SHA-256. It shows the data as of the export's creation (asOf). A range " +
			"of one year or more, or to before from: 422.",
	}, httpx.Spec{Scope: archiveScope}, func(ctx context.Context, in *createArchiveInput) (*archiveOutput, error) {
		a, err := h.archive.CreateArchiveExport(ctx, caller(ctx), archive.CreateArchiveExport{CompanyID: in.Body.CompanyID,
			From: in.Body.From, To: in.Body.To})
		if err != nil {
			return nil, err
		}
		return &archiveOutput{Location: a.Path(), Body: a}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "getArchiveExport", Method: http.MethodGet, Path: "/v1/archive-exports/{id}",
		Summary: "Get an archive export", Tags: tags,
		Description: "The export's state; once ready, its download link (GET /v1/archive-exports/{id}/download), or its failure.",
	}, httpx.Spec{Scope: archiveScope}, func(ctx context.Context, in *archiveIDInput) (*archiveOutput, error) {
		a, err := h.archive.ArchiveExport(ctx, httpx.PrincipalFrom(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &archiveOutput{Body: a}, nil
	})
	httpx.Register(s, huma.Operation{
		OperationID: "downloadArchiveExport", Method: http.MethodGet, Path: "/v1/archive-exports/{id}/download",
		Summary: "Download an archive export's zip", Tags: tags,
		Description: "Streams the zip (application/zip) of a ready export; its SHA-256 is the export's sha256. Pending or " +
			"failed: 409 archive_export_not_ready; past expiresAt: 410 archive_export_expired (then 404 once deleted).",
		Responses: map[string]*huma.Response{"200": {Description: "The zip.", Content: map[string]*huma.MediaType{
			"application/zip": {Schema: &huma.Schema{Type: "string", Format: "binary"}}}}},
	}, httpx.Spec{Scope: archiveScope}, func(ctx context.Context, in *archiveIDInput) (*huma.StreamResponse, error) {
		d, err := h.archive.OpenArchive(ctx, httpx.PrincipalFrom(ctx), in.ID)
		if err != nil {
			return nil, err
		}
		return &huma.StreamResponse{Body: func(hc huma.Context) {
			defer d.Body.Close()
			hc.SetHeader("Content-Type", "application/zip")
			hc.SetHeader("Content-Length", strconv.FormatInt(d.Size, 10))
			hc.SetHeader("Content-Disposition", `attachment; filename="`+d.Export.ID+`.zip"`)
			hc.SetStatus(http.StatusOK)
			if _, err := io.Copy(hc.BodyWriter(), d.Body); err != nil {
				h.deps.Log.Warn("archive download cut short", "export", d.Export.ID, "err", err)
			}
		}}, nil
	})
}
