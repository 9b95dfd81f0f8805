package ujpsim

import (
	"archive/zip"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/denar-mk/denar/internal/store/dbq"
)

// The signed reads of api-specification.txt:834-1407: a seller reads its
// sales documents, a buyer its purchase documents (by X-EDB).

// own finds a document the caller may read: as seller for sales calls, as
// buyer for purchase calls.
func (s *Sim) own(c *call, euid string, purchase bool) (Document, *simError) {
	notFound := &simError{status: 404, code: "E4008", msg: "The requested resource could not be found", prop: "euid"}
	d, err := s.document(c.r.Context(), s.db.Reader(), euid)
	if errors.Is(err, ErrNotFound) {
		return Document{}, notFound
	}
	if err != nil {
		return Document{}, s.internal("document", err)
	}
	if (!purchase && d.SellerTin != c.edb) || (purchase && d.BuyerTin != c.edb) {
		return Document{}, notFound
	}
	return d, nil
}

func (s *Sim) statusOf(euid, status, seller, buyer string, payload []byte) docStatus {
	var req sendRequest
	_ = json.Unmarshal(payload, &req)
	h, t := req.Document.Header, req.Document.DocTotals
	st := docStatus{EUID: euid, StatusCode: status, StatusName: s.lists.statusName(status), DocNumber: h.DocNumber, DocDate: h.DocDate,
		DocDeliveryDate: deref(h.DocDeliveryDate), DocNetAmount: t.DocNetAmount, DocVatAmount: t.DocVatAmount, DocGrossAmountR: t.DocGrossAmountR,
		DocAvansAmount: t.DocAvansAmount, DocFinalAmount: t.DocFinalAmount, SellerTin: seller, BuyerTin: buyer}
	if req.Document.Sender != nil {
		st.SenderTin = req.Document.Sender.SenderTin
	}
	for _, n := range []*Num{&st.DocNetAmount, &st.DocVatAmount, &st.DocGrossAmountR, &st.DocAvansAmount, &st.DocFinalAmount} {
		n.Set = true
	}
	return st
}

func (s *Sim) currentStatus(purchase bool) func(http.ResponseWriter, *call) (map[string]any, *simError) {
	return func(_ http.ResponseWriter, c *call) (map[string]any, *simError) {
		var req euidRequest
		if e := decodeInto(c, &req); e != nil {
			return nil, e
		}
		if err := s.sweep(c.r.Context(), c.now); err != nil {
			return nil, s.internal("sweep", err)
		}
		d, e := s.own(c, req.EUID, purchase)
		if e != nil {
			return nil, e
		}
		return map[string]any{"docStatus": s.statusOf(d.EUID, d.Status, d.SellerTin, d.BuyerTin, d.Payload)}, nil
	}
}

func (s *Sim) statusHistory(_ http.ResponseWriter, c *call) (map[string]any, *simError) {
	var req statusHistoryRequest
	if e := decodeInto(c, &req); e != nil {
		return nil, e
	}
	if err := s.sweep(c.r.Context(), c.now); err != nil {
		return nil, s.internal("sweep", err)
	}
	d, e := s.own(c, req.EUID, false)
	if e != nil {
		return nil, e
	}
	var from time.Time
	if req.DateFrom != nil && *req.DateFrom != "" {
		var ok bool
		if from, ok = dateOrTimestamp(*req.DateFrom); !ok {
			return nil, &simError{status: 400, code: "E4010", msg: "Invalid value type provided in request", prop: "dateFrom"}
		}
	}
	out := []StatusChange{}
	for _, h := range d.History {
		if t, _ := parseTimestamp(h.Timestamp); !t.Before(from) {
			out = append(out, h)
		}
	}
	return map[string]any{"statusHistory": out}, nil
}

func dateOrTimestamp(v string) (time.Time, bool) {
	if t, ok := parseDate(v); ok {
		return t, true
	}
	t, err := parseTimestamp(v)
	return t, err == nil
}

