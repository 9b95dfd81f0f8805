package ujpsim

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
	"rsc.io/qr"
)

// renderPDF draws the simulator's rendering of a document: the parties, the
// lines and totals in Cyrillic, the EUID as text and the qr_link as a QR
// code, as UJP requires them on the printed document; its information names
// the document number (title) and the EUID (subject). The Go fonts cover
// Cyrillic, so no font files are needed at run time.
func renderPDF(d *Document, statusName string) ([]byte, error) {
	var req sendRequest
	if err := json.Unmarshal(d.Payload, &req); err != nil {
		return nil, fmt.Errorf("stored payload: %w", err)
	}
	doc := req.Document
	code, err := qr.Encode(d.QRLink, qr.M)
	if err != nil {
		return nil, fmt.Errorf("QR code: %w", err)
	}
	p := fpdf.New("P", "mm", "A4", "")
	p.SetCreator("denar ujp-sim", true)
	p.SetTitle("е-Фактура "+doc.Header.DocNumber, true)
	p.SetSubject("EUID "+d.EUID, true)
	p.AddUTF8FontFromBytes("go", "", goregular.TTF)
	p.AddUTF8FontFromBytes("go", "B", gobold.TTF)
	p.AddPage()

	p.SetFont("go", "B", 16)
	title := doc.Header.DocTypeName
	switch doc.Header.DocStorno {
	case stornoVoid:
		title = "СТОРНО – " + title
	case stornoCorrection:
		title = "КОРЕКЦИЈА – " + title
	}
	p.CellFormat(0, 9, title+" бр. "+doc.Header.DocNumber, "", 1, "L", false, 0, "")
	p.SetFont("go", "", 9)
	p.CellFormat(0, 5, "ПЕСОЧНИК (SANDBOX) – документот нема правно дејство", "", 1, "L", false, 0, "")
	p.CellFormat(0, 5, "Датум: "+doc.Header.DocDate+"   Датум на промет: "+deref(doc.Header.DocTurnoverDate)+"   Статус: "+d.Status+" "+statusName, "", 1, "L", false, 0, "")
	p.Ln(3)

	party := func(label, name, tin string, a address) {
		p.SetFont("go", "B", 10)
		p.CellFormat(0, 5, label, "", 1, "L", false, 0, "")
		p.SetFont("go", "", 10)
		p.CellFormat(0, 5, name, "", 1, "L", false, 0, "")
		p.CellFormat(0, 5, "ЕДБ: "+tin, "", 1, "L", false, 0, "")
		p.CellFormat(0, 5, fmt.Sprintf("%s %s, %s %s", a.StreetAddress, a.StreetNumber, a.PostalCode, a.City), "", 1, "L", false, 0, "")
		p.Ln(2)
	}
	party("Продавач", doc.Seller.SellerName, doc.Seller.SellerTin, doc.Seller.SellerAddress)
	party("Купувач", doc.Buyer.BuyerName, doc.Buyer.BuyerTin, doc.Buyer.BuyerAddress)

	widths := []float64{10, 70, 20, 25, 15, 25, 25}
	p.SetFont("go", "B", 8)
	for i, h := range []string{"Р.бр.", "Опис", "Количина", "Цена без ДДВ", "ДДВ %", "ДДВ", "Вкупно"} {
		p.CellFormat(widths[i], 6, h, "1", 0, "C", false, 0, "")
	}
	p.Ln(-1)
	p.SetFont("go", "", 8)
	for _, it := range doc.DocItems {
		cells := []string{fmt.Sprint(it.DocItemLineNo), it.DocItemDesc, it.DocItemQty.V.String(), it.DocItemUnitPriceWoVat.V.StringFixed(2),
			it.DocItemVat.V.String(), it.DocItemTotalVat.V.StringFixed(2), it.DocItemTotalPriceWVat.V.StringFixed(2)}
		for i, c := range cells {
			align := "R"
			if i == 1 {
				align = "L"
			}
			p.CellFormat(widths[i], 6, c, "1", 0, align, false, 0, "")
		}
		p.Ln(-1)
	}
	p.Ln(3)
	cur := deref(doc.DocPayment.DocCurrencyCode)
	if cur == "" {
		cur = "MKD"
	}
	t := doc.DocTotals
	p.SetFont("go", "", 10)
	for _, row := range [][2]string{{"Износ без ДДВ", t.DocNetAmountDisc.V.StringFixed(2)}, {"ДДВ", t.DocVatAmount.V.StringFixed(2)},
		{"Вкупно за плаќање", t.DocGrossAmountR.V.StringFixed(2)}, {"Аванс", t.DocAvansAmount.V.StringFixed(2)}, {"Преостанато", t.DocFinalAmount.V.StringFixed(2)}} {
		p.CellFormat(140, 6, row[0], "", 0, "R", false, 0, "")
		p.CellFormat(50, 6, row[1]+" "+cur, "", 1, "R", false, 0, "")
	}
	p.Ln(6)
	y := p.GetY()
	p.RegisterImageOptionsReader("qr", fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(code.PNG()))
	p.ImageOptions("qr", 10, y, 35, 35, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
	p.SetXY(50, y+5)
	p.SetFont("go", "B", 10)
	p.CellFormat(0, 6, "EUID: "+d.EUID, "", 2, "L", false, 0, "")
	p.SetFont("go", "", 8)
	p.CellFormat(0, 5, d.QRLink, "", 2, "L", false, 0, "")
	p.CellFormat(0, 5, "Примено: "+FormatTimestamp(d.ReceivedAt), "", 2, "L", false, 0, "")

	var buf bytes.Buffer
	if err := p.Output(&buf); err != nil {
		return nil, fmt.Errorf("write PDF: %w", err)
	}
	return buf.Bytes(), nil
}
