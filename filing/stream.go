package filing

import (
	"bytes"
	"io"
	"strconv"
	"strings"

	"github.com/denar-mk/denar"
)

// File is a generated file, written out by WriteTo: it is held as what it
// is written from (an МПИН file's employees, a form's rows), never as its
// bytes, so that answering a request of the largest admitted size takes a
// bounded amount of memory, whatever the size of the file.
type File struct {
	// Name is the file's name for Content-Disposition: UJP's name for an
	// МПИН file (FileName), the form's for ПДД-ГИ and е-ППД.
	Name  string
	write func(io.Writer) error
}

// WriteTo writes the file to w. It fails only when w does.
func (f *File) WriteTo(w io.Writer) (int64, error) {
	cw := &countingWriter{w: w}
	err := f.write(cw)
	return cw.n, err
}

// Bytes is the whole file.
func (f *File) Bytes() []byte {
	var b bytes.Buffer
	_, _ = f.WriteTo(&b)
	return b.Bytes()
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ValidateFrom is DecodeMpinFrom and then Validate, without holding the
// records: each is checked as it is decoded and then dropped. Its result
// and errors are theirs, byte for byte.
func ValidateFrom(r io.Reader, st Statutory) (Result, error) {
	rd, err := readMpin(r, st, buildOptions{from: parallelMin})
	if err != nil {
		return Result{}, err
	}
	return rd.m.result(), nil
}

// MpinXMLFrom is DecodeMpinFrom and then MpinXML, the records worked out
// as they are decoded: the file is held as its employees and written when
// the File is.
func MpinXMLFrom(r io.Reader, st Statutory) (*File, error) {
	rd, d, err := mpinFileFrom(r, st, false)
	if err != nil {
		return nil, err
	}
	head := xmlHead(d)
	return &File{Name: FileName(&rd.h.Company, &rd.h.Batch, "xml"), write: func(w io.Writer) error { return writeXML(w, d, head) }}, nil
}

// MpinTXTFrom is DecodeMpinFrom and then MpinTXT, as MpinXMLFrom is.
func MpinTXTFrom(r io.Reader, st Statutory) (*File, error) {
	rd, d, err := mpinFileFrom(r, st, false)
	if err != nil {
		return nil, err
	}
	if err := txtFits(d, "records", true); err != nil {
		return nil, err
	}
	return &File{Name: FileName(&rd.h.Company, &rd.h.Batch, "txt"), write: func(w io.Writer) error { return writeTXT(w, d) }}, nil
}

// CombinedTXTFrom is DecodeCombinedFrom and then CombinedTXT, as
// MpinXMLFrom is.
func CombinedTXTFrom(r io.Reader, st Statutory) (*File, error) {
	rd, d, err := mpinFileFrom(r, st, true)
	if err != nil {
		return nil, err
	}
	if err := txtFits(d, "batches", false); err != nil {
		return nil, err
	}
	return &File{Name: FileName(&rd.h.Company, &rd.h.Batch, "txt"), write: func(w io.Writer) error { return writeTXT(w, d) }}, nil
}

func mpinFileFrom(r io.Reader, st Statutory, combined bool) (*mpinReader, *doc, error) {
	rd, err := readMpin(r, st, buildOptions{file: true, ranges: true, combined: combined, from: parallelMin})
	if err != nil {
		return nil, nil, err
	}
	d, err := rd.m.doc(rd.h.Force)
	return rd, d, err
}

// mpinHead is what an МПИН or combined request holds besides its records.
type mpinHead struct {
	Company Company
	Batch   Batch
	Force   bool
}

// runLength is how many records are decoded before they are worked on
// together (on every core) and dropped: about 2 MB of records.
const runLength = 1024

// mpinReader reads an МПИН request (or a combined one) from its JSON as it
// arrives: the company, the batch and force are decoded whole, the records
// one at a time into a run of runLength that is handed to the build (or,
// to decode a request in memory, kept). A request that names its records
// before its company or batch has them decoded and shaped as they come,
// in order, their bytes kept, and worked out from those bytes once the
// company and batch are known.
type mpinReader struct {
	dec streamDecoder
	tap *tapReader
	st  Statutory
	o   buildOptions
	h   mpinHead

	company, batch bool // decoded
	m              *mpinBuild
	shapeFE        denar.FieldErrors
	batches        int  // combined: how many batches there are
	records        bool // the records (or batches) member is there, not null
	run            []Record

	keep    bool // keep the records (DecodeMpinFrom) instead of building
	kept    []Record
	keptB   []BatchRecords
	tapped  []byte // the records' bytes, when they came before the company or batch
	replay  bool   // the records are being read again from tapped
	working bool   // records go to m
}

// readMpin reads the request from r and works its records out with the
// build o describes. Its errors are DecodeMpinFrom's (DecodeCombinedFrom's)
// and then the build's bounds.
func readMpin(r io.Reader, st Statutory, o buildOptions) (*mpinReader, error) {
	rd := &mpinReader{st: st, o: o}
	if err := rd.read(r); err != nil {
		return nil, err
	}
	if err := rd.m.fieldErrors(); err != nil {
		return nil, err
	}
	return rd, nil
}

// read decodes the request; after it, rd.m has every record.
func (rd *mpinReader) read(r io.Reader) error {
	rd.tap = &tapReader{r: r}
	rd.dec = newStreamDecoder(rd.tap)
	rd.run = make([]Record, 0, runLength)
	member := "records"
	if rd.o.combined {
		member = "batches"
	}
	err := rd.dec.object("", func(key string) error {
		switch {
		case strings.EqualFold(key, "company"):
			rd.company = true
			return rd.dec.value("company", &rd.h.Company)
		case strings.EqualFold(key, "batch"):
			rd.batch = true
			return rd.dec.value("batch", &rd.h.Batch)
		case strings.EqualFold(key, "force"):
			return rd.dec.value("force", &rd.h.Force)
		case strings.EqualFold(key, member):
			if !rd.keep && rd.company && rd.batch {
				rd.start()
				return rd.body(true)
			}
			if !rd.keep {
				rd.tap.start(rd.dec.Buffered())
				defer func() { rd.tapped = rd.tap.stop() }()
			}
			return rd.body(true)
		}
		return rd.dec.unknown("", key)
	})
	if err == nil {
		err = rd.dec.end()
	}
	if err != nil {
		return err
	}
	var fe denar.FieldErrors
	shapeCompany(&fe, "company", &rd.h.Company)
	shapeBatch(&fe, "batch", &rd.h.Batch)
	if rd.o.combined {
		if rd.batches == 0 {
			fe.Add("batches", "at least one batch is required")
		}
	} else if !rd.records {
		fe.Add("records", "is required")
	}
	if fe = append(fe, rd.shapeFE...); len(fe) > 0 {
		return fe.Err()
	}
	if rd.keep || rd.m != nil {
		return nil
	}
	// The records came before the company or the batch: read them again.
	rd.start()
	rd.replay = true
	rd.dec = newStreamDecoder(bytes.NewReader(colonTrimmed(rd.tapped)))
	rd.tapped = nil
	return rd.body(false)
}

// start begins the build, the company and batch known.
func (rd *mpinReader) start() {
	rd.m = newMpinBuild(&rd.h.Company, &rd.h.Batch, rd.st, rd.o)
	rd.working = true
}

// body reads the records (or batches); shape checks them as decoding does
// (not when they are read again).
func (rd *mpinReader) body(shape bool) error {
	if !rd.o.combined {
		isNull, err := rd.recordList("records", shape)
		rd.records = !isNull
		if rd.keep && !isNull && rd.kept == nil {
			rd.kept = []Record{}
		}
		return err
	}
	isNull, err := rd.dec.array("batches", func(i int) error {
		p := "batches[" + strconv.Itoa(i) + "]"
		if rd.working {
			rd.m.beginBatch(i)
		}
		if rd.keep {
			rd.keptB = append(rd.keptB, BatchRecords{})
		}
		present := false
		err := rd.dec.object(p, func(key string) error {
			if !strings.EqualFold(key, "records") {
				return rd.dec.unknown(p, key)
			}
			isNull, err := rd.recordList(p+".records", shape)
			present = !isNull
			if rd.keep && present {
				if rd.kept == nil {
					rd.kept = []Record{}
				}
				rd.keptB[i].Records, rd.kept = rd.kept, nil
			}
			return err
		})
		if err == nil && !present && shape {
			rd.shapeFE.Add(p+".records", "is required")
		}
		rd.batches = i + 1
		return err
	})
	rd.records = !isNull
	return err
}

// recordList reads the array of records at path, a run at a time.
func (rd *mpinReader) recordList(path string, shape bool) (isNull bool, err error) {
	rd.run = rd.run[:0]
	isNull, err = rd.dec.array(path, func(i int) error {
		if len(rd.run) == cap(rd.run) {
			rd.flush()
		}
		rd.run = append(rd.run, Record{})
		r := &rd.run[len(rd.run)-1]
		if err := rd.dec.value(path+"["+strconv.Itoa(i)+"]", r); err != nil {
			return err
		}
		if shape {
			shapeRecord(&rd.shapeFE, path, i, r)
		}
		return nil
	})
	if err == nil {
		rd.flush()
	}
	return isNull, err
}

// flush hands the run of records on and empties it.
func (rd *mpinReader) flush() {
	switch {
	case rd.keep:
		rd.kept = append(rd.kept, rd.run...)
	case rd.working && len(rd.shapeFE) == 0:
		// A record refused by its shape makes the request's answer those
		// errors: the checks of the others would not be seen.
		rd.m.add(rd.run)
	}
	clear(rd.run)
	rd.run = rd.run[:0]
}

// colonTrimmed is b after the white space and the colon that separate a
// member's name from its value.
func colonTrimmed(b []byte) []byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) > 0 && b[0] == ':' {
		b = b[1:]
	}
	return b
}

// tapReader keeps a copy of what is read through it while started.
type tapReader struct {
	r   io.Reader
	buf *bytes.Buffer
}

func (t *tapReader) Read(p []byte) (int, error) {
	n, err := t.r.Read(p)
	if t.buf != nil {
		t.buf.Write(p[:n])
	}
	return n, err
}

// start keeps what is read from now on, after buffered, which a decoder
// already read and has not used.
func (t *tapReader) start(buffered io.Reader) {
	t.buf = &bytes.Buffer{}
	_, _ = io.Copy(t.buf, buffered)
}

// stop ends the copy and returns it.
func (t *tapReader) stop() []byte {
	b := t.buf.Bytes()
	t.buf = nil
	return b
}