// endOfFeed stands for "no upper bound" in the change-feed queries.
var endOfFeed = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// changes serves the change feeds. A date (YYYY-MM-DD) asks for that Skopje
// day's changes (api-specification.txt:1164); a timestamp asks for every
// change at or after it (api-specification.txt:947).
func (s *Sim) changes(purchase bool) func(http.ResponseWriter, *call) (map[string]any, *simError) {
	return func(_ http.ResponseWriter, c *call) (map[string]any, *simError) {
		var req changesRequest
		if e := decodeInto(c, &req); e != nil {
			return nil, e
		}
		from, ok := dateOrTimestamp(req.Date)
		if !ok {
			return nil, &simError{status: 400, code: "E4010", msg: "Invalid value type provided in request", prop: "date"}
		}
		to := endOfFeed
		if len(req.Date) == len(time.DateOnly) {
			to = from.AddDate(0, 0, 1)
		}
		ctx := c.r.Context()
		if err := s.sweep(ctx, c.now); err != nil {
			return nil, s.internal("sweep", err)
		}
		var rows []dbq.UjpsimHistory
		var err error
		if purchase {
			rows, err = s.db.Reader().UJPSimPurchaseChanges(ctx, dbq.UJPSimPurchaseChangesParams{BuyerTin: c.edb, FromAt: dbTime(from), UntilAt: dbTime(to)})
		} else {
			rows, err = s.db.Reader().UJPSimSalesChanges(ctx, dbq.UJPSimSalesChangesParams{SellerTin: c.edb, FromAt: dbTime(from), UntilAt: dbTime(to)})
		}
		if err != nil {
			return nil, s.internal("changes", err)
		}
		out := make([]StatusChange, 0, len(rows))
		for _, h := range rows {
			ch, err := toChange(h)
			if err != nil {
				return nil, s.internal("changes", err)
			}
			out = append(out, ch)
		}
		return map[string]any{"statusHistory": out}, nil
	}
}

// dateRange reads dateFrom and dateTo (YYYY-MM-DD), at most one month
// apart (E4014, error-codes.txt:120), as the Skopje days [from, to+1).
func dateRange(c *call) (time.Time, time.Time, *simError) {
	var req dateRangeRequest
	if e := decodeInto(c, &req); e != nil {
		return time.Time{}, time.Time{}, e
	}
	from, ok1 := parseDate(req.DateFrom)
	to, ok2 := parseDate(req.DateTo)
	if !ok1 || !ok2 || to.Before(from) {
		return time.Time{}, time.Time{}, &simError{status: 400, code: "E4010", msg: "Invalid value type provided in request: dateFrom ≤ dateTo, both YYYY-MM-DD", prop: "dateFrom"}
	}
	if to.After(from.AddDate(0, 1, 0)) {
		return time.Time{}, time.Time{}, &simError{status: 400, code: "E4014", msg: "The allowed date range is 1 month.", prop: "dateTo"}
	}
	return from, to.AddDate(0, 0, 1), nil
}

// inRange lists the caller's documents received in [from, to).
func (s *Sim) inRange(c *call, purchase bool, from, to time.Time) ([]dbq.UjpsimDocument, *simError) {
	ctx := c.r.Context()
	if err := s.sweep(ctx, c.now); err != nil {
		return nil, s.internal("sweep", err)
	}
	var rows []dbq.UjpsimDocument
	var err error
	if purchase {
		rows, err = s.db.Reader().UJPSimPurchaseDocuments(ctx, dbq.UJPSimPurchaseDocumentsParams{BuyerTin: c.edb, FromAt: dbTime(from), UntilAt: dbTime(to)})
	} else {
		rows, err = s.db.Reader().UJPSimSalesDocuments(ctx, dbq.UJPSimSalesDocumentsParams{SellerTin: c.edb, FromAt: dbTime(from), UntilAt: dbTime(to)})
	}
	if err != nil {
		return nil, s.internal("documents", err)
	}
	return rows, nil
}

func (s *Sim) ids(purchase bool) func(http.ResponseWriter, *call) (map[string]any, *simError) {
	return func(_ http.ResponseWriter, c *call) (map[string]any, *simError) {
		from, to, e := dateRange(c)
		if e != nil {
			return nil, e
		}
		rows, e := s.inRange(c, purchase, from, to)
		if e != nil {
			return nil, e
		}
		out := make([]string, 0, len(rows))
		for _, r := range rows {
			out = append(out, r.Euid)
		}
		return map[string]any{"euids": out}, nil
	}
}

func (s *Sim) invoicesStatus(purchase bool) func(http.ResponseWriter, *call) (map[string]any, *simError) {
	return func(_ http.ResponseWriter, c *call) (map[string]any, *simError) {
		from, to, e := dateRange(c)
		if e != nil {
			return nil, e
		}
		rows, e := s.inRange(c, purchase, from, to)
		if e != nil {
			return nil, e
		}
		out := make([]docStatus, 0, len(rows))
		for _, r := range rows {
			out = append(out, s.statusOf(r.Euid, r.Status, r.SellerTin, r.BuyerTin, r.Payload))
		}
		return map[string]any{"invoices": out}, nil
	}
}

func (s *Sim) payload(purchase bool) func(http.ResponseWriter, *call) (map[string]any, *simError) {
	return func(_ http.ResponseWriter, c *call) (map[string]any, *simError) {
		var req euidRequest
		if e := decodeInto(c, &req); e != nil {
			return nil, e
		}
		d, e := s.own(c, req.EUID, purchase)
		if e != nil {
			return nil, e
		}
		return map[string]any{"payload": string(d.Payload)}, nil
	}
}

