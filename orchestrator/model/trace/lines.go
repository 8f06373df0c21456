package trace

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
)

// MaxLineBytes is the longest line any reader accepts. Trace lines are a few
// dozen bytes; a longer one means the input is not a trace (or a binary
// file), and refusing it early bounds the memory a bad input can take.
const MaxLineBytes = 4096

// lineReader reads a CSV-like text one line at a time with a bounded buffer,
// so a file of any size streams in constant memory. It implements the subset
// of RFC 4180 that traces need: comma-separated fields, optionally quoted
// with '"' and "" for a quote inside. A quoted field cannot span lines;
// supporting that would make a stray quote swallow the rest of the file
// into one line.
type lineReader struct {
	sc       *bufio.Scanner
	line     int // number of the line last returned
	consumed int64
	fields   [][]byte
	unquoted []byte
	bomDone  bool
}

func newLineReader(r io.Reader) *lineReader {
	sc := bufio.NewScanner(bufio.NewReaderSize(r, 64<<10))
	sc.Buffer(make([]byte, MaxLineBytes+2), MaxLineBytes+2) // +2 for "\r\n"
	return &lineReader{sc: sc, fields: make([][]byte, 0, 16)}
}

// next returns the next line that is not blank, without its line ending. The
// slice is valid until the following call. It returns io.EOF at the end.
func (lr *lineReader) next() ([]byte, error) {
	for lr.sc.Scan() {
		lr.line++
		b := lr.sc.Bytes()
		lr.consumed += int64(len(b)) + 1
		if !lr.bomDone {
			// Spreadsheet programs start UTF-8 CSV with a byte-order mark.
			b = bytes.TrimPrefix(b, []byte("\xef\xbb\xbf"))
			lr.bomDone = true
		}
		if len(b) > MaxLineBytes {
			return nil, &ParseError{Line: lr.line, Err: fmt.Errorf("longer than %d bytes", MaxLineBytes)}
		}
		if len(b) > 0 {
			return b, nil
		}
	}
	if err := lr.sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &ParseError{Line: lr.line + 1, Err: fmt.Errorf("longer than %d bytes", MaxLineBytes)}
		}
		return nil, err
	}
	return nil, io.EOF
}

// split cuts a line into fields. The slices alias the line or an internal
// buffer and are valid until the next call of next or split.
func (lr *lineReader) split(line []byte) ([][]byte, error) {
	f := lr.fields[:0]
	if bytes.IndexByte(line, '"') < 0 {
		// Fast path: nearly every line of a trace has no quotes.
		for {
			i := bytes.IndexByte(line, ',')
			if i < 0 {
				lr.fields = append(f, line)
				return lr.fields, nil
			}
			f = append(f, line[:i])
			line = line[i+1:]
		}
	}
	lr.unquoted = lr.unquoted[:0]
	for {
		if len(line) == 0 || line[0] != '"' {
			i := bytes.IndexByte(line, ',')
			field := line
			if i >= 0 {
				field = line[:i]
			}
			if bytes.IndexByte(field, '"') >= 0 {
				return nil, &ParseError{Line: lr.line, Err: fmt.Errorf("field %d: a quote inside an unquoted field (quote the whole field and double the quote)", len(f)+1)}
			}
			f = append(f, field)
			if i < 0 {
				lr.fields = f
				return f, nil
			}
			line = line[i+1:]
			continue
		}
		// Quoted field: copy it out with "" turned into ".
		start := len(lr.unquoted)
		i := 1
		for {
			j := bytes.IndexByte(line[i:], '"')
			if j < 0 {
				return nil, &ParseError{Line: lr.line, Err: fmt.Errorf("field %d: quote not closed (a field cannot span lines)", len(f)+1)}
			}
			lr.unquoted = append(lr.unquoted, line[i:i+j]...)
			i += j + 1
			if i < len(line) && line[i] == '"' {
				lr.unquoted = append(lr.unquoted, '"')
				i++
				continue
			}
			break
		}
		f = append(f, lr.unquoted[start:len(lr.unquoted):len(lr.unquoted)])
		switch {
		case i == len(line):
			lr.fields = f
			return f, nil
		case line[i] != ',':
			return nil, &ParseError{Line: lr.line, Err: fmt.Errorf("field %d: text after the closing quote", len(f))}
		}
		line = line[i+1:]
	}
}