// maxPayloadList bounds the EUIDs of one payload/list call (UJP publishes
// no limit; a hundred documents stay a few megabytes).
const maxPayloadList = 100

// payloadList answers the payloads of the caller's documents among the
// EUIDs asked for; others are left out, as a list read does.
func (s *Sim) payloadList(purchase bool) func(http.ResponseWriter, *call) (map[string]any, *simError) {
	return func(_ http.ResponseWriter, c *call) (map[string]any, *simError) {
		var req euidsRequest
		if e := decodeInto(c, &req); e != nil {
			return nil, e
		}
		if len(req.EUIDs) == 0 || len(req.EUIDs) > maxPayloadList {
			return nil, &simError{status: 400, code: "E4010", msg: fmt.Sprintf("Invalid value type provided in request: 1 to %d euids", maxPayloadList), prop: "euids"}
		}
		out := make([]payloadEntry, 0, len(req.EUIDs))
		for _, euid := range req.EUIDs {
			d, e := s.own(c, euid, purchase)
			if e != nil && e.code == "E4008" {
				continue
			}
			if e != nil {
				return nil, e
			}
			out = append(out, payloadEntry{EUID: d.EUID, Payload: string(d.Payload)})
		}
		return map[string]any{"invoices": out}, nil
	}
}

func (s *Sim) payloadRange(purchase bool) func(http.ResponseWriter, *call) (map[string]any, *simError) {
	return func(_ http.ResponseWriter, c *call) (map[string]any, *simError) {
		from, to, e := dateRange(c)
		if e != nil {
			return nil, e
		}
		rows, e := s.inRange(c, purchase, from, to)
		if e != nil {
			return nil, e
		}
		out := make([]payloadEntry, 0, len(rows))
		for _, r := range rows {
			out = append(out, payloadEntry{EUID: r.Euid, Payload: string(r.Payload)})
		}
		return map[string]any{"invoices": out}, nil
	}
}

// acceptReject is the buyer's decision (api-specification.txt:807-833).
func (s *Sim) acceptReject(_ http.ResponseWriter, c *call) (map[string]any, *simError) {
	var req acceptRejectRequest
	if e := decodeInto(c, &req); e != nil {
		return nil, e
	}
	if req.IsAccepted == nil {
		return nil, &simError{status: 400, code: "E4019", msg: "Missing required fields: isAccepted", prop: "isAccepted"}
	}
	ctx := c.r.Context()
	if err := s.sweep(ctx, c.now); err != nil {
		return nil, s.internal("sweep", err)
	}
	if err := s.decide(ctx, c.now, req.EUID, c.edb, *req.IsAccepted, deref(req.RejectReasonCode), deref(req.Comment)); err != nil {
		return nil, s.asSimError("decide", err)
	}
	return map[string]any{}, nil
}

func (s *Sim) pdf(purchase bool) func(http.ResponseWriter, *call) (map[string]any, *simError) {
	return func(_ http.ResponseWriter, c *call) (map[string]any, *simError) {
		var req euidRequest
		if e := decodeInto(c, &req); e != nil {
			return nil, e
		}
		d, e := s.own(c, req.EUID, purchase)
		if e != nil {
			return nil, e
		}
		b, err := renderPDF(&d, s.lists.statusName(d.Status))
		if err != nil {
			return nil, s.internal("render PDF", err)
		}
		return map[string]any{"pdfBase64": base64.StdEncoding.EncodeToString(b)}, nil
	}
}

// asic answers POST /documents/invoice with an ASiC-S container
// (api-specification.txt:1394-1407): the mimetype entry first, stored,
// then the document's payload. The caller may be its seller or its buyer.
func (s *Sim) asic(w http.ResponseWriter, c *call) (map[string]any, *simError) {
	var req euidRequest
	if e := decodeInto(c, &req); e != nil {
		return nil, e
	}
	d, e := s.own(c, req.EUID, false)
	if e != nil {
		if d, e = s.own(c, req.EUID, true); e != nil {
			return nil, e
		}
	}
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	mt, err := z.CreateHeader(&zip.FileHeader{Name: "mimetype", Method: zip.Store})
	if err == nil {
		_, err = mt.Write([]byte("application/vnd.etsi.asic-s+zip"))
	}
	if err == nil {
		var f interface{ Write([]byte) (int, error) }
		if f, err = z.Create(d.EUID + ".json"); err == nil {
			_, err = f.Write(d.Payload)
		}
	}
	if err == nil {
		err = z.Close()
	}
	if err != nil {
		return nil, s.internal("ASiC", err)
	}
	w.Header().Set("Content-Type", "application/vnd.etsi.asic-s+zip")
	w.Header().Set("Content-Disposition", `attachment; filename="`+d.EUID+`.asics"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
	return nil, nil
}
